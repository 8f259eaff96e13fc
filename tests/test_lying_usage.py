"""A provider whose usage reports lie (issue "Found from outside", item 8).

Figures that are not token counts (negative, huge, a string, a bool) are unknown at the adapter
edge, through the real SDKs against agent_cli/testing/fakeserver, with one note said once; a report far below
the local count does not lower the count (so compaction stays on), and that is said once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import Completion, Request, ToolSpec
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.openai_responses import OpenAIResponsesProvider
from agent_cli.providers.sdk_client import SDKProvider
from agent_cli.providers.usage import MAX_FIGURE, token_count
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.tokens.counter import TokenCounter
from tests.e2e import agent_env, run_agent, stream_events

REQUEST = Request("You are terse.", (Message.user("hi"),), (), max_tokens=64)
MAKERS: dict[str, Callable[[FakeModelServer, bool], SDKProvider]] = {
    "anthropic": lambda s, streaming: AnthropicProvider(
        "claude-opus-5-5", api_key="k", base_url=s.anthropic_base_url, streaming=streaming
    ),
    "chat": lambda s, streaming: OpenAIProvider(
        "gpt-4o", api_key="k", base_url=s.openai_base_url, streaming=streaming
    ),
    "responses": lambda s, streaming: OpenAIResponsesProvider(
        "gpt-4o", api_key="k", base_url=s.openai_base_url, streaming=streaming
    ),
}
ODD: list[Any] = [-5, 10**30, "1200", True, 3.5, None]


@pytest.mark.parametrize(
    ("value", "count"),
    [(0, 0), (12, 12), (12.0, 12), (MAX_FIGURE, MAX_FIGURE), *((v, None) for v in ODD[:-1])],
)
def test_a_token_count_is_a_sane_non_negative_int(value: object, count: int | None) -> None:
    assert token_count(value) == count


def _completion(server: FakeModelServer, provider: SDKProvider) -> Completion:
    done = list(provider.stream(REQUEST))[-1]
    assert isinstance(done, Completion)
    return done


@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("wire", sorted(MAKERS))
@pytest.mark.parametrize("odd", [-5, 10**30, "lots"], ids=["negative", "huge", "string"])
def test_figures_that_are_not_counts_are_unknown_and_said_once(wire: str, streaming: bool, odd: Any) -> None:
    with FakeModelServer() as server:
        server.queue(*[Reply("fine", usage={"input_tokens": odd, "output_tokens": odd})] * 2)
        provider = MAKERS[wire](server, streaming)
        first, second = _completion(server, provider), _completion(server, provider)
    for done in (first, second):
        assert done.message.text == "fine"
        assert done.usage.input_tokens >= 0 and done.usage.output_tokens == 0
        assert done.usage.prompt_tokens < 10**9  # was -5, 10**30 summed as they came, or a TypeError
    assert len(first.notes) == 1 and "not token counts" in first.notes[0], first.notes
    assert second.notes == ()  # said once per provider


SYSTEM = "You are a coding agent."
TOOLS = (ToolSpec("read_file", "Read a file", {"type": "object"}),)


def _history(n: int) -> list[Message]:
    return [Message.user(f"message {i}: " + "the parser reads tokens one at a time. " * 40) for i in range(n)]


def test_a_report_far_below_the_local_count_does_not_lower_it() -> None:
    c = TokenCounter("claude-opus-5-5", tokenizer_for("claude-opus-5-5", "anthropic"))
    sent = _history(8)
    local = c.count_request(SYSTEM, TOOLS, sent)
    assert local > 2_000
    used = c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=3))
    assert used == local
    grown = [*sent, Message.user("and the lexer")]
    assert c.count_request(SYSTEM, TOOLS, grown) >= local  # was 3 + the appended message
    assert c.ratio == pytest.approx(1.625)  # nothing learned from it


def test_a_plausible_report_is_believed() -> None:
    c = TokenCounter("claude-opus-5-5", tokenizer_for("claude-opus-5-5", "anthropic"))
    sent = _history(8)
    local = c.count_request(SYSTEM, TOOLS, sent)
    assert c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=local * 3 // 4)) is None
    assert c.count_request(SYSTEM, TOOLS, sent) == local * 3 // 4


def test_the_context_shown_is_the_count_in_use_not_the_lie(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the parser reads tokens one at a time\n" * 300)
    lie = {"input_tokens": 40, "cache_read_tokens": 0, "cache_write_tokens": 0}
    with FakeModelServer() as server:
        server.queue(
            Reply("Reading.", tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})], usage=lie)
        )
        server.default = Reply("done", usage=lie)
        args = ["-p", "read notes.txt", "--output-format", "stream-json"]
        proc = run_agent(args, tmp_path, agent_env(tmp_path / "home", server))
    assert proc.returncode == 0, proc.stderr
    shown = [e["context_tokens"] for e in stream_events(proc.stdout) if e.get("type") == "usage"]
    assert len(shown) == 2 and shown[1] > 2_000, shown  # was [40, 40]: the toolbar showed the lie
    assert proc.stderr.count("not believed") == 0  # stream-json: warnings are events, not stderr lines

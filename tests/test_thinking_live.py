"""Every layer's history through the fake's signature check: a request the API accepts, every time.

A real conversation with Claude Sonnet 5.5's signed thinking blocks is built against the fake
(which binds each block to the conversation before it, as the API does). Then each layer changes
it (L1 clears old results, L3 condenses, L4 drops the oldest groups) and the result is sent
through the real adapter: accepted, with the thinking before the change still read. A control
that edits the history without settling the thinking is refused, so the check is real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.billing.prices import CachePrice
from agent_cli.config.settings import ContextSettings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.protocol import Frame
from agent_cli.core.errors import ThinkingRejectedError
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, ToolResult
from agent_cli.core.requests import Completion, Request, ToolSpec
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.anthropic_wire import ThinkingConfig
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.providers.models import lookup
from agent_cli.store.archive import Archive
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.tokens.counter import TokenCounter
from tests.test_context_fakes import FakeSummarizer

MODEL = "claude-sonnet-5-5"
TOOLS = (
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
)
FRAME = Frame("You are a coding agent.", TOOLS)


def provider(fake_server: FakeModelServer) -> AnthropicProvider:
    info = lookup(MODEL)
    assert info is not None
    thinking = ThinkingConfig.for_model(info.accepts, effort=None, display="summarized")
    return AnthropicProvider(MODEL, api_key="k", base_url=fake_server.anthropic_base_url, thinking=thinking)


def send(p: AnthropicProvider, history: list[Message]) -> Completion:
    events = list(p.stream(Request(FRAME.system, tuple(history), TOOLS, max_tokens=1_000)))
    done = events[-1]
    assert isinstance(done, Completion)
    return done


def conversation(fake_server: FakeModelServer, p: AnthropicProvider, rounds: int) -> list[Message]:
    """`rounds` tool rounds, each reply signed by the fake and passed back unchanged."""
    history = [Message.user("read every module")]
    for n in range(rounds):
        fake_server.queue(
            Reply(
                f"notes on module {n} " * 150,
                tool_calls=[ToolCallSpec("read_file", {"path": f"m{n}.py"})],
                thinking=f"reading m{n}.py",
            )
        )
        reply = send(p, history).message
        assert reply.thoughts, "the 5.5 family thinks by default"
        (use,) = reply.tool_uses
        history += [reply, Message("user", (ToolResult(use.id, f"def f{n}(): pass  # " + "x" * 6_000),))]
    assert fake_server.requests[-1].reasoning_accepted == rounds - 1  # every earlier block was read
    return history


def engine(tmp_path: Path, window: int) -> ContextEngine:
    return ContextEngine(
        settings=ContextSettings(
            clear_protect_tokens=2_000, clear_min_batch_tokens=1_000, keep_tail_tokens=2_000
        ),
        window=window,
        max_output=2_000,
        counter=TokenCounter(MODEL, tokenizer_for(MODEL, "anthropic")),
        archive=Archive(tmp_path / "a"),
        summarize=FakeSummarizer(),
        # What the API accepts after each layer is the subject, not when a clear pays for its
        # rewrite: unpriced, L1 clears at its line (priced, a warm clear this early waits).
        price=CachePrice.server(),
    )


def layers(events: list[object]) -> list[str]:
    return [e.layer for e in events if isinstance(e, CompactEvent)]


def test_the_control_an_unsettled_edit_is_refused(fake_server: FakeModelServer, tmp_path: Path) -> None:
    p = provider(fake_server)
    history = conversation(fake_server, p, 4)
    edited = [*history]
    first = edited[2]
    edited[2] = first.replace([ToolResult(first.tool_results[0].tool_use_id, "[cleared]")])
    fake_server.queue(Reply("ok"))
    with pytest.raises(ThinkingRejectedError):
        send(p, edited)


@pytest.mark.parametrize("layer", ["clear", "manual", "emergency"])
def test_each_layer_leaves_a_request_the_api_accepts(
    fake_server: FakeModelServer, tmp_path: Path, layer: str
) -> None:
    p = provider(fake_server)
    history = conversation(fake_server, p, 6)
    if layer == "clear":
        eng = engine(tmp_path, 30_000)
        prepared = eng.prepare(history, FRAME)
    elif layer == "manual":
        eng = engine(tmp_path, 200_000)
        prepared = eng.compact(history, FRAME, "keep the module notes", "manual")
    else:
        eng = engine(tmp_path, 9_000)
        eng.stop_automatic()  # as after the loop guard stopped automatic compaction: only L4 is left
        prepared = eng.prepare(history, FRAME)
    assert layer in layers(prepared.events), layers(prepared.events)
    fake_server.queue(Reply("continuing"))
    done = send(
        p,
        [*prepared.messages, Message.user("go on")]
        if prepared.messages[-1].role == "assistant"
        else prepared.messages,
    )
    assert done.message.text == "continuing"  # accepted: no 400 for a bound block
    kept_before_change = sum(len(m.thoughts) for m in prepared.messages)
    assert fake_server.requests[-1].reasoning_accepted == kept_before_change
    if layer == "clear":
        assert kept_before_change > 0  # the thinking before the first cleared result still counts

"""A turn the provider pauses, and reply blocks of a type this client does not know (issue "Found
from outside", item 8), end to end: `agent -p` against agent_cli/testing/fakeserver, which takes a paused
reply back as the last turn (as Anthropic documents `pause_turn`) and refuses any other trailing
assistant turn on the models that refuse a prefill."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.core.errors import FatalProviderError
from agent_cli.core.messages import Message
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.openai_responses import OpenAIResponsesProvider
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.e2e import agent_env, run_agent


def test_a_paused_turn_is_continued_and_its_answer_printed(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("Looking through the sources. ", stop="pause_turn"), Reply("The answer is 42."))
        proc = run_agent(["-p", "what is the answer?"], tmp_path, agent_env(tmp_path / "home", server))
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert "The answer is 42." in proc.stdout  # was: "Looking through the sources." and the run ended
    assert len(requests) == 2
    last = requests[1].body["messages"][-1]
    assert last["role"] == "assistant"  # the paused reply, sent back as it came
    assert any(b.get("text") == "Looking through the sources. " for b in last["content"])
    assert any(b.get("type") == "thinking" for b in last["content"])  # its thinking block too


def test_the_fake_refuses_a_trailing_assistant_turn_it_did_not_pause() -> None:
    with FakeModelServer() as server:
        server.queue(Reply("never sent"))
        provider = AnthropicProvider("claude-sonnet-5-5", api_key="k", base_url=server.anthropic_base_url)
        prefill = Request("s", (Message.user("hi"), Message.assistant("Sure, here")), (), max_tokens=64)
        with pytest.raises(FatalProviderError, match="does not support assistant message prefill"):
            list(provider.stream(prefill))


@pytest.mark.parametrize("provider", ["anthropic", "responses"])
def test_an_unknown_block_is_skipped_without_a_warning_dump(tmp_path: Path, provider: str) -> None:
    odd = {"type": "hologram", "payload": {"frames": [1, 2, 3]}}
    with FakeModelServer() as server:
        server.queue(Reply("fine", extra=[odd]))
        env = agent_env(tmp_path / "home", server, "anthropic" if provider == "anthropic" else "openai")
        args = ["-p", "hi"] + (
            [] if provider == "anthropic" else ["--provider", "openai", "--wire", "responses"]
        )
        proc = run_agent(args, tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "fine"
    assert "Pydantic" not in proc.stderr and "serialized value" not in proc.stderr, proc.stderr[:600]


def test_unknown_blocks_leave_the_known_ones_through_the_sdk() -> None:
    request = Request("s", (Message.user("hi"),), (), max_tokens=64)
    with FakeModelServer() as server:
        for streaming in (True, False):
            server.queue(Reply("fine", extra=[{"type": "hologram"}]))
            url = server.anthropic_base_url
            done = list(
                AnthropicProvider("claude-sonnet-5-5", api_key="k", base_url=url, streaming=streaming).stream(
                    request
                )
            )[-1]
            assert isinstance(done, Completion) and done.message.text == "fine"
            server.queue(Reply("fine", extra=[{"type": "hologram"}]))
            url = server.openai_base_url
            done = list(
                OpenAIResponsesProvider("gpt-6.2-sol", api_key="k", base_url=url, streaming=streaming).stream(
                    request
                )
            )[-1]
            assert isinstance(done, Completion) and done.message.text == "fine"


def test_a_provider_that_pauses_for_ever_is_stopped_with_one_line(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.queue(*[Reply(f"step {n}. ", stop="pause_turn") for n in range(12)])
        # (--sandbox off: the project holds the test's home, which no sandbox confines; a line would say so)
        proc = run_agent(["-p", "go", "--sandbox", "off"], tmp_path, agent_env(tmp_path / "home", server))
        asked = len(server.requests)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "agent: The provider paused this turn 8 times in a row; send a message to go on."
    ]
    assert asked == 9  # the first reply and eight continuations

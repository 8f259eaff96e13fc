"""The whole-request deadline (`provider.timeout`): a reply that drips a byte at a time, or a
stream of nothing but keep-alive pings, never trips the read timeout; the deadline cuts it, through
the real SDKs against agent_cli/testing/fakeserver, streamed and not, on every wire."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.core.errors import StalledError
from agent_cli.core.messages import Message
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.openai_responses import OpenAIResponsesProvider
from agent_cli.providers.sdk_client import SDKProvider
from agent_cli.testing.fakeserver import Drip, FakeModelServer, Pings, Reply, ScriptItem
from tests.e2e import agent_cmd, agent_env

REQUEST = Request("You are terse.", (Message.user("hi"),), (), max_tokens=64)
# The deadline, and a stall limit below it that the fake's drips and pings (every 0.05-0.2 s) must not
# trip: 2 s, not 1, since a busy machine may hold the fake server's thread back for a second.
DEADLINE, STALL = 3.0, 2.0


def _anthropic(server: FakeModelServer, streaming: bool) -> SDKProvider:
    url = server.anthropic_base_url
    return AnthropicProvider(
        "claude-opus-5-5", api_key="k", base_url=url, timeout=DEADLINE, stall=STALL, streaming=streaming
    )


def _chat(server: FakeModelServer, streaming: bool) -> SDKProvider:
    url = server.openai_base_url
    return OpenAIProvider(
        "gpt-4o", api_key="k", base_url=url, timeout=DEADLINE, stall=STALL, streaming=streaming
    )


def _responses(server: FakeModelServer, streaming: bool) -> SDKProvider:
    url = server.openai_base_url
    return OpenAIResponsesProvider(
        "gpt-4o", api_key="k", base_url=url, timeout=DEADLINE, stall=STALL, streaming=streaming
    )


MAKERS: dict[str, Callable[[FakeModelServer, bool], SDKProvider]] = {
    "anthropic": _anthropic,
    "chat": _chat,
    "responses": _responses,
}


@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize(
    "item", [Drip(interval=0.05), Pings(interval=0.2, seconds=30)], ids=["drip", "pings"]
)
@pytest.mark.parametrize("wire", sorted(MAKERS))
def test_a_reply_that_never_finishes_is_cut_at_the_deadline(
    wire: str, item: ScriptItem, streaming: bool
) -> None:
    with FakeModelServer() as server:
        server.queue(item)
        provider = MAKERS[wire](server, streaming)
        start = time.monotonic()
        with pytest.raises(StalledError) as caught:
            list(provider.stream(REQUEST))
        took = time.monotonic() - start
    assert "took longer than 3 s in all and was cut off (provider.timeout)" in str(caught.value)
    # Cut at the deadline, not when the server gave up (30 s of pings, over a minute of drips).
    assert took < 20, f"{took:.1f} s for a deadline of 3 s"


def test_a_slow_reply_within_the_deadline_is_kept() -> None:
    with FakeModelServer(chunk_chars=400) as server:
        server.queue(Drip(interval=0.0, reply=Reply("fine")))
        events = list(_anthropic(server, True).stream(REQUEST))
    done = events[-1]
    assert isinstance(done, Completion) and done.message.text == "fine"


def test_the_deadline_is_retried_like_a_stall_then_said_in_one_line(tmp_path: Path) -> None:
    import subprocess

    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text("[provider]\nstall_timeout = 2.0\ntimeout = 3.0\n")
    with FakeModelServer() as server:
        server.queue(*[Drip(interval=0.05)] * 3)
        proc = subprocess.run(
            agent_cmd("-p", "say hi"),
            cwd=project,
            env=agent_env(tmp_path / "home", server),
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        assert len(server.requests) == 3  # the first try and two retries, as for a stall
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("took longer than 3 s in all") >= 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].count("provider.timeout") == 1, proc.stderr


def test_a_finished_reply_left_open_is_never_cut_later() -> None:
    """The loop stops reading at the Completion and may leave the stream's generator open; its
    deadline ends there, so it cannot shut the pooled connection the next request uses."""
    with FakeModelServer() as server:
        server.queue(Reply("one"), Reply("two"))
        provider = _anthropic(server, True)
        first = provider.stream(REQUEST)
        assert any(isinstance(e, Completion) for e in first)  # read up to the Completion, not closed
        time.sleep(DEADLINE + 0.2)  # past the first request's deadline
        second = list(provider.stream(REQUEST))[-1]
        assert isinstance(second, Completion) and second.message.text == "two"

"""The summary call: a timeout or an error fails it fast, and a given-up call stops spending tokens."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from agent_cli.agent.summary_call import ProviderSummarizer
from agent_cli.core.errors import FatalProviderError
from agent_cli.core.messages import Message
from agent_cli.core.requests import Request, StreamEvent, TextDelta
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.scripted import say

REQUEST = Request("system", (Message.user("summarize this"),))


@dataclass
class Endless:
    name: str = "anthropic"
    model: str = "m"
    closed: list[bool] = field(default_factory=list)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        try:
            for _ in range(3_000):  # a minute of it
                time.sleep(0.02)
                yield TextDelta("more ")
        finally:
            self.closed.append(True)
        yield say("never")


@dataclass
class Quick:
    name: str = "anthropic"
    model: str = "m"
    fail: bool = False

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        if self.fail:
            raise FatalProviderError("bad request")
        yield say("## Goal\nthe record")


def test_a_summary_call_returns_the_text_and_its_cost() -> None:
    summarize = ProviderSummarizer(Quick(), policy=RetryPolicy(0), timeout=60)
    reply = summarize(REQUEST)
    assert reply.text == "## Goal\nthe record" and reply.usage.input_tokens > 0


def test_errors_reach_the_engine() -> None:
    summarize = ProviderSummarizer(Quick(fail=True), policy=RetryPolicy(0), timeout=60)
    with pytest.raises(FatalProviderError):
        summarize(REQUEST)


def test_a_timed_out_call_stops_streaming() -> None:
    provider = Endless()
    summarize = ProviderSummarizer(provider, policy=RetryPolicy(0), timeout=0.2)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        summarize(REQUEST)
    assert time.monotonic() - started < 30  # given up at its timeout, not after the minute of stream
    deadline = time.monotonic() + 30
    while not provider.closed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert provider.closed == [True], "the worker closed the stream instead of reading it to the end"

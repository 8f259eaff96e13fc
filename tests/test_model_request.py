"""One model request over values (agent/model_request.py): the history and frame go in, a value
comes back (the reply and its usage, a failure, or the history a remedy made), and nothing it was
given changes. A scripted provider and the pass-through context policy."""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

from agent_cli.agent.hooks import Hooks
from agent_cli.agent.model_request import Answered, Failed, Remedied, RequestInputs, Tried, send
from agent_cli.context.protocol import Frame
from agent_cli.core.errors import ContextOverflowError, ThinkingRejectedError
from agent_cli.core.events import CompactEvent, Event, StatusEvent, UsageEvent, WarningEvent
from agent_cli.core.messages import Message, TextBlock, Usage
from agent_cli.core.requests import Request
from agent_cli.core.thought_blocks import ThinkingBlock
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.scripted import PassThroughContext, ScriptedProvider, Step, say

FRAME = Frame("You are a test agent.")
OVERFLOW = ContextOverflowError("prompt is too long: 300 tokens > 200 maximum", tokens=300, limit=200)
_R = TypeVar("_R")


class _Told(Hooks):
    def __init__(self) -> None:
        self.requests: list[Request] = []

    def on_pre_request(self, request: Request) -> None:
        self.requests.append(request)


def inputs(script: list[Step], context: PassThroughContext | None = None) -> RequestInputs:
    retry = RetryPolicy(max_retries=0, base_delay=0.0, max_delay=0.0)
    return RequestInputs(
        ScriptedProvider(script), context or PassThroughContext(), _Told(), retry, lambda s: None
    )


def run(steps: Generator[Event, None, _R]) -> tuple[list[Event], _R]:
    events: list[Event] = []
    while True:
        try:
            events.append(next(steps))
        except StopIteration as stop:
            return events, stop.value


def test_a_reply_comes_back_with_the_usage_to_log_and_the_context_as_an_event() -> None:
    history = (Message.user("hi"),)
    given = inputs([say("hello")])
    events, sent = run(send(given, history, FRAME))
    assert isinstance(sent, Answered) and sent.completion.message.text == "hello"
    assert sent.usage == ("claude-sonnet-4-5", Usage(100, 10))  # the provider's model: the reply named none
    assert isinstance(events[0], StatusEvent) and isinstance(events[-1], UsageEvent)
    assert isinstance(given.hooks, _Told) and given.hooks.requests[0].messages == history


def test_an_overflow_returns_the_engines_history_once_then_fails() -> None:
    history = (Message.user("a" * 100), Message.assistant("b"), Message.user("go on"))
    context = PassThroughContext()
    _, sent = run(send(inputs([OVERFLOW], context), history, FRAME))
    assert isinstance(sent, Remedied) and sent.reason == "overflow" and sent.tried == Tried(compacted=True)
    assert [m.text for m in sent.prepared.messages] == ["go on"]  # the engine's, for the loop to take
    assert isinstance(sent.prepared.events[0], CompactEvent) and context.overflow_calls == 1
    assert len(history) == 3  # what it was given is as it was
    _, again = run(send(inputs([OVERFLOW], context), sent.prepared.messages, FRAME, sent.tried))
    assert isinstance(again, Failed) and "still too large after compacting" in str(again.error)
    assert context.overflow_calls == 1  # compacted once, never twice


def test_a_refused_thinking_block_returns_the_history_without_thinking_once() -> None:
    thought = Message("assistant", (ThinkingBlock("plan", "sig-" + "x" * 40), TextBlock("ok")))
    history = (Message.user("hi"), thought, Message.user("and now"))
    refused = ThinkingRejectedError("invalid signature in thinking block")
    _, sent = run(send(inputs([refused]), history, FRAME))
    assert isinstance(sent, Remedied) and sent.reason == "thinking" and sent.tried == Tried(unthought=True)
    assert not any(m.thoughts for m in sent.prepared.messages) and history[1].thoughts
    (warning,) = sent.prepared.events
    assert isinstance(warning, WarningEvent) and "without thinking" in warning.message
    _, again = run(send(inputs([refused]), sent.prepared.messages, FRAME, sent.tried))
    assert isinstance(again, Failed) and again.error is refused

"""Fakes for core tests: a scripted provider, a pass-through context policy, an in-memory session.

Real tools in a temp dir and these fakes test the loop without HTTP; the
provider edge is tested through the real SDKs against `agent_cli.testing.fakeserver`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_cli.context.protocol import Frame, Prepared
from agent_cli.core.errors import ContextOverflowError, ProviderError
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, Event
from agent_cli.core.messages import Block, Message, TextBlock, ToolResult, ToolUse, Usage
from agent_cli.core.requests import Completion, Request, RequestOptions, StopReason, StreamEvent, TextDelta

__all__ = ["MemorySession", "PassThroughContext", "ScriptedProvider", "Step", "call", "calls", "say"]

_ids = itertools.count(1)


def say(text: str, stop: StopReason = "end_turn") -> Completion:
    return Completion(Message.assistant(text), stop, Usage(100, 10))


def call(name: str, **args: Any) -> Completion:
    use = ToolUse(f"toolu_{next(_ids)}", name, args)
    return Completion(Message("assistant", (use,)), "tool_use", Usage(100, 10))


def calls(*uses: tuple[str, dict[str, Any]], text: str = "") -> Completion:
    blocks: list[Block] = [TextBlock(text)] if text else []
    blocks += [ToolUse(f"toolu_{next(_ids)}", n, a) for n, a in uses]
    return Completion(Message("assistant", tuple(blocks)), "tool_use", Usage(100, 10))


Step = Completion | ProviderError | Callable[[Request], Completion]


@dataclass
class ScriptedProvider:
    """Replies from a script, one step per request; records every request."""

    script: list[Step]
    name: str = "anthropic"
    model: str = "claude-sonnet-4-5"
    requests: list[Request] = field(default_factory=list)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        self.requests.append(request)
        if not self.script:
            raise AssertionError("the scripted provider ran out of replies")
        step = self.script.pop(0)
        if isinstance(step, ProviderError):
            raise step
        completion = step(request) if callable(step) else step
        if completion.message.text:
            yield TextDelta(completion.message.text)
        yield completion


@dataclass
class PassThroughContext:
    """A context policy that never compacts; counts characters / 4."""

    window: int = 200_000
    max_output: int = 8_192
    overflow_calls: int = 0
    compact_calls: list[tuple[str | None, str]] = field(default_factory=list)

    def ingest(
        self, use: ToolUse, result: ToolResult, *, round_size: int = 1
    ) -> tuple[ToolResult, CompactEvent | None]:
        return result, None

    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared:
        return Prepared(list(history), [])

    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> None:
        pass

    def turn_ended(self, history: Sequence[Message], frame: Frame) -> None:
        pass

    def cache_options(self, history: Sequence[Message]) -> RequestOptions:
        return RequestOptions()

    def on_overflow(self, history: Sequence[Message], frame: Frame, error: ContextOverflowError) -> Prepared:
        self.overflow_calls += 1
        keep = list(history)[-1:]
        event = CompactEvent(
            layer=CompactLayer.EMERGENCY,
            trigger="overflow",
            messages_before=len(history),
            messages_after=len(keep),
            tokens_before=0,
            tokens_after=0,
        )
        return Prepared(keep, [event])

    def compact(
        self, history: Sequence[Message], frame: Frame, focus: str | None, trigger: CompactTrigger
    ) -> Prepared:
        self.compact_calls.append((focus, trigger))
        summary = Message.user(f"[condensed record, focus={focus}]")
        event = CompactEvent(
            layer=CompactLayer.MANUAL,
            trigger=trigger,
            messages_before=len(history),
            messages_after=1,
            tokens_before=0,
            tokens_after=0,
            summary=summary.text,
        )
        return Prepared([summary], [event])

    def tokens(self, history: Sequence[Message], frame: Frame) -> int:
        return sum(len(str(m.to_json())) for m in history) // 4


@dataclass
class MemorySession:
    id: str = "test-session"
    messages: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    checkpoints: list[tuple[list[Message], str]] = field(default_factory=list)
    states: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def log_message(self, message: Message) -> None:
        self.messages.append(message)

    def log_event(self, event: Event) -> None:
        self.events.append(event)

    def log_history(self, messages: Sequence[Message], reason: str) -> None:
        self.checkpoints.append((list(messages), reason))

    def log_state(self, topic: str, data: Mapping[str, Any]) -> None:
        self.states.append((topic, dict(data)))

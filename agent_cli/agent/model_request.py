"""One model request of a turn, sent as the loop's history stands, with its two remedies.

A context overflow compacts (the engine's reactive path) and sends once more, never twice; a
refused thinking block sends the history once more without thinking, the provider's own remedy.
What the reply reported is logged for /cost, and the context as counted now is an event.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_cli.agent.hooks import Hooks
from agent_cli.context.protocol import ContextPolicy, Frame, Prepared
from agent_cli.core.errors import ContextOverflowError, ProviderError, ThinkingRejectedError
from agent_cli.core.events import (
    AssistantTextDelta,
    Event,
    RetryEvent,
    StatusEvent,
    ThinkingTextDelta,
    UsageEvent,
    WarningEvent,
)
from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import Completion, Request, RequestOptions, TextDelta, ThinkingDelta
from agent_cli.core.thinking import strip_thinking
from agent_cli.providers.base import Provider
from agent_cli.providers.retry import RetryPolicy, stream_with_retry

__all__ = ["Failed", "RequestHost", "request_with_reactive_retry"]

STILL_TOO_LARGE = "try /compact with a focus, or /clear"


@dataclass(frozen=True, slots=True)
class Failed:
    error: ProviderError


class RequestHost(Protocol):
    """What a request needs of the loop: its history (replaced by a remedy, logged), and where events go."""

    provider: Provider
    context: ContextPolicy
    hooks: Hooks
    retry: RetryPolicy
    history: list[Message]
    usage_log: list[tuple[str, Usage]]

    @property
    def frame(self) -> Frame: ...

    @property
    def sleep(self) -> Callable[[float], None]: ...

    def emit(self, event: Event) -> Event: ...

    def replace_history(self, messages: Sequence[Message], reason: str) -> None: ...

    def apply(self, prepared: Prepared, reason: str) -> Iterator[Event]: ...


def request_with_reactive_retry(host: RequestHost) -> Generator[Event, None, Completion | Failed]:
    """Send the request; on a context overflow compact and retry once, never more; on a refused
    thinking block, send the history once more without thinking (the provider's own remedy)."""
    forced = unthought = False
    while True:
        anchor = host.context.cache_anchor(host.history)
        frame = host.frame
        request = Request(
            frame.system,
            tuple(host.history),
            frame.tools,
            host.context.max_output,
            RequestOptions(cache_anchor=anchor, cache_newest=host.context.cache_newest()),
        )
        host.hooks.on_pre_request(request)
        yield StatusEvent(text="waiting for model")
        try:
            completion = yield from _stream(host, request)
        except ContextOverflowError as exc:
            if forced:
                still = f"the request is still too large after compacting ({exc}); {STILL_TOO_LARGE}"
                return Failed(ContextOverflowError(still, tokens=exc.tokens, limit=exc.limit))
            forced = True
            prepared = host.context.on_overflow(host.history, host.frame, exc)
            if prepared.unsendable is not None:
                return Failed(prepared.unsendable)
            yield from host.apply(prepared, "overflow")
            continue
        except ThinkingRejectedError as exc:
            if unthought or not any(m.thoughts for m in host.history):
                return Failed(exc)
            unthought = True
            host.replace_history(strip_thinking(host.history, 0), "thinking")
            again = f"{exc}; sending the conversation again without thinking"
            yield host.emit(WarningEvent(message=again))
            continue
        except ProviderError as exc:
            return Failed(exc)
        yield from _reported(host, request, completion)
        return completion


def _reported(host: RequestHost, request: Request, completion: Completion) -> Iterator[Event]:
    """The reply's notes, the counter's doubt, its usage logged for /cost, and the context now."""
    for note in completion.notes:
        yield host.emit(WarningEvent(message=note))
    doubted = host.context.observe(host.frame, request.messages, completion.usage)
    if doubted is not None:
        yield host.emit(doubted)
    model = completion.model or host.provider.model
    host.usage_log.append((model, completion.usage))
    usage = completion.usage
    # The context as counted now: the report, or the local count where the report is not believed.
    held = max(usage.prompt_tokens, host.context.tokens(request.messages, host.frame))
    yield host.emit(
        UsageEvent(model=model, usage=usage, context_tokens=held, context_window=host.context.window)
    )


def _stream(host: RequestHost, request: Request) -> Generator[Event, None, Completion]:
    for item in stream_with_retry(host.provider, request, policy=host.retry, sleep=host.sleep):
        if isinstance(item, RetryEvent):
            yield host.emit(item)
        elif isinstance(item, TextDelta):
            yield AssistantTextDelta(text=item.text)
        elif isinstance(item, ThinkingDelta):
            yield ThinkingTextDelta(text=item.text)
        else:
            return item
    raise ProviderError("the provider stream ended without a reply")

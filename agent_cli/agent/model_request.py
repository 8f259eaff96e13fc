"""One model request of a turn: what it reads goes in as values, what came of it comes back as one.

    send(inputs, history, frame, tried) -> yields the request's events, returns
        Answered   the reply, and the (model, usage) to log for /cost
        Failed     the provider's error (or the remedy's, when none is left)
        Remedied   a remedy replaced the history: the loop takes it (logged, its events after it) and
                   sends again, with `tried` saying which remedies are spent

A context overflow compacts (the engine's reactive path, `Remedied` with the engine's `Prepared`)
and sends once more, never twice; a refused thinking block sends the history once more without
thinking (the provider's own remedy). The request function changes no history and logs nothing:
the loop applies what it returns. The context as counted now is an event.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

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
from agent_cli.core.requests import Completion, Request, TextDelta, ThinkingDelta
from agent_cli.core.thinking import strip_thinking
from agent_cli.providers.base import Provider
from agent_cli.providers.retry import RetryPolicy, stream_with_retry

__all__ = ["Answered", "Failed", "Remedied", "RequestInputs", "Sent", "Tried", "send"]

STILL_TOO_LARGE = "try /compact with a focus, or /clear"


@dataclass(frozen=True, slots=True)
class RequestInputs:
    """What a request reads besides the history and the frame: the model, the engine, the hooks
    told of each request, and the retry policy with its clock."""

    provider: Provider
    context: ContextPolicy
    hooks: Hooks
    retry: RetryPolicy
    sleep: Callable[[float], None]


@dataclass(frozen=True, slots=True)
class Tried:
    """The remedies this request has spent: each is tried once."""

    compacted: bool = False
    unthought: bool = False


@dataclass(frozen=True, slots=True)
class Answered:
    completion: Completion
    usage: tuple[str, Usage]  # (model, usage): /cost prices each call


@dataclass(frozen=True, slots=True)
class Failed:
    error: ProviderError


@dataclass(frozen=True, slots=True)
class Remedied:
    """The history a remedy made (`prepared`: the messages, then the events that say so) and why
    ("overflow": the engine compacted; "thinking": the thinking blocks taken out)."""

    prepared: Prepared
    reason: Literal["overflow", "thinking"]
    tried: Tried


Sent = Answered | Failed | Remedied


def send(
    inputs: RequestInputs, history: Sequence[Message], frame: Frame, tried: Tried = Tried()
) -> Generator[Event, None, Sent]:
    """Send the request; on a context overflow the engine's compaction (once), on a refused
    thinking block the history without thinking (once): the loop takes it and sends again."""
    context = inputs.context
    options = context.cache_options(history)
    request = Request(frame.system, tuple(history), frame.tools, context.max_output, options)
    inputs.hooks.on_pre_request(request)
    yield StatusEvent(text="waiting for model")
    try:
        completion = yield from _stream(inputs, request)
    except ContextOverflowError as exc:
        if tried.compacted:
            still = f"the request is still too large after compacting ({exc}); {STILL_TOO_LARGE}"
            return Failed(ContextOverflowError(still, tokens=exc.tokens, limit=exc.limit))
        prepared = context.on_overflow(list(history), frame, exc)
        if prepared.unsendable is not None:
            return Failed(prepared.unsendable)
        return Remedied(prepared, "overflow", Tried(True, tried.unthought))
    except ThinkingRejectedError as exc:
        if tried.unthought or not any(m.thoughts for m in history):
            return Failed(exc)
        again = WarningEvent(message=f"{exc}; sending the conversation again without thinking")
        return Remedied(
            Prepared(strip_thinking(history, 0), [again]), "thinking", Tried(tried.compacted, True)
        )
    except ProviderError as exc:
        return Failed(exc)
    model = completion.model or inputs.provider.model
    yield from _reported(context, frame, request, completion, model)
    return Answered(completion, (model, completion.usage))


def _reported(
    context: ContextPolicy, frame: Frame, request: Request, completion: Completion, model: str
) -> Iterator[Event]:
    """The reply's notes, the counter's doubt, and the context now."""
    for note in completion.notes:
        yield WarningEvent(message=note)
    doubted = context.observe(frame, request.messages, completion.usage)
    if doubted is not None:
        yield doubted
    usage = completion.usage
    # The context as counted now: the report, or the local count where the report is not believed.
    held = max(usage.prompt_tokens, context.tokens(request.messages, frame))
    yield UsageEvent(model=model, usage=usage, context_tokens=held, context_window=context.window)


def _stream(inputs: RequestInputs, request: Request) -> Generator[Event, None, Completion]:
    for item in stream_with_retry(inputs.provider, request, policy=inputs.retry, sleep=inputs.sleep):
        if isinstance(item, RetryEvent):
            yield item
        elif isinstance(item, TextDelta):
            yield AssistantTextDelta(text=item.text)
        elif isinstance(item, ThinkingDelta):
            yield ThinkingTextDelta(text=item.text)
        else:
            return item
    raise ProviderError("the provider stream ended without a reply")

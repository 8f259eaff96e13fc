"""Retrying a provider stream: the backoff schedule and the retry loop.

`backoff_delay` is pure (the random draw is a parameter). `stream_with_retry`
wraps any `Provider`: retryable `ProviderError`s (rate limit, overloaded,
transient: `error.retryable`) are retried with backoff; anything else goes
straight up. A stream that dies half way is started again from scratch, so the
caller may see `TextDelta`s of an attempt that later failed (they are for
display; the `RetryEvent` that follows, yielded before the wait, tells the
display to forget them and what it waits for), but only the final
attempt's `Completion` is ever yielded, which is the only thing the caller adds
to the history.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass

from agent_cli.core.errors import ProviderError, TransientError
from agent_cli.core.events import RetryEvent
from agent_cli.core.requests import Completion, Request, StreamEvent
from agent_cli.providers.base import Provider

__all__ = ["RetryPolicy", "backoff_delay", "stream_with_retry"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry. `max_retries=0` means one attempt only."""

    max_retries: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0


def backoff_delay(attempt: int, retry_after: float | None, policy: RetryPolicy, rand: float) -> float:
    """Seconds to wait before retry number `attempt` (1-based).

    Exponential (`base_delay * 2**(attempt-1)`) with "equal jitter": half the
    step is fixed and half random, so many clients hitting the same outage
    spread out while each still waits a sensible minimum. A server's
    `retry_after` wins over the schedule, since it knows when capacity returns.
    Everything is capped at `max_delay`. `rand` is a draw from [0, 1).
    """
    if retry_after is not None and retry_after >= 0:
        return min(policy.max_delay, retry_after)
    step = min(policy.max_delay, policy.base_delay * 2.0 ** max(0, attempt - 1))
    jitter = min(max(rand, 0.0), 1.0)
    return min(policy.max_delay, step / 2 + step / 2 * jitter)


def stream_with_retry(
    provider: Provider,
    request: Request,
    *,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
) -> Generator[StreamEvent | RetryEvent, None, None]:
    """`provider.stream(request)`, retried on retryable errors until a Completion arrives.

    After `policy.max_retries` retries the last error is raised unchanged.
    Non-retryable errors (overflow, auth, fatal) are raised at once: retrying
    them cannot help and the context engine must see an overflow immediately.
    """
    policy = policy or RetryPolicy()
    attempt = 0
    while True:
        try:
            for event in provider.stream(request):
                yield event
                if isinstance(event, Completion):
                    return
            # The contract says a stream ends in a Completion or raises; one that
            # just stops was cut short, exactly as the adapters report it.
            raise TransientError("stream ended before the message was complete")
        except ProviderError as error:
            limit = policy.max_retries
            if error.retry_limit is not None:  # nothing listening, a stalled stream: fewer tries
                limit = min(limit, error.retry_limit)
            if not error.retryable or attempt >= limit:
                raise
            attempt += 1
            delay = backoff_delay(attempt, error.retry_after, policy, rand())
            yield RetryEvent(attempt=attempt, delay=delay, reason=str(error))  # before the wait, not after
            sleep(delay)

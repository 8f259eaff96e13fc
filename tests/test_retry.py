"""Backoff schedule (pure) and the retry loop over a scripted in-memory provider."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.core.errors import (
    AuthError,
    ContextOverflowError,
    FatalProviderError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    StalledError,
    TransientError,
    UnreachableError,
)
from agent_cli.core.events import RetryEvent
from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import Completion, Request, StreamEvent, TextDelta
from agent_cli.providers.retry import RetryPolicy, backoff_delay, stream_with_retry

DONE = Completion(Message.assistant("final"), "end_turn", Usage(10, 2))
REQUEST = Request("system", (Message.user("hi"),))


class ScriptedProvider:
    """Each call to `stream` plays the next attempt: events, then optionally an error."""

    name = "scripted"
    model = "m"

    def __init__(self, attempts: Sequence[tuple[Sequence[StreamEvent], ProviderError | None]]) -> None:
        self.attempts = list(attempts)
        self.calls = 0

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        events, error = self.attempts[self.calls]
        self.calls += 1
        yield from events
        if error is not None:
            raise error


def run(
    provider: ScriptedProvider, policy: RetryPolicy | None = None
) -> tuple[list[StreamEvent], list[float], list[RetryEvent]]:
    slept: list[float] = []
    retries: list[RetryEvent] = []
    events: list[StreamEvent] = []
    for item in stream_with_retry(provider, REQUEST, policy=policy, sleep=slept.append, rand=lambda: 0.5):
        if isinstance(item, RetryEvent):
            assert len(slept) == len(retries), "the retry is reported before the wait"
            retries.append(item)
        else:
            events.append(item)
    return events, slept, retries


@pytest.mark.parametrize(
    ("attempt", "retry_after", "rand", "expected"),
    [
        (1, None, 0.0, 0.5),
        (1, None, 0.999, 0.9995),
        (2, None, 0.0, 1.0),
        (3, None, 1.0, 4.0),
        (10, None, 0.0, 30.0),
        (10, None, 1.0, 60.0),
        (1, 7.0, 0.3, 7.0),
        (1, 0.0, 0.3, 0.0),
        (1, 500.0, 0.3, 60.0),
    ],
)
def test_backoff_table(attempt: int, retry_after: float | None, rand: float, expected: float) -> None:
    assert backoff_delay(attempt, retry_after, RetryPolicy(), rand) == pytest.approx(expected)


@given(
    attempt=st.integers(1, 50),
    rand=st.floats(0, 1, exclude_max=True),
    retry_after=st.none() | st.floats(0, 1e6),
    base=st.floats(0.001, 10),
    cap=st.floats(0.01, 120),
)
def test_backoff_is_bounded_and_honours_retry_after(
    attempt: int, rand: float, retry_after: float | None, base: float, cap: float
) -> None:
    policy = RetryPolicy(base_delay=base, max_delay=cap)
    delay = backoff_delay(attempt, retry_after, policy, rand)
    assert 0 <= delay <= cap
    if retry_after is not None:
        assert delay == min(cap, retry_after)
    else:
        step = min(cap, base * 2 ** (attempt - 1))
        assert step / 2 <= delay <= step + 1e-9


@given(attempt=st.integers(1, 20), rand=st.floats(0, 1, exclude_max=True))
def test_backoff_grows_with_attempts(attempt: int, rand: float) -> None:
    policy = RetryPolicy(max_delay=1e9)
    assert backoff_delay(attempt + 1, None, policy, rand) >= backoff_delay(attempt, None, policy, rand)


def test_four_faults_in_a_row_then_success() -> None:
    provider = ScriptedProvider(
        [
            ((), RateLimitError("429", status=429, retry_after=2.0)),
            ((), OverloadedError("529", status=529)),
            ((), TransientError("500", status=500)),
            ((TextDelta("half an ans"),), TransientError("connection lost mid-stream")),
            ((TextDelta("final"), DONE), None),
        ]
    )
    events, slept, retries = run(provider)
    assert events[-1] is DONE
    assert [e for e in events if isinstance(e, Completion)] == [DONE]
    assert provider.calls == 5
    assert slept == [2.0, 1.5, 3.0, 6.0]  # retry-after honoured, then the jittered schedule
    assert [r.attempt for r in retries] == [1, 2, 3, 4]
    assert [r.delay for r in retries] == slept
    assert "connection lost" in retries[-1].reason


def test_gives_up_after_max_retries_with_the_last_error() -> None:
    last = TransientError("still down", status=503)
    provider = ScriptedProvider([((), TransientError("down", status=503))] * 2 + [((), last)])
    with pytest.raises(TransientError) as raised:
        run(provider, RetryPolicy(max_retries=2))
    assert raised.value is last
    assert provider.calls == 3


@pytest.mark.parametrize(
    "error",
    [
        ContextOverflowError("too long", status=400, tokens=10, limit=5),
        AuthError("bad key", status=401),
        FatalProviderError("bad request", status=400),
    ],
)
def test_non_retryable_errors_go_straight_up(error: ProviderError) -> None:
    provider = ScriptedProvider([((), error), ((DONE,), None)])
    with pytest.raises(type(error)):
        run(provider)
    assert provider.calls == 1


def test_other_exceptions_are_not_swallowed() -> None:
    class Broken:
        name = "broken"
        model = "m"

        def stream(self, request: Request) -> Iterator[StreamEvent]:
            raise ValueError("a bug, not a network problem")
            yield DONE  # pragma: no cover

    with pytest.raises(ValueError):
        list(stream_with_retry(Broken(), REQUEST, sleep=lambda _: None))


def test_a_stream_that_stops_without_completion_is_retried() -> None:
    provider = ScriptedProvider([((TextDelta("partial"),), None), ((DONE,), None)])
    events, slept, retries = run(provider)
    assert events == [TextDelta("partial"), DONE]
    assert len(slept) == 1 and "before the message was complete" in retries[0].reason


def test_zero_retries_means_one_attempt() -> None:
    provider = ScriptedProvider([((), OverloadedError("529")), ((DONE,), None)])
    with pytest.raises(OverloadedError):
        run(provider, RetryPolicy(max_retries=0))
    assert provider.calls == 1


@pytest.mark.parametrize(("error", "tries"), [(UnreachableError("refused"), 2), (StalledError("quiet"), 3)])
def test_unreachable_and_stalled_get_fewer_tries(error: ProviderError, tries: int) -> None:
    provider = ScriptedProvider([((), error)] * 7)
    with pytest.raises(type(error)):
        run(provider, RetryPolicy(max_retries=6))
    assert provider.calls == tries
    provider = ScriptedProvider([((), error), ((DONE,), None)])
    assert run(provider)[0] == [DONE]  # one that comes back after a retry still finishes


def test_a_limit_never_raises_the_policy() -> None:
    provider = ScriptedProvider([((), StalledError("quiet"))] * 3)
    with pytest.raises(StalledError):
        run(provider, RetryPolicy(max_retries=1))
    assert provider.calls == 2

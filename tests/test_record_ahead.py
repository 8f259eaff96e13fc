"""L2's record prepared ahead (context/records.py): started above the prepare line, swapped in at
the trigger, equal to what a blocking summary of the same span makes.

Through the real `ContextEngine` over a conversation that only grows (no tool output, so L1 has
nothing to clear and L2 is the only way down), with a deterministic summarizer; the reference is
the engine's own `LayerRunner` making the summary at the trigger, blocking, for the same span.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future
from pathlib import Path

from test_context_fakes import (
    FRAME,
    FakeCounter,
    FakeSummarizer,
    assistant,
    filler,
    make_engine,
    sent,
    tail_start,
    tool_round,
    unnamed,
    user,
)

from agent_cli.config.settings import ContextSettings
from agent_cli.context.clear import clearable
from agent_cli.context.cut import CondensePlan, engine_prefix
from agent_cli.context.engine import ContextEngine
from agent_cli.context.engine_state import CompactionState
from agent_cli.context.layers import LayerRunner
from agent_cli.context.records import RecordAhead
from agent_cli.context.summary_request import SummaryReply
from agent_cli.context.thresholds import compute_thresholds
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message
from agent_cli.core.requests import Request

# A window whose budget leaves room for a large result between the prepare line and the trigger.
WINDOW = 80_000


def _record(request: Request) -> str:
    """A record that depends on every message of the request, so another span gives another one."""
    text = "".join(block.text for m in request.messages for block in m.content if hasattr(block, "text"))
    return f"## Work state\nDone: {len(request.messages)} messages, {len(text)} characters."


def _now(call):  # type: ignore[no-untyped-def]
    """Runs the call at once: the record is ready before the next request."""
    future: Future[SummaryReply] = Future()
    future.set_result(call())
    return future


def _grow(engine: ContextEngine, until: int = 200) -> tuple[list[Message], list[Message], list[CompactEvent]]:
    """Talk until an L2 compaction happens: (the history it was given, what it made, its events)."""
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    for n in range(until):
        history += [
            user(f"step {n}\n" + filler(1_200, f"u{n}")),
            assistant(f"done {n}\n" + filler(800, f"a{n}")),
        ]
        prepared = engine.prepare(history, FRAME)
        compactions = [e for e in prepared.events if isinstance(e, CompactEvent) and e.layer == "summarize"]
        if compactions:
            return history, prepared.messages, compactions
        history = prepared.messages
    raise AssertionError("no compaction")


def test_the_swap_is_what_a_blocking_summary_of_the_same_span_makes(tmp_path: Path) -> None:
    summarizer = FakeSummarizer([_record])
    engine, counter, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW)
    before, after, events = _grow(engine)
    assert [e.ahead for e in events] == [True]
    assert len(summarizer.requests) == 1  # made ahead, and no call at the trigger
    cut = tail_start(before, after)
    # The reference: the same span summarized at the trigger, the turn waiting for it.
    reference_summarizer = FakeSummarizer([_record])
    runner = LayerRunner(counter, engine.archive, reference_summarizer, lambda: 0.0)
    total = engine.tokens(before, FRAME)
    blocking = runner.condense(
        before, CondensePlan(engine_prefix(before), cut), FRAME, total,
        thresholds=engine.thresholds, layer="summarize", trigger="auto", focus=None,
    )  # fmt: skip
    assert blocking.acted and sent(reference_summarizer.requests) == sent(summarizer.requests)
    assert unnamed(after) == unnamed(blocking.messages)
    assert events[0].tokens_after == blocking.tokens


def test_without_a_prepare_line_the_trigger_waits_as_before(tmp_path: Path) -> None:
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW, prepare_ratio=0.9)
    _, _, events = _grow(engine)
    assert [e.ahead for e in events] == [False] and len(summarizer.requests) == 1


def test_a_span_that_changed_is_summarized_again_at_the_trigger(tmp_path: Path) -> None:
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW)
    history: list[Message] = [user("Refactor the parser.")]
    edited = False
    for n in range(200):
        history += [
            user(f"step {n}\n" + filler(1_200, f"u{n}")),
            assistant(f"done {n}\n" + filler(800, f"a{n}")),
        ]
        prepared = engine.prepare(history, FRAME)
        history = prepared.messages
        if summarizer.requests and not edited:  # prepared ahead: now the span changes under it
            history = [user("Refactor the parser, and keep the old API."), *history[1:]]
            edited = True
        done = [e for e in prepared.events if isinstance(e, CompactEvent) and e.layer == "summarize"]
        if done:
            # The prepared record was dropped at the next request, and the new span's record prepared
            # ahead in its place (not waited for at the trigger)
            assert [e.ahead for e in done] == [True]
            assert len(summarizer.requests) == 2
            sent = summarizer.requests[-1].messages
            assert any(
                "keep the old API" in block.text
                for m in sent
                for block in m.content
                if hasattr(block, "text")
            )
            return
    raise AssertionError("no compaction")


class _OnWait(Future[SummaryReply]):
    """A call's future that is not done until someone waits for it; then the call runs, in the
    waiter's thread. So a record the turn does not wait for is never ready, and one it waits for is
    made while it waits: no thread, no timer."""

    def __init__(self, call) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.call = call
        self.waited = False

    def result(self, timeout: float | None = None) -> SummaryReply:
        if not self.done():
            self.waited = True
            self.set_result(self.call())
        return super().result(timeout)


def test_a_record_not_ready_at_the_trigger_is_waited_for(tmp_path: Path) -> None:
    now = [0.0]  # the engine's clock: the call takes 5 s of it

    def slow(request: Request) -> str:
        now[0] += 5.0
        return _record(request)

    summarizer, started = FakeSummarizer([slow]), []

    def submit(call):  # type: ignore[no-untyped-def]
        started.append(_OnWait(call))
        return started[-1]

    engine, _, _ = make_engine(tmp_path, summarizer, clock=lambda: now[0], submit=submit, window=WINDOW)
    _, _, events = _grow(engine)
    assert [e.ahead for e in events] == [True] and len(summarizer.requests) == 1
    assert [f.waited for f in started] == [True]  # not ready at the trigger: the turn waited for it
    assert events[0].duration >= 5.0  # the turn waited for the rest of the call


def test_l1_leaves_the_span_being_summarized_alone() -> None:
    messages = [user("go")]
    for n in range(6):
        messages += tool_round("read_file", {"path": f"src/m{n}.py"}, filler(4_000, f"w{n}"))
    counts = [FakeCounter().count_message(m) for m in messages]
    everything, _ = clearable(messages, counts, protect_tokens=1_000)
    held, _ = clearable(messages, counts, protect_tokens=1_000, start=7)
    assert min(everything) < 7 and held and min(held) >= 7


def test_one_record_is_prepared_at_a_time_and_dropped_on_reset() -> None:
    calls: list[int] = []
    ahead = RecordAhead(_now)
    span = [user("a"), assistant("b")]
    ahead.start(CondensePlan(0, 2), span, lambda: calls.append(1) or SummaryReply("r"))  # type: ignore[func-returns-value]
    ahead.start(CondensePlan(0, 2), span, lambda: calls.append(2) or SummaryReply("r"))  # type: ignore[func-returns-value]
    assert calls == [1] and ahead.holds == 2
    ahead.drop()
    assert ahead.holds == 0 and ahead.take([*span, user("c")]) is None


def test_the_prepare_line_sits_below_the_trigger_where_a_large_result_fits_between() -> None:
    settings = ContextSettings()
    large = compute_thresholds(settings, 200_000, 32_000)
    assert large.clear_at < large.prepare_at == 41_600 < large.trigger_at == 57_600
    # 32k: 25% of a 23k budget has no room for one large result; the record waits for the trigger.
    small = compute_thresholds(settings, 32_000, 32_000)
    assert small.prepare_at == small.trigger_at
    off = compute_thresholds(ContextSettings(prepare_ratio=0.95), 200_000, 32_000)
    assert off.prepare_at == off.trigger_at


class _Later:
    """A submit whose calls run only when the test says: the record is not ready until then (with
    `on_wait`, until someone waits for it: `_OnWait`)."""

    def __init__(self, *, on_wait: bool = False) -> None:
        self.calls: list[tuple[object, Future[SummaryReply]]] = []
        self.on_wait = on_wait

    def __call__(self, call):  # type: ignore[no-untyped-def]
        future: Future[SummaryReply] = _OnWait(call) if self.on_wait else Future()
        self.calls.append((call, future))
        return future

    def finish(self) -> None:
        for call, future in self.calls:
            if not future.done():
                future.set_result(call())  # type: ignore[operator]


def _step(history: list[Message], n: int) -> list[Message]:
    return [
        *history,
        user(f"step {n}\n" + filler(1_200, f"u{n}")),
        assistant(f"done {n}\n" + filler(800, f"a{n}")),
    ]


def _to_trigger(engine: ContextEngine) -> tuple[list[Message], int]:
    """Talk until a request reaches the trigger: the history then, and the next step's number."""
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    n = 0
    while engine.tokens(history, FRAME) < engine.thresholds.trigger_at:
        history = engine.prepare(_step(history, n), FRAME).messages
        n += 1
    return history, n


def test_past_the_trigger_a_request_goes_as_it_is_until_its_record_is_ready(tmp_path: Path) -> None:
    """No record prepared ahead (prepare line at the trigger): the turn that reaches the trigger starts
    the record and goes on; the record is swapped in at the first request after it is ready, and the
    result is what a blocking summary of the same span makes, with what came since in the tail."""
    summarizer, later = FakeSummarizer([_record]), _Later()
    engine, counter, _ = make_engine(
        tmp_path, summarizer, submit=later, window=WINDOW, prepare_ratio=0.80, hold_ratio=0.95
    )
    th = engine.thresholds
    assert th.prepare_at == th.trigger_at < th.hold_at
    history, n = _to_trigger(engine)
    assert len(later.calls) == 1 and not summarizer.requests  # started at the trigger, not waited for
    started_on = list(history)
    held = 0
    while engine.tokens(_step(history, n), FRAME) < th.hold_at and held < 2:
        history = _step(history, n)
        n += 1
        prepared = engine.prepare(history, FRAME)
        assert prepared.messages == history and not prepared.events  # goes as it is, nothing waits
        held += 1
    assert held == 2 and len(later.calls) == 1
    later.finish()
    history = _step(history, n)
    total = engine.tokens(history, FRAME)
    prepared = engine.prepare(history, FRAME)
    (event,) = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert event.ahead and event.layer == "summarize" and len(summarizer.requests) == 1
    # The reference: the span the record was started for, summarized blocking, over today's history.
    cut = tail_start(
        started_on, prepared.messages[: len(prepared.messages) - (len(history) - len(started_on))]
    )
    reference = FakeSummarizer([_record])
    runner = LayerRunner(counter, engine.archive, reference, lambda: 0.0)
    blocking = runner.condense(
        history, CondensePlan(engine_prefix(history), cut), FRAME, total,
        thresholds=th, layer="summarize", trigger="auto", focus=None,
    )  # fmt: skip
    assert sent(reference.requests) == sent(summarizer.requests)
    assert unnamed(prepared.messages) == unnamed(blocking.messages)


def test_past_the_hold_line_the_turn_waits_for_the_record(tmp_path: Path) -> None:
    summarizer, later = FakeSummarizer([_record]), _Later(on_wait=True)
    engine, _, _ = make_engine(
        tmp_path, summarizer, submit=later, window=WINDOW, prepare_ratio=0.80, hold_ratio=0.95
    )
    th = engine.thresholds
    history, _n = _to_trigger(engine)
    assert len(later.calls) == 1
    history += [user("paste\n" + filler(8 * (th.hold_at - th.trigger_at), "big"))]
    assert engine.tokens(history, FRAME) >= th.hold_at  # one message jumps past the hold line
    prepared = engine.prepare(history, FRAME)
    (_, future) = later.calls[0]
    assert isinstance(future, _OnWait) and future.waited  # not ready: the turn waited for the record
    (event,) = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert event.ahead and len(summarizer.requests) == 1
    assert engine.tokens(prepared.messages, FRAME) < th.trigger_at


def test_a_record_for_a_span_that_changed_during_the_hold_is_replaced(tmp_path: Path) -> None:
    summarizer, later = FakeSummarizer([_record]), _Later()
    engine, _, _ = make_engine(
        tmp_path, summarizer, submit=later, window=WINDOW, prepare_ratio=0.80, hold_ratio=0.95
    )
    history, n = _to_trigger(engine)
    assert len(later.calls) == 1
    changed = [user("Refactor the parser, then the cache, in Rust."), *history[1:], *_step([], n)]
    prepared = engine.prepare(changed, FRAME)
    assert prepared.messages == changed and len(later.calls) == 2  # the old one dropped, a new one started
    assert later.calls[0][1].cancelled()


def test_the_record_started_at_the_trigger_asks_the_gate_once(tmp_path: Path) -> None:
    """A PreCompact hook is asked when the record is started: its text reaches the summary request,
    and a skip lets the request go as it is with no record started."""
    from agent_cli.context.protocol import CompactGate

    asked: list[str] = []

    def gate(layer, trigger, focus):  # type: ignore[no-untyped-def]
        asked.append(trigger)
        return CompactGate(skip=len(asked) == 1, extra="Keep the parser's grammar.")

    summarizer, later = FakeSummarizer([_record]), _Later()
    engine, _, _ = make_engine(
        tmp_path, summarizer, submit=later, window=WINDOW, prepare_ratio=0.80, hold_ratio=0.95, gate=gate
    )
    history, n = _to_trigger(engine)
    assert asked == ["auto"] and not later.calls  # skipped: nothing started, the request went as it is
    history = _step(history, n)
    assert engine.prepare(history, FRAME).messages == history
    assert asked == ["auto", "auto"] and len(later.calls) == 1
    later.finish()
    assert "Keep the parser's grammar." in summarizer.requests[0].messages[-1].text


def _until_prepared(
    engine: ContextEngine, summarizer: FakeSummarizer, now: list[float], *, mid_turn: bool = False
) -> list[Message]:
    """A request a minute (each marked: the engine notes when it went) until the record is started
    above the prepare line; no compaction on the way. The history then. `mid_turn`: one turn of the
    user's, the model's plan stated at its start ("Next: ..."), then tool rounds (their results
    small: nothing for L1), so the record's span holds the plan the turn follows."""
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    if mid_turn:
        history.append(
            assistant("I will start with the parser.\nNext: split parse() into parse_expr and parse_stmt")
        )
    for n in range(200):
        now[0] += 60.0
        if mid_turn:
            history += tool_round(
                "bash", {"command": f"step {n}"}, "ok", text=f"step {n}\n" + filler(2_000, f"a{n}")
            )
        else:
            history += [
                user(f"step {n}\n" + filler(1_200, f"u{n}")),
                assistant(f"done {n}\n" + filler(800, "a")),
            ]
        prepared = engine.prepare(history, FRAME)
        assert not [e for e in prepared.events if isinstance(e, CompactEvent)]
        history = prepared.messages
        engine.cache_options(history)
        if summarizer.requests:
            return history
    raise AssertionError("no record started")


def test_a_record_ready_goes_in_at_the_next_request_below_the_trigger(tmp_path: Path) -> None:
    """The record prepared ahead goes in as soon as it is ready, on a warm cache too: waiting for the
    trigger would carry its span in every request until then (read back each time), and the swap
    rewrites what follows the span whenever it comes. Before, it waited for the trigger."""
    now = [0.0]
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW, clock=lambda: now[0])
    th = engine.thresholds
    history = _until_prepared(engine, summarizer, now)
    total = engine.tokens(history, FRAME)
    assert th.prepare_at <= total < th.trigger_at - 2_000
    now[0] += 60.0  # warm
    swapped = engine.prepare([*history, user("and then?"), assistant("ok")], FRAME)
    (event,) = [e for e in swapped.events if isinstance(e, CompactEvent)]
    assert event.layer == "summarize" and event.ahead and len(summarizer.requests) == 1
    assert engine.tokens(swapped.messages, FRAME) < total // 2


def test_a_record_whose_span_holds_the_turns_plan_waits_on_a_warm_cache_and_goes_in_on_a_cold_one(
    tmp_path: Path,
) -> None:
    """Mid-turn, the model's newest statement of what it does next lies in the record's span: a
    summary may drop the plan the turn follows, so the record waits for the trigger while the cache
    is warm (by then the turn has most often stated a newer step in the verbatim tail). After an idle
    gap past the cache's TTL (a long command) the next request writes everything again anyway, so the
    record goes in then, below the trigger, and every later request is smaller. The swap is a
    compaction that succeeded: the loop guard's count of failures in a row starts over."""
    now = [0.0]
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW, clock=lambda: now[0])
    th = engine.thresholds
    history = _until_prepared(engine, summarizer, now, mid_turn=True)
    total = engine.tokens(history, FRAME)
    assert th.prepare_at <= total < th.trigger_at - 2_000  # room for a warm round or two below the trigger
    now[0] += 60.0
    history += tool_round("bash", {"command": "pytest -q"}, "3 passed", text="Running the tests.")
    warm = engine.prepare(history, FRAME)
    assert not warm.events  # warm, the plan in the span: the record waits
    engine.cache_options(warm.messages)
    now[0] += 600.0  # ten idle minutes (a long build): past the 5-minute TTL
    # (one compaction earlier left its request above the trigger: the loop guard counts one failure)
    engine._state = dataclasses.replace(engine._state, failures=CompactionState(compaction_failures=1))
    history = [*warm.messages, *tool_round("bash", {"command": "make all"}, "built", text="Building.")]
    cold = engine.prepare(history, FRAME)
    (event,) = [e for e in cold.events if isinstance(e, CompactEvent)]
    assert event.layer == "summarize" and event.ahead and len(summarizer.requests) == 1
    assert engine.tokens(cold.messages, FRAME) < total // 2
    assert engine._state.failures.compaction_failures == 0  # a success: the loop guard starts over


def test_a_plan_restated_in_the_tail_lets_the_record_go_in_on_a_warm_cache(tmp_path: Path) -> None:
    """The record that waited for its span's plan goes in once the model states a newer step (now in
    the verbatim tail), the cache still warm."""
    now = [0.0]
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW, clock=lambda: now[0])
    history = _until_prepared(engine, summarizer, now, mid_turn=True)
    now[0] += 60.0
    waited = engine.prepare([*history, *tool_round("bash", {"command": "ls"}, "a b", text="Listing.")], FRAME)
    assert not waited.events
    now[0] += 60.0
    restated = [*waited.messages, assistant("The parser is split.\nNext: move the cache to the new store")]
    swapped = engine.prepare(restated, FRAME)
    assert [(e.layer, e.ahead) for e in swapped.events if isinstance(e, CompactEvent)] == [
        ("summarize", True)
    ]


def test_compact_drops_the_record_prepared_ahead_and_its_call(tmp_path: Path) -> None:
    """/compact while a record is on its way (started above the prepare line, or at a turn's end):
    the summary made now takes its span, so that record is of no use. Its call is cancelled and it no
    longer stands in the way of the next one: the next time the history passes the prepare line a
    new record is started there (not only at the trigger), and L1 is not held off the new history's
    first messages by a span that is gone."""
    summarizer, later = FakeSummarizer([_record]), _Later()
    engine, _, _ = make_engine(tmp_path, summarizer, submit=later, window=WINDOW)
    th = engine.thresholds
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    n = 0
    while not later.calls:
        history = engine.prepare(_step(history, n), FRAME).messages
        n += 1
    assert engine.tokens(history, FRAME) < th.trigger_at  # prepared ahead, not yet due
    (_, first) = later.calls[0]
    history = engine.compact(history, FRAME).messages  # /compact: its own summary, made now
    history = engine.prepare(_step(history, n), FRAME).messages  # the user's next message
    n += 1
    assert first.cancelled()  # the record ahead's call is dropped
    while engine.tokens(_step(history, n), FRAME) < th.trigger_at:
        history = engine.prepare(_step(history, n), FRAME).messages
        n += 1
        if len(later.calls) > 1:
            break
    assert len(later.calls) == 2  # a new record, started above the prepare line again


def test_a_cold_cache_swaps_the_record_in_even_when_l1_clears_at_the_same_request(tmp_path: Path) -> None:
    """The cold request also lets L1 clear any batch (the cache is rewritten anyway): a small result
    in the tail, after the record's span, is cleared then. The record ready goes in at that request
    all the same; before, the clear kept the prepare line's row from being asked, and the record
    waited for the trigger (every request until then carrying the whole span)."""
    now = [0.0]
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_now, window=WINDOW, clock=lambda: now[0])
    th = engine.thresholds
    history = _until_prepared(engine, summarizer, now, mid_turn=True)
    # A small result (below L1's warm batch), then a larger one: it leaves L1's protected results.
    history += tool_round("read_file", {"path": "small.py"}, filler(2_400, "s"))
    history += tool_round("read_file", {"path": "large.py"}, filler(9_000, "l"))
    history += [assistant("Read both.")]
    now[0] += 60.0
    warm = engine.prepare(history, FRAME)
    assert not warm.events  # warm: nothing clears, the record waits (the turn's plan in its span)
    engine.cache_options(warm.messages)
    total = engine.tokens(warm.messages, FRAME)
    assert th.prepare_at <= total < th.trigger_at
    now[0] += 600.0  # past the cache's TTL
    cold = engine.prepare([*warm.messages, user("back: go on")], FRAME)
    layers = [e.layer for e in cold.events if isinstance(e, CompactEvent)]
    assert "clear" in layers  # L1 cleared the small result (the cache is cold)
    assert "summarize" in layers and len(summarizer.requests) == 1
    assert engine.tokens(cold.messages, FRAME) < total // 2


def test_a_record_started_at_a_turns_end_goes_in_on_a_cold_cache_without_a_prepare_line(
    tmp_path: Path,
) -> None:
    """No room for a prepare line (a small window): a turn's end near the trigger starts the record
    while the user reads (`ContextEngine.turn_ended`). The user comes back after the cache's TTL: the
    next request writes everything again anyway, so the record ready goes in then, below the trigger,
    as one prepared above a prepare line does. Before, only a request above the prepare line (here the
    trigger) was asked, and the record waited for the trigger on a warm cache."""
    now = [0.0]
    summarizer = FakeSummarizer([_record])
    engine, _, _ = make_engine(
        tmp_path, summarizer, submit=_now, window=WINDOW, clock=lambda: now[0], prepare_ratio=0.9
    )
    th = engine.thresholds
    assert th.prepare_at == th.trigger_at
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    for n in range(200):
        now[0] += 60.0
        history = engine.prepare(_step(history, n), FRAME).messages
        engine.cache_options(history)  # (the request goes: the engine notes when)
        engine.turn_ended(history, FRAME)
        if summarizer.requests:
            break
    total = engine.tokens(history, FRAME)
    assert total < th.trigger_at - 100 and len(summarizer.requests) == 1  # started at the turn's end
    now[0] += 600.0  # the user is back after ten minutes: the cache is cold
    cold = engine.prepare([*history, user("back: go on")], FRAME)
    events = [e for e in cold.events if isinstance(e, CompactEvent)]
    assert [(e.layer, e.ahead) for e in events] == [("summarize", True)]
    assert len(summarizer.requests) == 1 and engine.tokens(cold.messages, FRAME) < total // 2

"""The engine's decision table (context/decide.py): each row is a state, what the engine saw, what it
does and what it remembers after, as docs/context-engine.md tells it. No engine, no thread, no timer:
`decide` is a function over values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
from test_context_fakes import FakeCounter, assistant, filler, tool_round, user

from agent_cli.config.settings import ContextSettings
from agent_cli.context.clear import apply_clear
from agent_cli.context.cut import CondensePlan, plan_condense
from agent_cli.context.decide import decide
from agent_cli.context.engine_state import Ahead, Cached, CachePrice, CompactionState, EngineState, StandIn
from agent_cli.context.engine_values import (
    Action,
    Answered,
    AtTrigger,
    Clear,
    Clearing,
    Compacted,
    Condense,
    DigestIn,
    DigestTooBig,
    Drop,
    Ending,
    Fared,
    FinishRecord,
    Forget,
    Happened,
    Hold,
    KeepSize,
    Mark,
    Nothing,
    Observation,
    Owed,
    OweRecord,
    PastTrigger,
    Prepare,
    PrepareAhead,
    Quiet,
    Reset,
    Say,
    Sending,
    SmallerWindow,
    StandInDigest,
    StartHeld,
    StopAutomatic,
    SwapIn,
    TurnEnded,
    WaitForRecord,
)
from agent_cli.core.messages import Message, SummaryBlock
from agent_cli.providers.model_info import cache_price
from agent_cli.providers.models import lookup

# A 20k window as the engine tests use it: trigger 14,080, hold line (when on) 16,720.
SMALL = {
    "keep_tail_tokens": 2_000,
    "min_freed_tokens": 0,  # the tail the rows' sizes were drawn against (test_context_cut holds the line)
    "summary_max_tokens": 600,
    "clear_protect_tokens": 2_000,
    "clear_min_batch_tokens": 1_000,
    "trigger_ratio": 0.80,  # the lines the rows' sizes were drawn against (the default: 0.90)
    "hold_ratio": 0.80,  # off: at the trigger a turn waits for its record
    "digest_stands_in": False,  # and no digest stands in for it
}
COUNTER = FakeCounter()

# Twelve turns of about 1,000 tokens: a span worth a record, and a tail to keep.
HISTORY: list[Message] = [
    m
    for n in range(12)
    for m in (user(f"u{n}\n" + filler(2_000, f"u{n}")), assistant(filler(2_000, f"a{n}")))
]
COUNTS = [COUNTER.count_message(m) for m in HISTORY]
EDITED = [user("edited"), *HISTORY[1:]]  # the same history, its first message changed


def state(**settings: object) -> EngineState:
    return EngineState.start(ContextSettings(**{**SMALL, **settings}), 20_000, 2_000)  # type: ignore[arg-type]


def with_record(s: EngineState, record: Ahead | StandIn | None) -> EngineState:
    return dataclasses.replace(s, record=record)


def latched(s: EngineState) -> EngineState:
    failures = CompactionState(summary_failures=2, latched=True)
    return dataclasses.replace(s, failures=failures)


PLAN = plan_condense(HISTORY, COUNTS, state().thresholds, requested=False) or CondensePlan(0, 0)
AHEAD = Ahead(PLAN, tuple(PLAN.span(HISTORY)))
# One long turn: the model states its plan, then works through tool rounds; the record prepared
# ahead cuts inside the turn, after the statement.
MID_TURN: list[Message] = [
    user("Port the cache to the new store."),
    assistant("I will read the old cache first.\nNext: port cache.py, then run the tests"),
    *(m for n in range(6) for m in tool_round("read_file", {"path": f"src/m{n}.py"}, filler(2_000, f"r{n}"))),
]
MID_TURN_COUNTS = [COUNTER.count_message(m) for m in MID_TURN]
MID_TURN_AHEAD = Ahead(CondensePlan(0, 6), tuple(MID_TURN[:6]))
RESTATED = [*MID_TURN, assistant("The old cache is read.\nNext: write the new store's adapter")]
DIGEST = (user("[digest of the span]"),)
STAND_IN = StandIn(tuple(PLAN.span(HISTORY)), DIGEST, "span-001-compact.jsonl")
AFTER_DIGEST = [*DIGEST, *PLAN.tail(HISTORY)]
OWED = dataclasses.replace(STAND_IN, owed=True)  # an earlier run of the session ended owing it
GROWN = [*DIGEST, assistant("ok"), *HISTORY[2:]]  # the digest, and turns enough for another record


def trigger(s: EngineState, *, ready: bool, messages: list[Message] = HISTORY, over: int = 0) -> AtTrigger:
    counts = [COUNTER.count_message(m) for m in messages]
    return AtTrigger(messages, counts, s.thresholds.trigger_at + over, ready)


def past_trigger(s: EngineState, *, acted: bool, tokens: int | None = None) -> PastTrigger:
    """After L2 was asked at the trigger, over a history of tool rounds (ROUNDS, below)."""
    tokens = s.thresholds.trigger_at + 100 if tokens is None else tokens
    return PastTrigger(acted, ROUNDS, ROUND_COUNTS, tokens)


def prepare(s: EngineState) -> Prepare:
    return Prepare(HISTORY, COUNTS, s.thresholds.trigger_at - 1_500)  # 1,500 below the trigger


def turn_end(s: EngineState, below: int) -> TurnEnded:
    """A turn ended `below` tokens under the trigger."""
    return TurnEnded(HISTORY, COUNTS, s.thresholds.trigger_at - below)


def cold_prepare(s: EngineState, *, ready: bool) -> Prepare:
    """Above the prepare line, ten minutes after the last request (`Cached.at` 0): the cache is cold."""
    return Prepare(HISTORY, COUNTS, s.thresholds.trigger_at - 1_500, ready, at=600.0)


def same(action: Action) -> Callable[[Action], bool]:
    return lambda got: got == action


def kind(cls: type) -> Callable[[Action], bool]:
    return lambda got: isinstance(got, cls)


def marks(anchor: int | None, newest: bool = True) -> Callable[[Action], bool]:
    """A Mark with this anchor and newest, wherever it puts the next span's end."""
    return lambda got: isinstance(got, Mark) and (got.anchor, got.newest) == (anchor, newest)


@dataclass(frozen=True)
class Row:
    says: str  # what docs/context-engine.md says
    before: EngineState
    seen: Observation | Callable[[EngineState], Observation]
    does: Callable[[Action], bool]
    record: Ahead | StandIn | type | None  # the record on its way after (a type: any of that type)


HOLD = state(hold_ratio=0.95)
NO_AHEAD = state()  # (a 20k window leaves no room for a prepare line: it is the trigger)
STANDS = state(digest_stands_in=True)
NATIVE = state(digest_stands_in=True, summarizer="native")

# fmt: off
ROWS = [
    # -- the record prepared ahead (above the prepare line) --
    Row("above the prepare line, L1 idle: the record of the span L2 will cut is started",
        state(), prepare, kind(PrepareAhead), Ahead),
    Row("one record is prepared at a time",
        with_record(state(), AHEAD), prepare, same(Nothing()), AHEAD),
    Row("the cache gone cold (the last request older than its TTL), the record ready is swapped in",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), AHEAD),
        lambda s: cold_prepare(s, ready=True), same(Condense(AHEAD)), None),
    Row("cold and ready, L1 cleared at that request or below the prepare line: swapped in all the same",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), AHEAD),
        lambda s: dataclasses.replace(cold_prepare(s, ready=True), starts=False),
        same(Condense(AHEAD)), None),
    Row("L1 cleared, or below the prepare line: no record is started at that request",
        state(), lambda s: dataclasses.replace(prepare(s), starts=False), same(Nothing()), None),
    Row("cold, but the record not ready: it waits for it no more than at a warm request",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), AHEAD),
        lambda s: cold_prepare(s, ready=False), same(Nothing()), AHEAD),
    Row("ready on a warm cache: swapped in below the trigger (waiting carries the span in every request)",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), AHEAD),
        lambda s: dataclasses.replace(cold_prepare(s, ready=True), at=60.0), same(Condense(AHEAD)), None),
    Row("ready on a warm cache, the model's newest stated next step in the span: it waits for the trigger",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), MID_TURN_AHEAD),
        lambda s: Prepare(MID_TURN, MID_TURN_COUNTS, s.thresholds.trigger_at - 1_500, True, at=60.0),
        same(Nothing()), MID_TURN_AHEAD),
    Row("... and on a cold cache it goes in all the same",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), MID_TURN_AHEAD),
        lambda s: Prepare(MID_TURN, MID_TURN_COUNTS, s.thresholds.trigger_at - 1_500, True, at=600.0),
        same(Condense(MID_TURN_AHEAD)), None),
    Row("ready on a warm cache, a newer stated step in the tail: swapped in",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), MID_TURN_AHEAD),
        lambda s: Prepare(RESTATED, [*MID_TURN_COUNTS, COUNTER.count_message(RESTATED[-1])],
                          s.thresholds.trigger_at - 1_500, True, at=60.0),
        same(Condense(MID_TURN_AHEAD)), None),
    Row("a turn ends within half the verbatim tail below the trigger: the record starts while the user types",
        NO_AHEAD, lambda s: turn_end(s, 500), kind(PrepareAhead), Ahead),
    Row("a turn ends further below: nothing yet",
        NO_AHEAD, lambda s: turn_end(s, s.thresholds.keep_tail), same(Nothing()), None),
    Row("a turn ends at or past the trigger: the next request's prepare acts",
        NO_AHEAD, lambda s: turn_end(s, 0), same(Nothing()), None),
    Row("a turn ends near the trigger with a record on its way: one at a time",
        with_record(NO_AHEAD, AHEAD), lambda s: turn_end(s, 500), same(Nothing()), AHEAD),
    Row("a turn ends near the trigger while the latch holds: no record",
        latched(NO_AHEAD), lambda s: turn_end(s, 500), same(Nothing()), None),
    Row("cold and ready, but an edit took the span away: not swapped",
        with_record(dataclasses.replace(state(), cache=Cached(at=0.0)), AHEAD),
        lambda s: dataclasses.replace(cold_prepare(s, ready=True), messages=EDITED), same(Nothing()), AHEAD),
    Row("while the latch holds, no record is prepared ahead",
        latched(state()), prepare, same(Nothing()), None),
    Row("at the trigger, the record prepared ahead and ready is swapped in",
        with_record(state(), AHEAD), lambda s: trigger(s, ready=True), same(Condense(AHEAD)), None),
    Row("at the trigger, a record prepared ahead and not ready is waited for (no stand-in)",
        with_record(state(), AHEAD), lambda s: trigger(s, ready=False), same(Condense(AHEAD)), None),
    Row("a span that changed is summarized again at the trigger",
        with_record(state(), AHEAD), lambda s: trigger(s, ready=True, messages=EDITED),
        same(Condense(None)), None),
    Row("without a record prepared, the trigger waits as before",
        state(), lambda s: trigger(s, ready=False), same(Condense(None)), None),
    # -- the hold line --
    Row("past the trigger, under the hold line: the request goes while its record is made",
        with_record(HOLD, AHEAD), lambda s: trigger(s, ready=False), same(Hold()), AHEAD),
    Row("past the trigger with no record on its way: the one a summary now would make is started",
        HOLD, lambda s: trigger(s, ready=False), same(StartHeld(PLAN)), AHEAD),
    Row("a record for a span that changed during the hold is replaced",
        with_record(HOLD, AHEAD), lambda s: trigger(s, ready=False, messages=EDITED),
        kind(StartHeld), Ahead),
    Row("under the hold line, a record ready is taken now, with no wait",
        with_record(HOLD, AHEAD), lambda s: trigger(s, ready=True), same(Condense(AHEAD)), None),
    Row("past the hold line the turn waits for the record",
        with_record(HOLD, AHEAD), lambda s: trigger(s, ready=False, over=3_000), same(Condense(AHEAD)), None),
    Row("under the hold line while the latch holds: no call to wait for, the digest now",
        latched(HOLD), lambda s: trigger(s, ready=False), same(Condense(None)), None),
    # -- a digest standing in --
    Row("at the trigger, a digest stands in at once and the call goes on",
        STANDS, lambda s: trigger(s, ready=False), same(StandInDigest(PLAN, reuse=False)), None),
    Row("a record prepared ahead and not ready: a digest stands in, its call goes on",
        with_record(STANDS, AHEAD), lambda s: trigger(s, ready=False),
        same(StandInDigest(PLAN, reuse=True)), None),
    Row("the digest took the span's place: its record is on its way",
        STANDS, DigestIn(STAND_IN), same(Nothing()), STAND_IN),
    Row("the record takes the digest's place as soon as its call has ended",
        with_record(STANDS, STAND_IN), Quiet(AFTER_DIGEST, ready=True), same(SwapIn(STAND_IN)), None),
    Row("until then the model reads the digest",
        with_record(STANDS, STAND_IN), Quiet(AFTER_DIGEST, ready=False), same(Nothing()), STAND_IN),
    Row("a record whose digest an edit took away is dropped",
        with_record(STANDS, STAND_IN), Quiet(HISTORY, ready=True), same(Forget()), None),
    Row("a record prepared ahead whose span is gone (/compact, an overflow) is dropped",
        with_record(STANDS, AHEAD), Quiet(AFTER_DIGEST, ready=False), same(Forget()), None),
    Row("a record prepared ahead whose span still leads stays",
        with_record(STANDS, AHEAD), Quiet(HISTORY, ready=False), same(Nothing()), AHEAD),
    Row("a record not ready at the next trigger is dropped and the digest folded in",
        with_record(STANDS, STAND_IN), lambda s: trigger(s, ready=False, messages=GROWN),
        kind(StandInDigest), None),
    Row("a digest that cannot shrink the request waits for the record already asked for",
        STANDS, DigestTooBig(PLAN, "span-001-compact.jsonl", ahead=False),
        same(WaitForRecord(PLAN, "span-001-compact.jsonl", False)), None),
    Row("a span the disk refused: the call is of no use",
        STANDS, Happened("refused"), same(Forget()), None),
    Row("with stand-ins off, the turn waits for the record",
        state(), lambda s: trigger(s, ready=False), same(Condense(None)), None),
    Row("while the latch holds, the digest is the record itself: nothing stands in",
        latched(STANDS), lambda s: trigger(s, ready=False), same(Condense(None)), None),
    # -- the run ends (issue 37, item 5: no digest left where a record was due) --
    Row("a run that ends with the record ready swaps it in now, with no wait",
        with_record(STANDS, STAND_IN), Ending(AFTER_DIGEST, ready=True), same(SwapIn(STAND_IN)), None),
    Row("a run that ends before the record came owes it: exit does not wait for the call",
        with_record(STANDS, STAND_IN), Ending(AFTER_DIGEST, ready=False), same(OweRecord(STAND_IN)), None),
    Row("a run that ends drops a record prepared ahead, not yet due",
        with_record(STANDS, AHEAD), Ending(HISTORY, ready=True), same(Forget()), None),
    Row("a run that ends after an edit took the digest away owes nothing",
        with_record(STANDS, STAND_IN), Ending(HISTORY, ready=False), same(Forget()), None),
    Row("a run that ends with nothing on its way owes nothing",
        STANDS, Ending(HISTORY, ready=False), same(Nothing()), None),
    Row("the session opened again: the record its last run owed is on its way",
        STANDS, Owed(STAND_IN), same(Nothing()), OWED),
    Row("the PreCompact gate blocked the record owed just asked for: still owed, asked again next request",
        STANDS, Owed(OWED), same(Nothing()), OWED),
    Row("the record owed is made before the first request, the digest still leading",
        with_record(STANDS, OWED), Quiet(AFTER_DIGEST, ready=False), same(FinishRecord(OWED)), None),
    Row("a record owed whose digest an edit took away is dropped",
        with_record(STANDS, OWED), Quiet(HISTORY, ready=False), same(Forget()), None),
    Row("a run that ends before the owed record was made still owes it",
        with_record(STANDS, OWED), Ending(AFTER_DIGEST, ready=False), same(OweRecord(OWED)), None),
    # -- the provider's own record --
    Row("native records: the provider's record is carried as it came, no digest stands in for it",
        NATIVE, lambda s: trigger(s, ready=False), same(Condense(None)), None),
    # -- L1 after L2 at the trigger --
    Row("L2 did not act (a hook skipped it): L1 clears what it can, free, before L4 drops anything",
        STANDS, lambda s: past_trigger(s, acted=False), kind(Clear), None),
    Row("L2 acted: L1 has nothing more to do",
        STANDS, lambda s: past_trigger(s, acted=True), same(Nothing()), None),
    Row("L2 did not act, the request below the L1 line: nothing to clear",
        STANDS, lambda s: past_trigger(s, acted=False, tokens=s.thresholds.clear_at - 1),
        same(Nothing()), None),
    # -- the gate, overflow, /compact --
    Row("the gate skipped the record just started: nothing is on its way",
        with_record(HOLD, AHEAD), Happened("skipped"), same(Nothing()), None),
    Row("overflow or /compact: a digest standing in is folded into the span condensed now",
        with_record(STANDS, STAND_IN), Happened("folded"), same(Nothing()), None),
    Row("overflow or /compact: a record prepared ahead stays for its span",
        with_record(STANDS, AHEAD), Happened("folded"), same(Nothing()), AHEAD),
    Row("/uncompact: nothing on its way, the size kept",
        with_record(STANDS, AHEAD), KeepSize(9_000), same(Nothing()), None),
    Row("/clear: a record on its way is dropped with the history it was for",
        with_record(STANDS, STAND_IN), Happened("restarted"), same(Nothing()), None),
    # -- another model (/model): a record's text does not depend on the model that reads it --
    Row("another model: the record a digest stands in for goes on, and is swapped in as before",
        with_record(STANDS, STAND_IN), Reset(20_000, 2_000), same(Nothing()), STAND_IN),
    Row("another model with a bigger window: the record still has the room it was asked for",
        with_record(STANDS, STAND_IN), Reset(200_000, 32_000), same(Nothing()), STAND_IN),
    Row("another model with less room for the record (it would be cut): owed, written again first",
        with_record(STANDS, STAND_IN), Reset(20_000, 400), same(Nothing()), OWED),
    Row("another model: a record an earlier run owed is still owed",
        with_record(STANDS, OWED), Reset(200_000, 32_000), same(Nothing()), OWED),
    Row("another model with the same working lines: the record prepared ahead goes on",
        with_record(STANDS, AHEAD), Reset(20_000, 2_000), same(Nothing()), AHEAD),
    Row("another model with other lines: the record prepared ahead (not yet due) is dropped",
        with_record(STANDS, AHEAD), Reset(200_000, 32_000), same(Nothing()), None),
]
# fmt: on


@pytest.mark.parametrize("row", ROWS, ids=[r.says for r in ROWS])
def test_the_decision_table(row: Row) -> None:
    seen = row.seen(row.before) if callable(row.seen) else row.seen
    action, after = decide(row.before, seen)
    assert row.does(action), action
    if isinstance(row.record, type):
        assert isinstance(after.record, row.record), after.record
    else:
        assert after.record == row.record
    # Nothing but the named memories changes: the lines stay, unless the row resets them.
    assert after.settings == row.before.settings
    assert after.thresholds == row.before.thresholds or isinstance(seen, Reset)


def test_a_record_prepared_ahead_keeps_a_tail_smaller_by_the_room_left_to_the_trigger() -> None:
    s = state()
    action, _ = decide(s, prepare(s))
    assert isinstance(action, PrepareAhead)
    assert action.plan.cut > PLAN.cut  # what arrives until the trigger joins the tail


def run(s: EngineState, *seen: Observation) -> tuple[list[Action], EngineState]:
    actions = []
    for one in seen:
        action, s = decide(s, one)
        actions.append(action)
    return actions, s


def test_the_latch_holds_after_two_failures_and_asks_again_after_five_compactions() -> None:
    actions, s = run(state(), Fared("failed"), Fared("failed"))
    assert actions[0] == Nothing() and isinstance(actions[1], Say) and "built by code" in actions[1].text
    assert not s.may_call
    assert decide(s, trigger(s, ready=False))[0] == Condense(None)  # the digest, no call
    _, s = run(s, *[Fared("skipped")] * 5)
    assert s.may_call
    _, s = run(s, Fared("ok"))
    assert s.failures == CompactionState()


def test_the_loop_guard_stops_after_two_failed_compactions_and_a_requested_one_restarts_it() -> None:
    s = state()
    above = Compacted(HISTORY, s.thresholds.trigger_at + 10)
    actions, s = run(s, above, above)
    assert actions[0] == Drop() and isinstance(actions[1], StopAutomatic)
    assert actions[1].failures == 2 and not s.failures.automatic
    _, s = run(s, Happened("requested"))
    assert s.failures.automatic and s.failures.compaction_failures == 0
    _, s = run(s, Happened("stopped"))
    assert not s.failures.automatic


def test_a_compaction_whose_record_is_on_its_way_for_what_is_left_is_no_failure() -> None:
    s = with_record(HOLD, AHEAD)
    action, after = decide(s, Compacted(HISTORY, s.thresholds.trigger_at + 10))
    assert action == Nothing() and after.failures.compaction_failures == 0
    action, after = decide(state(), Compacted(HISTORY, state().thresholds.trigger_at - 10))
    assert action == Nothing() and after.failures.compaction_failures == 0


# After an automatic record: a record, the turn kept, then a round the model has not seen yet (its
# 10,000-token result, under the 14,080 trigger alone), or the request it has not answered yet.
RECORD = (Message("user", (SummaryBlock("## Work state\nearlier work", "span-001-compact.jsonl"),)),)
UNSEEN = [*RECORD, assistant("ok"), *tool_round("read_file", {"path": "big.py"}, filler(40_000, "big"))]
UNANSWERED = [*RECORD, assistant("ok"), user("please look at this:\n" + filler(40_000, "paste"))]
HUGE_UNSEEN = [*RECORD, assistant("ok"), *tool_round("bash", {"command": "make"}, filler(60_000, "out"))]
BIG_RECORD = [*UNSEEN[:1], assistant(filler(40_000, "kept")), *UNSEEN[1:]]
FRAME_TOKENS = 5_000  # the system prompt and tools: every request above is past the trigger


def compacted(messages: list[Message]) -> Compacted:
    """The history after an automatic record, and its count with the frame."""
    counts = [COUNTER.count_message(m) for m in messages]
    return Compacted(messages, FRAME_TOKENS + sum(counts), counts)


# fmt: off
GUARD_ROWS = [
    # (what docs/context-engine.md says, the history after the record, a failure)
    ("only the round the model has not seen keeps the request above the trigger: no failure",
     UNSEEN, False),
    ("only the request the model has not answered keeps it above the trigger: no failure",
     UNANSWERED, False),
    ("that round alone reaches the trigger: no compaction gets below it, a failure as before",
     HUGE_UNSEEN, True),
    ("more than the newest round keeps it above the trigger (what was kept): a failure as before",
     BIG_RECORD, True),
]
# fmt: on


@pytest.mark.parametrize(("says", "messages", "failure"), GUARD_ROWS, ids=[r[0] for r in GUARD_ROWS])
def test_the_loop_guard_counts_only_what_a_compaction_could_have_condensed(
    says: str, messages: list[Message], failure: bool
) -> None:
    s = state()
    newest = sum(COUNTER.count_message(m) for m in messages[2:])
    assert (newest >= s.thresholds.trigger_at) == (messages is HUGE_UNSEEN), says
    assert compacted(messages).tokens >= s.thresholds.trigger_at
    actions, after = run(s, compacted(messages), compacted(messages))
    if failure:
        assert actions[0] == Drop() and isinstance(actions[1], StopAutomatic)
        assert not after.failures.automatic
    else:
        assert actions == [Nothing(), Nothing()] and after.failures.compaction_failures == 0
        assert after.failures.automatic


def test_a_fresh_start_forgets_failures_and_the_record_and_a_new_model_its_lines() -> None:
    s = with_record(latched(state()), AHEAD)
    _, fresh = decide(s, Happened("restarted"))
    assert fresh.record is None and fresh.failures == CompactionState() and fresh.thresholds == s.thresholds
    _, other = decide(s, Reset(200_000, 32_000))
    assert other.thresholds.trigger_at == 51_200 and other.max_output == 32_000 and other.record is None


def test_kept_size_holds_l1_and_l2_off_until_the_trigger_margin_is_regrown() -> None:
    s = state()
    _, after = decide(s, KeepSize(9_000))
    assert after.still_below == 9_000 + s.thresholds.trigger_at - s.thresholds.target


def test_the_cache_anchor_is_the_last_message_the_next_clear_keeps_and_when_it_was_marked() -> None:
    rounds = [user("go")]
    for n in range(4):
        rounds += tool_round("read_file", {"path": f"m{n}.py"}, filler(4_000, f"w{n}"))
    counts = [COUNTER.count_message(m) for m in rounds]
    action, s = decide(state(), Sending(rounds, counts, at=12.5))
    assert marks(1)(action) and s.cache.anchor == rounds[1].id and s.cache.at == 12.5
    assert s.cache.next_change == 2
    action, s = decide(state(), Sending([user("hi")], None, at=13.0))
    assert action == Mark(None) and s.cache.anchor is None  # (a first request: nothing counted)


def test_the_newest_message_is_written_to_the_cache_only_when_the_next_clear_keeps_it() -> None:
    """Priced (issue 37, item 2): a write costs 1.25x against 1x uncached, so a result the next
    clear stubs is not written. The next request is taken as this one plus a round like the newest;
    the frame (system prompt and tools) counts toward the L1 line."""
    s = state()
    frame = s.thresholds.clear_at - sum(ROUND_COUNTS)  # with the next round: past the L1 line
    rows = [
        # (state, the frame's tokens, is the newest written)
        (s, frame, False),  # the next clear takes the newest result: sent uncached
        (s, 0, True),  # the next request stays below the L1 line: the result is read back
        (dataclasses.replace(s, still_below=10**6), frame, True),  # /uncompact: no clear before then
        (dataclasses.replace(s, price=CachePrice(read=0.1, write=0.9)), frame, True),  # a cheap write
        (s, s.thresholds.trigger_at, True),  # the clear leaves it at the trigger: L2's summary reads it
    ]
    for st, tokens, written in rows:
        action, after = decide(st, Sending(ROUNDS, ROUND_COUNTS, at=3.0, frame=tokens))
        assert marks(1, written)(action), (tokens, written)
        assert after.cache.anchor == ROUNDS[1].id
    small = [*ROUNDS, *tool_round("grep", {"pattern": "x"}, "one line")]  # too small to stub
    counts = [COUNTER.count_message(m) for m in small]
    action, _ = decide(s, Sending(small, counts, at=3.0, frame=frame))
    assert marks(1, True)(action)


def test_a_batch_below_the_minimum_is_cleared_once_the_cache_has_gone_cold() -> None:
    """Priced (issue 37, item 2): a clear rewrites the cache from its first change, hence the
    minimum batch; after an idle gap past the cache's TTL the next request writes everything anyway,
    so any batch is worth clearing (as Claude Code's idle compaction does)."""
    s = state()
    short = ROUNDS[:5]  # one result old enough to clear: less than the minimum batch
    counts = ROUND_COUNTS[:5]
    sent = dataclasses.replace(s, cache=Cached(at=100.0))
    ttl = s.price.ttl
    rows = [
        # (state, now, cleared)
        (s, None, False),  # no time: as before
        (sent, 100.0 + ttl - 1, False),  # the cache still warm: the minimum holds
        (sent, 100.0 + ttl + 1, True),  # gone cold: the one result goes
        (s, 100.0 + ttl + 1, False),  # nothing sent yet: nothing cached to go cold
    ]
    for st, now, cleared in rows:
        action, after = decide(st, Clearing(short, counts, s.thresholds.clear_at + 100, past=False, at=now))
        assert isinstance(action, Clear) is cleared, now
        if not cleared:  # L1 need not look again until the history grows, unless the cache goes cold
            assert after.clear_skipped(short, s.thresholds.clear_at + 100, now)
            assert not dataclasses.replace(after, cache=Cached(at=0.0)).clear_skipped(short, 1, ttl + 1)


def test_a_usage_report_far_below_the_count_is_said_once() -> None:
    actions, s = run(state(), Answered(frozenset({"a"}), 100, 5_000), Answered(frozenset({"b"}), 100, 5_000))
    assert isinstance(actions[0], Say) and actions[1] == Nothing()
    assert s.in_request == frozenset({"b"}) and s.said_under_report
    _, s = decide(s, Reset(20_000, 2_000))
    assert not s.said_under_report


ROUNDS = [user("go")] + [
    m for n in range(6) for m in tool_round("read_file", {"path": f"m{n}.py"}, filler(4_000, f"w{n}"))
]
ROUND_COUNTS = [COUNTER.count_message(m) for m in ROUNDS]


def test_l1_clears_a_batch_worth_clearing_and_leaves_the_span_being_prepared_alone() -> None:
    s = state()
    action, after = decide(s, Clearing(ROUNDS, ROUND_COUNTS, s.thresholds.clear_at + 100, past=False))
    assert isinstance(action, Clear) and action.freed >= s.thresholds.clear_min_batch and after == s
    held = with_record(s, Ahead(CondensePlan(0, 9), tuple(ROUNDS[:9])))
    action, _ = decide(held, Clearing(ROUNDS, ROUND_COUNTS, s.thresholds.clear_at + 100, past=False))
    assert not isinstance(action, Clear) or min(action.to_clear) >= 9


def test_past_the_trigger_l1_alone_must_get_below_it_else_l2_takes_the_span_whole() -> None:
    s = state()
    action, _ = decide(s, Clearing(ROUNDS, ROUND_COUNTS, s.thresholds.trigger_at + 20_000, past=True))
    assert action == Nothing()


def test_no_batch_worth_clearing_l1_waits_until_the_history_grew_by_the_shortfall() -> None:
    s = state()
    short = ROUNDS[:3]
    counts = ROUND_COUNTS[:3]
    action, after = decide(s, Clearing(short, counts, 8_000, past=False))
    assert action == Nothing() and after.clear_skip[0] == short[0].id
    assert after.clear_skipped(short, 8_000) and not after.clear_skipped(short, after.clear_skip[1])


def test_an_overflow_naming_a_smaller_window_moves_every_line_and_the_reply_size() -> None:
    s = state()
    action, after = decide(s, SmallerWindow(8_000))
    assert isinstance(action, Say) and "8,000" in action.text
    assert after.thresholds.window == 8_000 and after.max_output == 2_000  # a quarter of the window
    assert after.thresholds.trigger_at < s.thresholds.trigger_at and after.failures == s.failures
    assert decide(after, SmallerWindow(9_000)) == (Nothing(), after)  # not smaller: nothing learned


# -- priced by the session's provider (issue 37, item 2) -------------------------------------------
# The prices as the session gets them: `model_info.cache_price`, from the wire and the model.
ANTHROPIC_PRICE = cache_price("messages", lookup("claude-sonnet-5-5"))  # 0.1x read, 1.25x write at marks
OPENAI_PRICE = cache_price("responses", lookup("gpt-6.2-sol"))  # 0.05x read, every prefix written at 1.25x
SERVER_PRICE = cache_price("chat-compatible", None)  # a compatible server's own cache: no price


def remembered(history: Sequence[Message], counts: Sequence[int]) -> tuple[tuple[str, int], ...]:
    """The rounds' results the requests before the newest sent, as `sending` remembered them (each as
    it was sent: a result since stubbed counts at its size then), the last four."""
    return tuple((m.id, counts[i]) for i, m in enumerate(history[:-1]) if m.tool_results)[-4:]


def priced(
    price: CachePrice,
    history: Sequence[Message] = ROUNDS,
    rounds: tuple[tuple[str, int], ...] | None = None,
    **changes: object,
) -> EngineState:
    """The small state with `price`, the last request having held `history` (all of it cached) and
    its requests having sent `rounds` (by default the rounds of ROUNDS, as they were sent)."""
    held = frozenset(m.id for m in history)
    cache = changes.pop("cache", Cached())
    assert isinstance(cache, Cached)
    seen = remembered(ROUNDS, ROUND_COUNTS) if rounds is None else rounds
    cache = dataclasses.replace(cache, rounds=seen)
    return dataclasses.replace(state(), price=price, in_request=held, cache=cache, **changes)  # type: ignore[arg-type]


SMALL_TH = state().thresholds
# One old result: less than the minimum batch. Sent 10 minutes ago: past Anthropic's 5-minute TTL,
# within the 30 minutes gpt-6.2-sol's cache write buys.
IDLE = Clearing(ROUNDS[:5], ROUND_COUNTS[:5], SMALL_TH.clear_at + 100, past=False, at=100.0 + 600)
# Five old results (4,770 tokens) whose clear rewrites the protected newest round after them, 1,500
# below the trigger: about six more requests would read them back before L2 takes the span.
DEEP = Clearing(ROUNDS, ROUND_COUNTS, SMALL_TH.trigger_at - 1_500, past=False)
NEAR = Clearing(ROUNDS, ROUND_COUNTS, SMALL_TH.trigger_at - 500, past=False)  # the next round reaches it
FRAME = SMALL_TH.clear_at - sum(ROUND_COUNTS)  # with the next round, the request passes the L1 line
NEWEST = Sending(ROUNDS, ROUND_COUNTS, at=3.0, frame=FRAME)  # the next clear takes the newest result


def reads(*chars: int) -> tuple[list[Message], list[int]]:
    """A history of file reads of `chars` characters each, and its counts."""
    history = [user("go")]
    for n, size in enumerate(chars):
        history += tool_round("read_file", {"path": f"r{n}.py"}, filler(size, f"r{n}"))
    return history, [COUNTER.count_message(m) for m in history]


# The misses of the billing audit (spotter-4te at 32k: the newest left unwritten, then written anyway).
# A small round lately: the next round may be as small, and the newest stays in L1's protected window.
SMALLER, SMALLER_COUNTS = reads(4_000, 4_000, 4_000, 4_000, 1_200, 4_000)
AFTER_SMALL = Sending(SMALLER, SMALLER_COUNTS, at=3.0, frame=SMALL_TH.clear_at - sum(SMALLER_COUNTS))
# A big round lately: the next may be as big, past the trigger where the clear cannot get below it,
# and L2's summary request reads the newest back.
BIGGER, BIGGER_COUNTS = reads(4_000, 4_000, 4_000, 24_000, 4_000)
AFTER_BIG = Sending(BIGGER, BIGGER_COUNTS, at=3.0, frame=10_000)
# The survey after a clear: the older reads are stubs, the newest still goes at the next clear.
_CLEARED = apply_clear(ROUNDS, {2: {ROUNDS[2].tool_results[0].tool_use_id}}, 0).messages
STUBBED = Sending(_CLEARED, [COUNTER.count_message(m) for m in _CLEARED], at=3.0, frame=FRAME + 1_000)
# After a compaction (long 200k, seed 1 of the replay: 3 of 13 left unwritten were written again):
# the record and the two rounds of its verbatim tail, reads as big as the newest; the next round
# was a small command's output, which left the request below the L1 line. The rounds the requests
# before the compaction sent (`Cached.rounds`) tell that it may be.
_AFTER, _AFTER_COUNTS = reads(4_000, 4_000)
AFTER_COMPACTION = Sending(_AFTER, _AFTER_COUNTS, at=3.0, frame=SMALL_TH.clear_at - sum(_AFTER_COUNTS))
_SMALL_BEFORE = (("gone0", 4_000), ("gone1", 4_000), ("gone2", 300), ("gone3", 4_000))
# An edit with a long input (long typical 32k, seed 1 of the replay: the newest left unwritten, then
# written again): the next round, small, is small in its call too, and leaves the request below the
# L1 line; taken as the edit's call again (2,053 tokens) it would have passed it.
_EDITED = [user("go")]
for _n in range(4):
    _EDITED += tool_round("read_file", {"path": f"e{_n}.py"}, filler(4_000, f"e{_n}"))
_EDITED += tool_round(
    "edit_file", {"path": "e9.py", "old_string": "x", "new_string": filler(8_000, "new")}, filler(4_000, "ok")
)
_EDITED_COUNTS = [COUNTER.count_message(m) for m in _EDITED]
AFTER_EDIT = Sending(_EDITED, _EDITED_COUNTS, at=3.0, frame=SMALL_TH.clear_at - sum(_EDITED_COUNTS) - 800)
# (a round of 300 and a call of 300 leave it 200 below the line)
_BIG_BEFORE = tuple((f"gone{n}", 4_000) for n in range(4))

# fmt: off
PRICED = [
    # (what the row says, the state, what the engine saw, what it does)
    ("Anthropic: the newest result the next clear stubs is sent unwritten",
     priced(ANTHROPIC_PRICE), NEWEST, marks(1, False)),
    ("OpenAI: every prefix sent is written anyway, nothing to leave out",
     priced(OPENAI_PRICE), NEWEST, marks(1, True)),
    ("a compatible server: no price, nothing to leave out",
     priced(SERVER_PRICE), NEWEST, marks(1, True)),
    ("Anthropic: a deep clear repays its rewrite at 0.1x reads",
     priced(ANTHROPIC_PRICE), DEEP, kind(Clear)),
    ("OpenAI: at 0.05x reads it does not: a bigger batch later",
     priced(OPENAI_PRICE), DEEP, same(Nothing())),
    ("a compatible server: the minimum batch alone decides",
     priced(SERVER_PRICE), DEEP, kind(Clear)),
    ("OpenAI: the batch the next round needs to stay below the trigger goes",
     priced(OPENAI_PRICE), NEAR, kind(Clear)),
    ("Anthropic: idle past the 5-minute TTL, any batch goes",
     priced(ANTHROPIC_PRICE, cache=Cached(at=100.0)), IDLE, kind(Clear)),
    ("OpenAI: the same gap is inside the 30 minutes a write buys: the minimum holds",
     priced(OPENAI_PRICE, cache=Cached(at=100.0)), IDLE, same(Nothing())),
    ("a compatible server keeps its cache while it runs: never cold",
     priced(SERVER_PRICE, cache=Cached(at=100.0)),
     dataclasses.replace(IDLE, at=100.0 + 10**6), same(Nothing())),
    ("Anthropic: after a small round the next may be as small: the newest stays protected, written",
     priced(ANTHROPIC_PRICE, SMALLER, remembered(SMALLER, SMALLER_COUNTS)), AFTER_SMALL, marks(1, True)),
    ("Anthropic: after a big round the next may push past where L1 gets below the trigger: written",
     priced(ANTHROPIC_PRICE, BIGGER, remembered(BIGGER, BIGGER_COUNTS)), AFTER_BIG, marks(1, True)),
    ("Anthropic: after a compaction a small round sent before it may come again: written",
     priced(ANTHROPIC_PRICE, _AFTER, (*_SMALL_BEFORE, *remembered(_AFTER, _AFTER_COUNTS))),
     AFTER_COMPACTION, marks(1, True)),
    ("Anthropic: after a long edit a small round's call is small too: below the L1 line, written",
     priced(ANTHROPIC_PRICE, _EDITED, (("gone0", 300), *remembered(_EDITED, _EDITED_COUNTS))),
     AFTER_EDIT, marks(1, True)),
    ("Anthropic: after a compaction with every round sent as big (a survey): unwritten",
     priced(ANTHROPIC_PRICE, _AFTER, (*_BIG_BEFORE, *remembered(_AFTER, _AFTER_COUNTS))),
     AFTER_COMPACTION, marks(1, False)),
    ("Anthropic: L1 will not look until the history grew by its shortfall: written",
     priced(ANTHROPIC_PRICE, clear_skip=(ROUNDS[0].id, 10**6)), NEWEST, marks(1, True)),
    ("a clear that does not repay its rewrite waits: the newest is written",
     priced(CachePrice(read=0.005, write=1.25)), NEWEST, marks(1, True)),
    ("Anthropic: older reads already stubbed tell no round's size: the newest still goes unwritten",
     priced(ANTHROPIC_PRICE), STUBBED, marks(3, False)),
]
# fmt: on


@pytest.mark.parametrize(("says", "before", "seen", "does"), PRICED, ids=[r[0] for r in PRICED])
def test_priced_by_the_sessions_provider(
    says: str, before: EngineState, seen: Observation, does: Callable[[Action], bool]
) -> None:
    action, after = decide(before, seen)
    assert does(action), (says, action)
    assert after.price == before.price


def test_the_cache_price_is_the_wire_and_the_models() -> None:
    """`model_info.cache_price`: Anthropic's breakpoints at the model's ratios; OpenAI's automatic
    cache at the model's cached-input ratio, writes priced where the table lists a write price above
    the input price (GPT-5.6 and later: 30 minutes), free before; a compatible server's, no price."""
    assert CachePrice(read=0.1, write=1.25, ttl=300.0, marks=True) == ANTHROPIC_PRICE
    assert CachePrice(read=0.05, write=1.25, ttl=1800.0, marks=False) == OPENAI_PRICE
    older = cache_price("chat", lookup("gpt-5.6-sol"))  # the table lists its write at the input price
    assert (older.read, older.write, older.ttl, older.marks) == (0.1, 1.0, 300.0, False)
    assert SERVER_PRICE.free and SERVER_PRICE.ttl == float("inf") and not SERVER_PRICE.marks
    assert cache_price("messages", None) == CachePrice()  # a model the table does not know
    _, after = decide(state(), Reset(200_000, 32_000, OPENAI_PRICE))  # /model to another provider's
    assert after.price == OPENAI_PRICE
    _, kept = decide(after, Reset(200_000, 32_000))  # /resume: the model and its price stay
    assert kept.price == OPENAI_PRICE


def _span_ends(s: EngineState, history: list[Message], frames: Callable[[int], int]) -> list[int | None]:
    """Each request of `history` (one per user message) as `decide` marks it, the last request's
    messages being what the cache holds; the frame's tokens at request n are `frames(n)`."""
    ends: list[int | None] = []
    for n in range(1, len(history) + 1):
        sent = history[:n]
        if sent[-1].role != "user":
            continue
        action, s = decide(s, Sending(sent, [COUNTER.count_message(m) for m in sent], at=n, frame=frames(n)))
        assert isinstance(action, Mark)
        ends.append(action.span_end)
        s = dataclasses.replace(s, in_request=frozenset(m.id for m in sent))
    return ends


def test_each_request_marks_where_the_next_summarys_span_will_end_and_the_mark_stays_there() -> None:
    """The summary request sends its span as it is; on Anthropic's cache it reads the span back only
    from an entry alive at (or 20 blocks before) its end, and the entry written when that message was
    newest has expired by then. So each request marks where the span will end: the newest message
    while the history is under the line less the tail (written by its own request), then that same
    message, read and so kept alive by every request, even when a count moves by a few tokens.
    The span the plan cuts at the trigger ends at or just after it."""
    s = dataclasses.replace(state(), price=ANTHROPIC_PRICE)
    th = s.thresholds
    pairs = [m for n in range(14) for m in (user(filler(2_400, f"q{n}")), assistant(filler(2_400, f"r{n}")))]
    ends = _span_ends(s, pairs, lambda n: 40 * (n % 3))  # (a frame that moves: a learned ratio)
    users = [i for i, m in enumerate(pairs) if m.role == "user"]
    under = [i for i, end in zip(users, ends, strict=True) if end == i]  # the newest, written by its request
    held = ends[len(under)]
    assert len(under) >= 3 and under == users[: len(under)]
    assert held is not None and set(ends[len(under) :]) == {held}  # then the same message, every request
    counts = [COUNTER.count_message(m) for m in pairs]
    first = next(i for i in users if sum(counts[: i + 1]) >= th.trigger_at)  # the request at the trigger
    plan = plan_condense(pairs[: first + 1], counts[: first + 1], th, requested=False)
    assert plan is not None and held <= plan.cut - 1 <= held + 4  # the span ends at the mark or a little on


def test_the_span_end_mark_is_on_a_message_ending_its_turn_and_only_on_a_cache_that_reads_at_marks() -> None:
    s = dataclasses.replace(state(), price=ANTHROPIC_PRICE)
    # Two user messages in a row go on the wire as one turn: the first ends none, no mark goes there.
    joined = [user(filler(4_000, "a")), assistant(filler(4_000, "b")), user("ok"), user(filler(60_000, "c"))]
    counts = [COUNTER.count_message(m) for m in joined]
    action, _ = decide(s, Sending(joined, counts, at=1.0))
    assert isinstance(action, Mark) and action.span_end == 1
    for price in (OPENAI_PRICE, SERVER_PRICE):  # every prefix sent is kept: nothing to mark
        action, _ = decide(dataclasses.replace(s, price=price), Sending(joined, counts, at=1.0))
        assert isinstance(action, Mark) and action.span_end is None


def _checkpoints(
    s: EngineState, history: list[Message], at: Callable[[int], float] = float
) -> tuple[list[int | None], EngineState]:
    """Each request of `history` (one per user message) as `decide` marks it for an hour, the last
    request's messages being what the cache holds; request n goes at `at(n)` seconds."""
    out: list[int | None] = []
    for n in range(1, len(history) + 1):
        sent = history[:n]
        if sent[-1].role != "user":
            continue
        action, s = decide(s, Sending(sent, [COUNTER.count_message(m) for m in sent], at=at(n)))
        assert isinstance(action, Mark)
        out.append(action.checkpoint)
        s = dataclasses.replace(s, in_request=frozenset(m.id for m in sent))
    return out, s


# A 200k window and rounds of about 1,500 tokens (a reply and a prompt): 40 of them stay under L1.
BIG = dataclasses.replace(EngineState.start(ContextSettings(), 200_000, 8_000), price=ANTHROPIC_PRICE)
CHAT = [m for n in range(40) for m in (user(filler(3_000, f"p{n}")), assistant(filler(3_000, f"s{n}")))]


def _paused(n: int) -> float:
    return 10.0 * n + (400.0 if n >= 9 else 0.0)  # (the fifth prompt comes after a 6-minute pause)


def test_a_one_hour_checkpoint_is_named_once_a_pause_was_seen_and_moves_when_that_pays() -> None:
    """At a steady pace nothing is ever named (no request is cold: a 1-hour write would never be
    read). Once a request came after a pause past 5 minutes, a 1-hour entry is named at a newest
    message (only there is it written; the request writes only its round) and marked again by each
    request, and moves to the newest once what it would read back beyond the old one, times the
    saving at a cold request (1.15x) and the share of cold requests, outweighs the round at the extra
    1-hour price (0.75x)."""
    steady, _ = _checkpoints(BIG, CHAT)
    assert steady == [None] * len(steady)
    marks, s = _checkpoints(BIG, CHAT, _paused)
    users = [i for i, m in enumerate(CHAT) if m.role == "user"]
    counts = [COUNTER.count_message(m) for m in CHAT]
    assert marks[:5] == [None] * 5 and marks[5] == users[5]  # (the cold request names none)
    moved = [(before, after, i) for before, after, i in zip(marks[5:], marks[6:], users[6:], strict=False)
             if after != before]  # fmt: skip
    assert len(moved) >= 1 and s.cache.colds == 1
    for before, after, newest in moved:
        assert after == newest and before is not None
        chance = 1 / users.index(newest)  # (one cold among the requests before)
        gained, new = sum(counts[before + 1 : newest + 1]), sum(counts[newest - 1 : newest + 1])
        assert chance * 1.15 * gained >= 0.75 * new


def test_a_change_before_the_checkpoint_lets_it_go_and_a_cold_cache_names_none() -> None:
    """A change before the checkpoint would write everything from it on at 1 hour (2x): it is let
    go, and the next request that writes only its round names a new one. After a pause past 5
    minutes every 5-minute entry is gone: the request reads back up to the checkpoint (still named)
    and writes the rest, so none is named there; after an hour unused, none is left."""
    head = CHAT[:16]
    marks, s = _checkpoints(BIG, head, _paused)
    held = marks[-1]
    assert held is not None
    changed = [user("edited"), *CHAT[1:17]]  # (the first message changed: a new id)
    action, after = decide(s, Sending(changed, [COUNTER.count_message(m) for m in changed], at=600.0))
    assert isinstance(action, Mark) and action.checkpoint is None
    after = dataclasses.replace(after, in_request=frozenset(m.id for m in changed))
    more = [*changed, *CHAT[17:19]]
    action, _ = decide(after, Sending(more, [COUNTER.count_message(m) for m in more], at=601.0))
    assert isinstance(action, Mark) and action.checkpoint == len(more) - 1
    grown = CHAT[:17]
    counts = [COUNTER.count_message(m) for m in grown]
    action, _ = decide(s, Sending(grown, counts, at=s.cache.at + 400))  # (cold: the old one is read back)
    assert isinstance(action, Mark) and action.checkpoint == held
    action, _ = decide(s, Sending(grown, counts, at=s.cache.at + 3_700))  # an hour unused: gone
    assert isinstance(action, Mark) and action.checkpoint is None
    for price in (OPENAI_PRICE, SERVER_PRICE):  # every prefix sent is kept: nothing to mark
        marks, after = _checkpoints(dataclasses.replace(BIG, price=price), head, _paused)
        assert marks == [None] * len(marks)
        assert after.cache.sent is None  # (nor the ids hashed at every request to compare with)


def test_a_span_end_held_on_the_newest_message_of_a_request_sent_again_is_kept() -> None:
    """The message held as the span's end is the newest of a request sent again as the last one was
    (the last request held it), and the span's end moved one message back (a frame grown by a few
    tokens): the hold stays on it, which ends its turn. Before, it looked past the last message and
    raised IndexError."""
    s = dataclasses.replace(state(), price=ANTHROPIC_PRICE)
    th = s.thresholds
    third = 4 * ((th.trigger_at - th.keep_tail) // 3)
    history = [user(filler(third, "a")), assistant(filler(third, "b")), user(filler(third, "c"))]
    counts = [COUNTER.count_message(m) for m in history]
    held = Cached(held=history[-1].id)
    sent = dataclasses.replace(s, in_request=frozenset(m.id for m in history), cache=held)
    action, after = decide(sent, Sending(history, counts, at=1.0, frame=200))
    assert isinstance(action, Mark) and action.span_end == 2 and after.cache.held == history[-1].id

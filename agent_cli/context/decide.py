"""The context engine's one decision: a pure function from what it remembers and what it saw.

    action, state = decide(state, observation)

`EngineState` (engine_state.py) is everything the engine remembers between requests: its token
lines, the failure memory (the summarizer latch and the loop guard), the record on its way (one at
a time: prepared ahead, or being written while a digest stands in), the size the user chose
(/uncompact), what the last request held, and what the provider's cache holds by the engine's own
reckoning (the message the next clear keeps last, marked, and when). An *observation* is what the
engine saw: a request at one of its points, or how something it did came out. An *action* is what
to do about it. `decide` makes no call, starts no thread and reads no clock (time comes in the
observation); `ContextEngine` (engine.py) counts, calls it, carries the action out, and owns the
one background future: the summary call of the record on its way.

The table (docs/context-engine.md tells it in words; tests/test_decide.py holds every row). Each
line: what the engine saw, when, what it does -> the record on its way after.

    Quiet (below the L1 line, or after L1)
        a digest stands in, its record ready, the digest still leads  SwapIn          -> none
        its record ready, an edit took the digest away                Forget          -> none
        otherwise                                                     Nothing         -> as it was
    Prepare (above the prepare line, L1 idle)
        nothing on its way, the model may be asked, a span to cut     PrepareAhead    -> prepared ahead
        otherwise                                                     Nothing         -> as it was
    AtTrigger (at or past the trigger, automatic compaction on)
        under the hold line, prepared ahead, still leads, not ready   Hold            -> prepared ahead
        under the hold line, none on its way (a stale one dropped)    StartHeld       -> prepared ahead
        prepared ahead and ready; no digest may stand in; latched     Condense        -> none
        prepared ahead, still leads, not ready                        StandInDigest   -> none (its call)
        none on its way, a span to cut                                StandInDigest   -> none (a new call)
        nothing worth a record                                        Nothing         -> none
    DigestIn (the digest took the span's place)                       Nothing         -> standing in
    DigestTooBig (the digest does not shrink the request)             WaitForRecord   -> none
    Happened refused (the disk refused the span)                      Forget          -> none
    Happened skipped (the gate skipped the record just started)       Nothing         -> none
    Happened folded (an overflow or /compact condenses now)           Nothing         -> none if standing in
    Fared (how a model's record fared: the latch)                     Say once / Nothing
    Compacted (above the trigger after it, or not: the loop guard)    StopAutomatic / Nothing
    Happened requested, stopped (/compact; automatic compaction off)  Nothing         -> as it was
    Happened restarted, Reset, KeepSize (/clear; a model; /uncompact) Nothing         -> none
    SmallerWindow (an overflow error named a smaller window)          Say, every line follows it
    ClearShort (L1 found no batch worth clearing)                     Nothing; L1 waits for growth
    Sending (before a request)                                        Mark (the anchor)
    Answered (after a response; a usage report far below the count)  Say once / Nothing
    Happened ending (the run ends)
        a digest stands in                                            FinishRecord    -> none
        a record prepared ahead, not yet due                          Forget          -> none
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agent_cli.context.clear import next_change
from agent_cli.context.engine_state import (
    Ahead,
    Cached,
    CompactionState,
    EngineState,
    StandIn,
    SummaryOutcome,
)
from agent_cli.context.notices import loop_guard_stopped, smaller_window, under_reported
from agent_cli.context.plan import CondensePlan, plan_condense
from agent_cli.context.thresholds import compute_thresholds, output_for_window
from agent_cli.core.events import CompactTrigger
from agent_cli.core.messages import Message

__all__ = [
    "Action",
    "Answered",
    "AtTrigger",
    "ClearShort",
    "Compacted",
    "Condense",
    "DigestIn",
    "DigestTooBig",
    "Fared",
    "FinishRecord",
    "Forget",
    "Happened",
    "Happening",
    "Hold",
    "KeepSize",
    "Mark",
    "Nothing",
    "Observation",
    "Prepare",
    "PrepareAhead",
    "Quiet",
    "Reset",
    "Say",
    "Sending",
    "SmallerWindow",
    "StandInDigest",
    "StartHeld",
    "StopAutomatic",
    "SwapIn",
    "WaitForRecord",
    "decide",
    "takes_call",
]


# -- observations: what the engine saw --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quiet:
    """A request below the L1 line (or the size the user chose), or after L1: may a record swap in?"""

    messages: Sequence[Message]
    ready: bool  # the background call has ended


@dataclass(frozen=True, slots=True)
class Prepare:
    """A request above the prepare line, automatic compaction on, L1 idle."""

    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int


@dataclass(frozen=True, slots=True)
class AtTrigger:
    """A request at or past the L2 trigger, automatic compaction on."""

    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int
    ready: bool


@dataclass(frozen=True, slots=True)
class DigestIn:
    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class DigestTooBig:
    plan: CondensePlan
    path: str
    ahead: bool  # its call was started before the trigger


Happening = Literal["refused", "skipped", "folded", "requested", "stopped", "restarted", "ending"]


@dataclass(frozen=True, slots=True)
class Happened:
    """What the engine was told or did that changes what it remembers: the disk refused a span
    (`refused`), the gate skipped the record just started (`skipped`), an overflow or /compact
    condenses now (`folded`: a digest standing in goes into its span), /compact or the model's
    compact call (`requested`), automatic compaction turned off (`stopped`), /clear (`restarted`),
    the run ends (`ending`: no later request will take a record made in the background)."""

    what: Happening


@dataclass(frozen=True, slots=True)
class Fared:
    summary: SummaryOutcome
    trigger: CompactTrigger = "auto"


@dataclass(frozen=True, slots=True)
class Compacted:
    failed: bool


@dataclass(frozen=True, slots=True)
class Reset:
    window: int
    max_output: int


@dataclass(frozen=True, slots=True)
class SmallerWindow:
    """The provider named a smaller window in an overflow error: every line follows it, and the
    reply shrinks with it (a prompt plus max_tokens over the window is refused too)."""

    window: int


@dataclass(frozen=True, slots=True)
class ClearShort:
    """L1 found no batch worth clearing: while the history starting with message `key` stays below
    `below`, it need not look again (what L1 could free grows by at most what the history grows)."""

    key: str
    below: int


@dataclass(frozen=True, slots=True)
class KeepSize:
    tokens: int


@dataclass(frozen=True, slots=True)
class Sending:
    """Before a request: the history, its messages' counts (None when it holds no tool result: then
    nothing is counted), and the time."""

    messages: Sequence[Message]
    counts: Sequence[int] | None
    at: float


@dataclass(frozen=True, slots=True)
class Answered:
    """After a response: the ids of the messages the request held, and the local count when the
    provider's usage report was far below it (None otherwise)."""

    sent: frozenset[str]
    reported: int
    counted: int | None


Observation = (
    Quiet | Prepare | AtTrigger | DigestIn | DigestTooBig | Happened | Fared | Compacted | Reset | KeepSize
    | SmallerWindow | ClearShort | Sending | Answered
)  # fmt: skip


# -- actions: what the engine does about it ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Nothing:
    pass


@dataclass(frozen=True, slots=True)
class Hold:
    """Past the trigger, under the hold line: the request goes as it is; its record is on its way."""


@dataclass(frozen=True, slots=True)
class SwapIn:
    """The record made in the background takes the place of the digest that stood in for it."""

    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class Forget:
    """The record on its way is of no use: its call is cancelled, its reply not read."""


@dataclass(frozen=True, slots=True)
class PrepareAhead:
    """Start the record of the span `plan` cuts (once the gate lets it go); the request goes on."""

    plan: CondensePlan


@dataclass(frozen=True, slots=True)
class StartHeld:
    """Past the trigger, under the hold line: start the record a summary now would make (once the
    gate lets it go) and let the request go as it is."""

    plan: CondensePlan


@dataclass(frozen=True, slots=True)
class Condense:
    """L2 now, the turn waiting for its record: the one prepared ahead (`ahead`), or one made now."""

    ahead: Ahead | None


@dataclass(frozen=True, slots=True)
class StandInDigest:
    """A digest of the span of `plan` now, the model's record written in the background: the call
    prepared ahead goes on (`reuse`), or the one a summary now would make is started."""

    plan: CondensePlan
    reuse: bool


@dataclass(frozen=True, slots=True)
class WaitForRecord:
    """The digest could not stand in: the turn waits for the record the call already made writes."""

    plan: CondensePlan
    path: str
    ahead: bool


@dataclass(frozen=True, slots=True)
class FinishRecord:
    """The run ends with a digest standing in: wait for its record and swap it in, so no digest is
    left where a record was due."""

    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class Say:
    """A notice for the user (the latch just began to hold; a usage report not believed)."""

    text: str


@dataclass(frozen=True, slots=True)
class StopAutomatic:
    """The loop guard stopped automatic compaction, after `failures` in a row."""

    failures: int
    text: str


@dataclass(frozen=True, slots=True)
class Mark:
    """The message to mark for the provider's cache (the last the next clear keeps), if any."""

    anchor: int | None


Action = (
    Nothing | Hold | SwapIn | Forget | PrepareAhead | StartHeld | Condense | StandInDigest
    | WaitForRecord | FinishRecord | Say | StopAutomatic | Mark
)  # fmt: skip


def takes_call(action: Action) -> bool:
    """Whether carrying `action` out takes the background call (else the call follows the record)."""
    return (
        isinstance(action, SwapIn | FinishRecord)
        or (isinstance(action, Condense) and action.ahead is not None)
        or (isinstance(action, StandInDigest) and action.reuse)
    )


# -- the decision ---------------------------------------------------------------------------


def decide(state: EngineState, seen: Observation) -> tuple[Action, EngineState]:
    """What to do about `seen`, and what the engine remembers after."""
    r = dataclasses.replace
    match seen:
        case Quiet():
            return _quiet(state, seen)
        case Prepare():
            return _prepare(state, seen)
        case AtTrigger():
            return _at_trigger(state, seen)
        case DigestIn(stand_in):
            return Nothing(), r(state, record=stand_in)
        case DigestTooBig(plan, path, ahead):
            return WaitForRecord(plan, path, ahead), r(state, record=None)
        case Happened(what):
            return _happened(state, what)
        case Fared(summary, trigger):
            failures, latched = state.failures.summary(summary, state.limits, trigger=trigger)
            return (Say(latched) if latched else Nothing()), r(state, failures=failures)
        case Compacted(failed):
            failures, stopped = state.failures.compaction(failed, state.limits)
            if stopped:
                text = loop_guard_stopped(failures.compaction_failures)
                return StopAutomatic(failures.compaction_failures, text), r(state, failures=failures)
            return Nothing(), r(state, failures=failures)
        case Reset(window, max_output):
            th = compute_thresholds(state.settings, window, max_output)
            return Nothing(), _fresh(r(state, thresholds=th, max_output=max_output, said_under_report=False))
        case SmallerWindow(window) if 0 < window < state.thresholds.window:
            output = output_for_window(state.max_output, window)
            th = compute_thresholds(state.settings, window, output)
            return Say(smaller_window(window)), r(state, thresholds=th, max_output=output)
        case SmallerWindow():
            return Nothing(), state
        case ClearShort(key, below):
            return Nothing(), r(state, clear_skip=(key, below))
        case KeepSize(tokens):
            th = state.thresholds
            return Nothing(), r(state, record=None, still_below=tokens + th.trigger_at - th.target)
        case Sending():
            return _sending(state, seen)
        case Answered(sent, reported, counted):
            state = r(state, in_request=sent)
            if counted is None or state.said_under_report:
                return Nothing(), state
            return Say(under_reported(reported, counted)), r(state, said_under_report=True)
    raise TypeError(f"not an observation: {seen!r}")  # pragma: no cover


def _happened(state: EngineState, what: Happening) -> tuple[Action, EngineState]:
    r = dataclasses.replace
    match what:
        case "refused":
            return Forget(), r(state, record=None)
        case "skipped":
            return Nothing(), r(state, record=None)
        case "folded":
            return Nothing(), r(state, record=None if isinstance(state.record, StandIn) else state.record)
        case "requested":
            return Nothing(), r(state, failures=state.failures.requested())
        case "stopped":
            return Nothing(), r(state, failures=state.failures.stopped())
        case "restarted":
            return Nothing(), _fresh(state)
        case "ending" if isinstance(state.record, StandIn):
            return FinishRecord(state.record), r(state, record=None)
    return (Forget() if state.record else Nothing()), r(state, record=None)  # ending


def _fresh(state: EngineState) -> EngineState:
    """`/clear`, another model or session: past failures no longer count, nothing is on its way."""
    return dataclasses.replace(
        state, failures=CompactionState.fresh(), record=None, clear_skip=("", 0), still_below=0,
        in_request=frozenset(),
    )  # fmt: skip


def _quiet(state: EngineState, seen: Quiet) -> tuple[Action, EngineState]:
    record = state.record
    if not isinstance(record, StandIn) or not seen.ready:
        return Nothing(), state
    cleared = dataclasses.replace(state, record=None)
    if not record.leads(seen.messages):  # (an edit of the history took the digest away)
        return Forget(), cleared
    return SwapIn(record), cleared


def _prepare(state: EngineState, seen: Prepare) -> tuple[Action, EngineState]:
    """Above the prepare line, with L1 idle: start the record of the span L2 would cut, while the
    model may be asked. What arrives until the trigger joins the verbatim tail, so the tail kept now
    is smaller by that much: at the swap it is about the tail a blocking summary keeps."""
    if state.record is not None or not state.may_call:
        return Nothing(), state  # (a digest standing in: a span planned now would not lead once it swaps)
    th = state.thresholds
    sooner = dataclasses.replace(th, keep_tail=max(th.keep_tail - (th.trigger_at - seen.tokens), 0))
    plan = plan_condense(seen.messages, seen.counts, sooner, requested=False)
    if plan is None:
        return Nothing(), state
    return PrepareAhead(plan), dataclasses.replace(state, record=Ahead(plan, tuple(plan.span(seen.messages))))


def _at_trigger(state: EngineState, seen: AtTrigger) -> tuple[Action, EngineState]:
    """Past the trigger: hold (the request goes while its record is made), or L2 now."""
    th, record, messages = state.thresholds, state.record, seen.messages
    r = dataclasses.replace
    if seen.tokens < th.hold_at and not isinstance(record, StandIn):
        if isinstance(record, Ahead) and record.leads(messages) and not seen.ready:
            return Hold(), state
        if not (isinstance(record, Ahead) and record.leads(messages)):
            state = r(state, record=None)  # its span changed: the record is of no use
            plan = plan_condense(messages, seen.counts, th, requested=False) if state.may_call else None
            if plan is not None:
                return StartHeld(plan), r(state, record=Ahead(plan, tuple(plan.span(messages))))
    # L2 now. A digest still standing in for a record not ready is folded into the new span (its
    # call is dropped: nobody waits for it); the record prepared ahead is taken if its span leads.
    taken = state.record if isinstance(state.record, Ahead) and state.record.leads(messages) else None
    state = r(state, record=None)
    if (taken is not None and seen.ready) or not state.stands_in or not state.may_call:
        return Condense(taken), state
    if taken is not None:
        return StandInDigest(taken.plan, reuse=True), state
    plan = plan_condense(messages, seen.counts, th, requested=False)
    if plan is None:
        return Nothing(), state  # nothing worth a record: not a failure
    return StandInDigest(plan, reuse=False), state


def _sending(state: EngineState, seen: Sending) -> tuple[Action, EngineState]:
    """The anchor: the last message the next clear keeps (see `clear.next_change`), if any."""
    change = next_change(seen.messages, seen.counts) if seen.counts is not None else None
    anchor = change - 1 if change else None
    named = seen.messages[anchor].id if anchor is not None else None
    cache = Cached(anchor=named, index=anchor, next_change=change, at=seen.at)
    return Mark(anchor), dataclasses.replace(state, cache=cache)

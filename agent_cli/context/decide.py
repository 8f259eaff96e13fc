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

Its values (the observations and the actions) are in engine_values.py; the rows that weigh the
provider's cache (`Clearing`, `PastTrigger`'s clear, `Sending`) are cache_choices.py's. The table
(docs/context-engine.md tells it in words; tests/test_decide.py holds every row). Each
line: what the engine saw, when, what it does -> the record on its way after.

    Quiet (below the L1 line, or after L1)
        a digest stands in, its record ready, the digest still leads  SwapIn          -> none
        a record owed by an earlier run, the digest still leads       FinishRecord    -> none
        its record ready (or owed), an edit took the digest away      Forget          -> none
        a record prepared ahead whose span no longer leads (/compact, an overflow's L2, an edit)
                                                                      Forget          -> none
        otherwise                                                     Nothing         -> as it was
    Prepare (above the prepare line, L1 idle; or below the trigger, the record on its way ready)
        prepared ahead, ready, still leads, the model's newest stated next step not in its span
        (or the cache cold)                                           Condense        -> none
        above the prepare line and L1 idle, nothing on its way, the model may be asked, a span to cut
                                                                      PrepareAhead    -> prepared ahead
        otherwise                                                     Nothing         -> as it was
    TurnEnded (a turn ended, the user to speak: the REPL says so)
        within half the verbatim tail below the trigger (or above the prepare line), as Prepare
                                                                      PrepareAhead    -> prepared ahead
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
    Compacted (after an automatic record: the loop guard)
        above the trigger, no record on its way for what is left, and more than the newest
        unanswered round keeps it there (or that round alone reaches the trigger)
                                                                      Drop (L4); StopAutomatic the 2nd time
        otherwise                                                     Nothing
    Happened requested, stopped (/compact; automatic compaction off)  Nothing         -> as it was
    Happened restarted, KeepSize (/clear; /uncompact)                 Nothing         -> none
    Reset (another model: /model; or a session resumed, its run ended first)
        a digest stands in, as much room for its record (or more)     Nothing         -> as it was
        a digest stands in, less room (its record would be cut)       Nothing         -> owed
        a record prepared ahead, the same working lines               Nothing         -> as it was
        a record prepared ahead, other lines                          Nothing         -> none
    SmallerWindow (an overflow error named a smaller window)          Say, every line follows it
    Clearing (above the L1 line, after L0)
        a batch worth clearing (past the trigger: one that gets below it; below it: one whose
        saving repays its rewrite before the trigger, or that the next round needs)  Clear
        the cache cold (the last request older than its TTL): any batch   Clear
        no batch worth clearing                                       Nothing; L1 waits for growth
    PastTrigger (L2 was asked at the trigger)
        it did not act (a hook skipped it, nothing worth a record), above the L1 line
                                                                      Clear (any batch worth clearing)
        it acted; or below the L1 line; or L1 waits for growth        Nothing
    Sending (before a request)                                        Mark (the anchor)
        on a cache that reads at marks: where the next span will end, the newest message under the
        trigger less the tail, then that message, held                Mark (span_end)
        the next clear takes the newest message's results, whether the next round is as small or
        as big as the last four (the clear's own gates and choice asked), writes at breakpoints
                                                                      Mark, newest not written
    Answered (after a response; a usage report far below the count)  Say once / Nothing
    Ending (the run ends)
        a digest stands in, its record ready, the digest still leads  SwapIn          -> none
        a digest stands in, its record not ready (or owed)            OweRecord       -> none
        a record prepared ahead, not yet due; a digest gone           Forget          -> none
    Owed (the session opened again owes the record of its digest;
          or the PreCompact gate blocked the FinishRecord just asked)  Nothing         -> owed
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agent_cli.context.cache_choices import clearing, sending
from agent_cli.context.cut import latest_user_index, open_round_start, plan_condense
from agent_cli.context.engine_state import Ahead, CompactionState, EngineState, StandIn
from agent_cli.context.engine_values import (
    Action,
    Answered,
    AtTrigger,
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
    Happening,
    Hold,
    KeepSize,
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
from agent_cli.context.notices import loop_guard_stopped, smaller_window, under_reported
from agent_cli.context.signals import stated_next_step
from agent_cli.context.thresholds import Thresholds, compute_thresholds, output_for_window
from agent_cli.core.messages import Message

__all__ = ["decide"]


# -- the decision ---------------------------------------------------------------------------


def decide(state: EngineState, seen: Observation) -> tuple[Action, EngineState]:
    """What to do about `seen`, and what the engine remembers after."""
    r = dataclasses.replace
    match seen:
        case Quiet():
            return _quiet(state, seen)
        case Prepare():
            return _prepare(state, seen)
        case TurnEnded(messages, counts, tokens):
            return _turn_ended(state, Prepare(messages, counts, tokens))
        case AtTrigger():
            return _at_trigger(state, seen)
        case DigestIn(stand_in):
            return Nothing(), r(state, record=stand_in)
        case DigestTooBig(plan, path, ahead):
            return WaitForRecord(plan, path, ahead), r(state, record=None)
        case Happened(what):
            return _happened(state, what)
        case Ending(messages, ready):
            return _ending(state, messages, ready)
        case Owed(stand_in):
            return Nothing(), r(state, record=dataclasses.replace(stand_in, owed=True))
        case Fared(summary, trigger):
            failures, latched = state.failures.summary(summary, state.limits, trigger=trigger)
            return (Say(latched) if latched else Nothing()), r(state, failures=failures)
        case Compacted(messages, tokens, counts):
            # A record built and still above the trigger (or thrown away for not shrinking) is a
            # failure; one still on its way for what is left (the hold, after a swap) is not, nor one
            # that only the newest part no layer may condense keeps above it (`_only_the_newest`).
            th, record = state.thresholds, state.record
            held = tokens < th.hold_at and isinstance(record, Ahead) and record.leads(messages)
            newest = _only_the_newest(messages, counts, tokens, th.trigger_at)
            failed = tokens >= th.trigger_at and not held and not newest
            failures, stopped = state.failures.compaction(failed, state.limits)
            state = r(state, failures=failures)
            if stopped:
                return StopAutomatic(
                    failures.compaction_failures, loop_guard_stopped(failures.compaction_failures)
                ), state
            return (Drop() if failed else Nothing()), state
        case Reset(window, max_output, price):
            th = compute_thresholds(state.settings, window, max_output)
            price = price or state.price
            record = _across_models(state.record, state.thresholds, th)
            state = r(state, thresholds=th, max_output=max_output, said_under_report=False, price=price)
            return Nothing(), r(_fresh(state), record=record)
        case SmallerWindow(window) if 0 < window < state.thresholds.window:
            output = output_for_window(state.max_output, window)
            th = compute_thresholds(state.settings, window, output)
            return Say(smaller_window(window)), r(state, thresholds=th, max_output=output)
        case SmallerWindow():
            return Nothing(), state
        case Clearing():
            return clearing(state, seen)
        case PastTrigger(acted, messages, counts, tokens, at):
            # L2 did not act (a PreCompact hook skipped it, ...): L1 clears what it can, free, before
            # L4 drops anything; it no longer holds back for L2's span, so below the trigger or not.
            th = state.thresholds
            if acted or tokens < th.clear_at or state.clear_skipped(messages, tokens, at):
                return Nothing(), state
            return clearing(state, Clearing(messages, counts, tokens, past=False, at=at))
        case KeepSize(tokens):
            th = state.thresholds
            return Nothing(), r(state, record=None, still_below=tokens + th.trigger_at - th.target)
        case Sending():
            return sending(state, seen)
        case Answered(sent, reported, counted):
            state = r(state, in_request=sent)
            if counted is None or state.said_under_report:
                return Nothing(), state
            return Say(under_reported(reported, counted)), r(state, said_under_report=True)
    raise TypeError(f"not an observation: {seen!r}")  # pragma: no cover


def _only_the_newest(messages: Sequence[Message], counts: Sequence[int], tokens: int, line: int) -> bool:
    """Whether only the newest part of `messages`, which no layer may condense, keeps the request at or
    above `line`: the tool round the model has not seen yet and the request it has not answered (the
    unanswered end `cut.plan_condense` leaves verbatim; L4 keeps them too). Without that part the
    request is below the line, so the compaction did what any could: the next request, once the
    model has seen the round, can condense it. Not when that part alone reaches the line: then no
    compaction gets the request below it, and compacting again on every request is the loop the
    guard stops."""
    if not messages or len(counts) != len(messages):
        return False
    end = len(messages) - 1 if messages[-1].is_plain_user else len(messages)
    newest = sum(counts[min(end, open_round_start(messages)) :])
    return 0 < newest < line and tokens - newest < line


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
    return Nothing(), _fresh(state)  # restarted


def _ending(state: EngineState, messages: Sequence[Message], ready: bool) -> tuple[Action, EngineState]:
    """The run ends: no later request takes a record made in the background. A digest standing in
    must not stay where a record was due: a record whose call has ended is swapped in now (no wait);
    one still being written is owed (exit does not wait for a call that may take minutes: the
    session logs it, and its next run makes it before its first request). A record prepared ahead
    was not due yet: dropped."""
    record, cleared = state.record, dataclasses.replace(state, record=None)
    if not isinstance(record, StandIn) or not record.leads(messages):
        return (Forget() if record else Nothing()), cleared
    if ready and not record.owed:
        return SwapIn(record), cleared
    return OweRecord(record), cleared


def _across_models(
    record: Ahead | StandIn | None, old: Thresholds, new: Thresholds
) -> Ahead | StandIn | None:
    """What of the record on its way another model keeps (`/model`; a session resumed has none left:
    its run ended first). A record's text does not depend on the model that reads it. One a digest
    stands in for (due now) goes on and is swapped in as before while the new lines give it the room
    it was asked for (`summary_cap`); with less (a smaller window or reply limit) it would be cut to
    fit, so it is owed instead: its call dropped, written again for the new lines before the next
    request (the digest must not stay where a record was due). One prepared ahead (not yet due) was
    planned for the old lines and holds L1 off its span: kept only while the lines are the same."""
    if isinstance(record, StandIn):
        return record if new.summary_cap >= old.summary_cap else dataclasses.replace(record, owed=True)
    same = (new.working, new.summary_cap) == (old.working, old.summary_cap)
    return record if same else None


def _fresh(state: EngineState) -> EngineState:
    """`/clear`, another model or session: past failures no longer count, nothing is on its way."""
    return dataclasses.replace(
        state, failures=CompactionState.fresh(), record=None, clear_skip=("", 0), still_below=0,
        in_request=frozenset(),
    )  # fmt: skip


def _quiet(state: EngineState, seen: Quiet) -> tuple[Action, EngineState]:
    record = state.record
    if isinstance(record, Ahead) and not record.leads(seen.messages):
        # Its span is gone (a summary made since took it: /compact, an overflow): of no use, and
        # left in place it would keep another record from starting above the prepare line, and its
        # call would run on for nothing.
        return Forget(), dataclasses.replace(state, record=None)
    if not isinstance(record, StandIn) or not (seen.ready or record.owed):
        return Nothing(), state
    cleared = dataclasses.replace(state, record=None)
    if not record.leads(seen.messages):  # (an edit of the history took the digest away)
        return Forget(), cleared
    return (FinishRecord(record) if record.owed else SwapIn(record)), cleared


def _prepare(state: EngineState, seen: Prepare) -> tuple[Action, EngineState]:
    """Above the prepare line, with L1 idle: start the record of the span L2 would cut, while the
    model may be asked. Its verbatim tail is smaller by the room left to the trigger (the tail a
    blocking summary keeps, less what would arrive by then).

    A record ready goes in at the next request, below the trigger: waiting for the trigger only
    carries the span in every request until then, read back each time, and the swap rewrites the
    cached conversation after the span whenever it comes (at the trigger, a larger tail). In the
    replay: chat at 200k -10%, chat at 32k -5% (records started at a turn's end), long and survey at
    200k -2% (docs/context-engine.md). It waits while the model's newest statement of what it does
    next (since the user's last request) lies in the span: a summary may drop the plan the turn is
    following, and by the trigger the turn has most often stated a newer one in the tail
    (`_plan_in_span`); once the cache has gone cold (an idle gap past its TTL: the next request
    writes everything again anyway) it goes in all the same. Also one started at a turn's end below
    the prepare line, and when L1 cleared at that request (a cold cache lets it clear any batch:
    `cache_choices.clearing`)."""
    record = state.record
    if (
        isinstance(record, Ahead)
        and seen.ready
        and record.leads(seen.messages)
        and (state.cold(seen.at) or not _plan_in_span(record, seen.messages))
    ):
        return Condense(record), dataclasses.replace(state, record=None)
    if not seen.starts:
        return Nothing(), state  # (below the prepare line, or L1 acted: no record starts here)
    if record is not None or not state.may_call:
        return Nothing(), state  # (a digest standing in: a span planned now would not lead once it swaps)
    th = state.thresholds
    sooner = dataclasses.replace(th, keep_tail=max(th.keep_tail - (th.trigger_at - seen.tokens), 0))
    plan = plan_condense(seen.messages, seen.counts, sooner, requested=False)
    if plan is None:
        return Nothing(), state
    return PrepareAhead(plan), dataclasses.replace(state, record=Ahead(plan, tuple(plan.span(seen.messages))))


def _plan_in_span(record: Ahead, messages: Sequence[Message]) -> bool:
    """Whether the model's newest statement of its next step since the user's last request (a
    "Next: ..." line, `signals.stated_next_step`) lies in the record's span: the tail would then hold
    the turn's plan only as the summary retold it."""
    since = latest_user_index(messages)
    for i in range(len(messages) - 1, -1 if since is None else since, -1):
        if messages[i].role == "assistant" and stated_next_step(messages[i].text):
            return i < record.plan.cut
    return False  # (no statement since the user's last request)


def _turn_ended(state: EngineState, seen: Prepare) -> tuple[Action, EngineState]:
    """A turn ended near the trigger: start the record now, while the user reads and types, as
    above the prepare line. Where the window leaves no room for a prepare line (`AHEAD_ROOM`: a
    large result between it and the trigger), the turn's end is the one point known to leave time
    before the next request; without it, the trigger would put a digest in the span's place and the
    model's record in the digest's at the next request, each rewriting the cached conversation. Near
    is half the verbatim tail below the trigger: the record's span is cut that much short of the
    tail (`_prepare`), which regrows by the trigger."""
    th = state.thresholds
    line = min(th.prepare_at, th.trigger_at - th.keep_tail // 2)
    if not line <= seen.tokens < th.trigger_at:
        return Nothing(), state
    return _prepare(state, seen)


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

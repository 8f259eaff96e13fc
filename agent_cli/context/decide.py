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

Its values (the observations and the actions) are in engine_values.py. The table
(docs/context-engine.md tells it in words; tests/test_decide.py holds every row). Each
line: what the engine saw, when, what it does -> the record on its way after.

    Quiet (below the L1 line, or after L1)
        a digest stands in, its record ready, the digest still leads  SwapIn          -> none
        a record owed by an earlier run, the digest still leads       FinishRecord    -> none
        its record ready (or owed), an edit took the digest away      Forget          -> none
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
    Compacted (after an automatic record: the loop guard)
        above the trigger, no record on its way for what is left       Drop (L4); StopAutomatic the 2nd time
        otherwise                                                     Nothing
    Happened requested, stopped (/compact; automatic compaction off)  Nothing         -> as it was
    Happened restarted, Reset, KeepSize (/clear; a model; /uncompact) Nothing         -> none
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
        the next clear takes the newest message's results, whether the next round is as small or
        as big as the last four (the clear's own gates and choice asked), writes at breakpoints
                                                                      Mark, newest not written
    Answered (after a response; a usage report far below the count)  Say once / Nothing
    Ending (the run ends)
        a digest stands in, its record ready, the digest still leads  SwapIn          -> none
        a digest stands in, its record not ready (or owed)            OweRecord       -> none
        a record prepared ahead, not yet due; a digest gone           Forget          -> none
    Owed (the session opened again owes the record of its digest)     Nothing         -> owed
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agent_cli.context.clear import clearable, is_stub, next_change
from agent_cli.context.engine_state import Ahead, Cached, CompactionState, EngineState, StandIn
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
    Happening,
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
    WaitForRecord,
)
from agent_cli.context.notices import loop_guard_stopped, smaller_window, under_reported
from agent_cli.context.plan import plan_condense
from agent_cli.context.thresholds import compute_thresholds, output_for_window
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
        case Compacted(messages, tokens):
            # A record built and still above the trigger (or thrown away for not shrinking) is a
            # failure; one still on its way for what is left (the hold, after a swap) is not.
            th, record = state.thresholds, state.record
            held = tokens < th.hold_at and isinstance(record, Ahead) and record.leads(messages)
            failed = tokens >= th.trigger_at and not held
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
            state = r(state, thresholds=th, max_output=max_output, said_under_report=False, price=price)
            return Nothing(), _fresh(state)
        case SmallerWindow(window) if 0 < window < state.thresholds.window:
            output = output_for_window(state.max_output, window)
            th = compute_thresholds(state.settings, window, output)
            return Say(smaller_window(window)), r(state, thresholds=th, max_output=output)
        case SmallerWindow():
            return Nothing(), state
        case Clearing():
            return _clearing(state, seen)
        case PastTrigger(acted, messages, counts, tokens, at):
            # L2 did not act (a PreCompact hook skipped it, ...): L1 clears what it can, free, before
            # L4 drops anything; it no longer holds back for L2's span, so below the trigger or not.
            th = state.thresholds
            if acted or tokens < th.clear_at or state.clear_skipped(messages, tokens, at):
                return Nothing(), state
            return _clearing(state, Clearing(messages, counts, tokens, past=False, at=at))
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


def _fresh(state: EngineState) -> EngineState:
    """`/clear`, another model or session: past failures no longer count, nothing is on its way."""
    return dataclasses.replace(
        state, failures=CompactionState.fresh(), record=None, clear_skip=("", 0), still_below=0,
        in_request=frozenset(),
    )  # fmt: skip


def _clearing(state: EngineState, seen: Clearing) -> tuple[Action, EngineState]:
    """L1: stub old tool results when a big enough batch can go (never in the span whose record is
    being prepared). Past the trigger it must also get the request below the trigger, else L2 takes
    the span whole (its summary sees the output, not stubs). Clearing is free and a summary is a
    model call: L1 carries what it can. A clear rewrites the cache from its first change on, hence
    the minimum batch; when the cache has gone cold (an idle gap past its TTL: `EngineState.cold`)
    the next request rewrites everything anyway, so any batch is worth clearing then."""
    th, messages = state.thresholds, seen.messages
    to_clear, freed = clearable(messages, seen.counts, protect_tokens=th.clear_protect, start=state.holds)
    cold = state.cold(seen.at)
    minimum = 1 if cold else th.clear_min_batch
    if freed < minimum or not to_clear:
        # What L1 could free grows by at most what the history grows: while the same history (same
        # first message) has not grown by the shortfall, there is no need to look again. Keeps
        # prepare O(new content) above the L1 line.
        key = messages[0].id if messages else ""
        return Nothing(), dataclasses.replace(
            state, clear_skip=(key, seen.tokens + th.clear_min_batch - freed)
        )
    if seen.past and seen.tokens - freed >= th.trigger_at:
        return Nothing(), state  # L1 alone cannot get below the trigger: L2 takes the span whole
    if not (cold or seen.past or _repays(state, seen, min(to_clear), freed)):
        return Nothing(), state  # a bigger batch later, or L2 takes the span: cheaper than this rewrite
    return Clear(to_clear, freed), state


def _quiet(state: EngineState, seen: Quiet) -> tuple[Action, EngineState]:
    record = state.record
    if not isinstance(record, StandIn) or not (seen.ready or record.owed):
        return Nothing(), state
    cleared = dataclasses.replace(state, record=None)
    if not record.leads(seen.messages):  # (an edit of the history took the digest away)
        return Forget(), cleared
    return (FinishRecord(record) if record.owed else SwapIn(record)), cleared


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
    """The anchor: the last message the next clear keeps (see `clear.next_change`), if any; and
    whether the newest message is worth writing to the cache (`_worth_writing`)."""
    change = next_change(seen.messages, seen.counts) if seen.counts is not None else None
    anchor = change - 1 if change else None
    named = seen.messages[anchor].id if anchor is not None else None
    cache = Cached(anchor=named, index=anchor, next_change=change, at=seen.at)
    newest = anchor is None or _worth_writing(state, seen)
    return Mark(anchor, newest), dataclasses.replace(state, cache=cache)


def _repays(state: EngineState, seen: Clearing, first: int, freed: int) -> bool:
    """Whether a warm clear below the trigger repays the rewrite it causes, in the session's cache
    prices (`EngineState.price`). The next request reads the prefix up to the clear's first change
    and sends what follows again: what the last request held after it, less the freed tokens, costs
    `write` instead of `read` (on OpenAI's automatic cache every such token; on Anthropic's up to the
    last breakpoint, about the same). The saving: the freed tokens are not read back at each later
    request until the trigger, about (trigger - the request after the clear) / a round like the
    newest. A clear that the next round needs to stay below the trigger is always worth it (L2 costs
    more), and a free cache (a compatible server) prices nothing: the minimum batch alone decides.
    With OpenAI's cheap reads (gpt-6.2-sol: 0.05x, writes 1.25x) a deep clear waits for a bigger
    batch, or for L2, where Anthropic's (0.1x) would clear now."""
    price, counts, th = state.price, seen.counts, state.thresholds
    round_tokens = max(sum(counts[-2:]), 1)  # what the next request adds: a round like the newest
    if price.free or price.write <= price.read or seen.tokens + round_tokens >= th.trigger_at:
        return True
    held = [i for i, m in enumerate(seen.messages) if m.id in state.in_request]
    end = held[-1] + 1 if held else len(counts)  # (the last request's messages: what the cache holds)
    rewrite = max(sum(counts[first:end]) - freed, 0)
    horizon = max((th.trigger_at - (seen.tokens - freed)) / round_tokens, 1.0)
    return freed * price.read * horizon >= rewrite * (price.write - price.read)


def _worth_writing(state: EngineState, seen: Sending) -> bool:
    """Whether writing the newest message to the cache pays. Written, it costs `write` a token now
    and `read` at the next request if it is still there; sent unwritten, 1 now and `write` at the
    next request if it is still there (nothing if the next clear stubs it). So it is written when
    write < 1 + p * (write - read), p the chance it is still there. p is 0 only when the next clear
    takes the newest message's results whatever the next round brings (a survey that reads a file a
    turn: each read is stubbed by the next clear, and writing it at 1.25x was paid for a read that
    never came), 1 otherwise. What the next clear does is asked of `_clearing` itself, on the history
    grown by a round (`_next_keeps`). The next round's size is not known: it is taken as small as the
    smallest and as big as the biggest of the recent rounds (`_next_rounds`), and the message is left
    unwritten only when the clear takes it in both. A smaller round leaves it inside L1's protected
    window, a bigger one sends the request past the trigger where the clear cannot get below it and
    L2's summary request reads it back; a missed write costs 0.9x a token, a wasted one 0.25x."""
    price, counts, messages = state.price, seen.counts, seen.messages
    if counts is None or len(messages) < 2 or not messages[-1].tool_results:
        return True
    if not price.marks or price.free:
        return True  # an automatic cache keeps every prefix sent: there is no write to leave out
    survives = any(_next_keeps(state, seen, n) for n in _next_rounds(messages, counts))
    return price.write < 1 + (price.write - price.read if survives else 0.0)


# (the recent rounds the next one is guessed from)
_RECENT_ROUNDS = 4


def _next_rounds(messages: Sequence[Message], counts: Sequence[int]) -> list[int]:
    """The sizes the next round is tried at: of the smallest and of the biggest tool results among
    the recent rounds not yet stubbed (the newest among them), each a message index to copy."""
    recent = [
        i
        for i in range(len(messages) - 1, 0, -1)
        if any(not is_stub(r) for r in messages[i].tool_results)  # (a stub tells no round's size)
    ][:_RECENT_ROUNDS]
    return sorted({min(recent, key=lambda i: counts[i]), max(recent, key=lambda i: counts[i])})


def _next_keeps(state: EngineState, seen: Sending, like: int) -> bool:
    """Whether the newest message is still there as sent at the next request, if the next round is
    like round `like` (its call and its results): what the engine does with that request, by the
    same tests it applies (the L1 line, /uncompact's size, `EngineState.clear_skipped`, `_clearing`)."""
    messages, counts, th = seen.messages, seen.counts or (), state.thresholds
    call, results = messages[like - 1], messages[like]
    grown = [*messages, dataclasses.replace(call, id=f"{call.id}+next"),
             dataclasses.replace(results, id=f"{results.id}+next")]  # fmt: skip
    grown_counts = [*counts, counts[like - 1], counts[like]]
    tokens = seen.frame + sum(grown_counts)
    if tokens < max(th.clear_at, state.still_below):
        return True  # no clear below the L1 line, nor below the size the user kept
    # (the state the next request meets: this one sent now and held whole)
    state = dataclasses.replace(
        state,
        in_request=frozenset(m.id for m in messages),
        cache=dataclasses.replace(state.cache, at=seen.at),
    )
    if state.clear_skipped(grown, tokens, seen.at):
        return True
    past = tokens >= th.trigger_at
    action, _ = _clearing(state, Clearing(grown, grown_counts, tokens, past, seen.at))
    # (not cleared, past the trigger: L2 comes, and its summary request reads the newest back)
    return not (isinstance(action, Clear) and len(messages) - 1 in action.to_clear)

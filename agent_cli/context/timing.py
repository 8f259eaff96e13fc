"""When L2's record is made, so that no turn waits on a summary.

    timing = RecordTiming(host, submit)
    timing.prepare(messages, frame, total)   # above the prepare line: start the record ahead
    timing.hold(messages, frame, total)      # past the trigger: may the request go as it is?
    timing.now(messages, frame, total)       # at the trigger: the record ahead, or a digest standing in
    timing.replace(messages, frame, total)   # a record made in the background takes its digest's place

Three ways, cheapest for the user first. Above the prepare line the record of the span L2 will cut
is started in the background (`ahead.RecordAhead`) and taken at the trigger. Past the trigger,
under the hold line, a request goes as it is while its record is on the way. Where a turn would
still wait (no record prepared, not ready, a round past the hold line), a mechanical digest of the
span stands in at once (`ahead.StandIn`) while the model writes the same record in the background;
at the first request after it is ready, the record takes the digest's place. Each record comes
from the request a summary made then would have sent, so the history after a swap is what that
summary would have given. The engine (`engine.py`) decides when a layer fires; this module only
when the model's record for it is made. The host is the engine: its thresholds, its layers, its
latch and its gate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from agent_cli.context.ahead import RecordAhead, StandIn, Submit, Taken
from agent_cli.context.layers import Condensed
from agent_cli.context.plan import CondensePlan, plan_condense
from agent_cli.context.protocol import Frame
from agent_cli.context.summaries import RecordHost
from agent_cli.context.summary_request import SummaryReply
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger
from agent_cli.core.messages import Message

__all__ = ["RecordTiming", "TimingHost"]


class TimingHost(RecordHost, Protocol):
    """What the record's timing reads of the engine, as it is at each call: what a record's making
    reads (its thresholds, its layers, its gate), and these."""

    @property
    def stands_in(self) -> bool:
        """A digest may stand in for a record (the setting on, records written by our summary call)."""
        ...

    def may_call(self) -> bool:
        """The latch lets the model be asked for a record."""
        ...


# L2 at the trigger, waiting for its record (`Taken`: the one prepared ahead, if any).
Condense = Callable[[list[Message], Frame, int, Taken | None], Condensed]
# The latch learns how a model's record fared; what went wrong is added to its events.
Judge = Callable[[Condensed, CompactTrigger], Condensed]


class RecordTiming:
    def __init__(self, host: TimingHost, submit: Submit, *, condense: Condense, judged: Judge) -> None:
        self._host = host
        self._condense, self._judged = condense, judged
        self._ahead = RecordAhead(submit)  # L2's record, prepared before the trigger
        self._stand_in: StandIn | None = None  # a digest in the place of a record still being made

    @property
    def holds(self) -> int:
        """The end of the span whose record is being prepared (0 when none): L1 leaves it alone."""
        return self._ahead.holds

    @property
    def swap_ready(self) -> bool:
        """Whether a record made in the background waits to take its digest's place (`replace`)."""
        return self._stand_in is not None and self._stand_in.ready

    def leads(self, messages: list[Message]) -> bool:
        """Whether a record is on its way for a span that still leads `messages`."""
        return self._ahead.leads(messages)

    def drop(self) -> None:
        """Forget every record on its way (a reset, /uncompact); their replies are not used."""
        self._ahead.drop()
        self.drop_stand_in()

    def drop_stand_in(self) -> None:
        """A digest standing in stays as it is: the record made next folds it into its span."""
        if self._stand_in is not None:
            self._stand_in.future.cancel()
        self._stand_in = None

    def summarize(self, messages: list[Message], frame: Frame, total: int) -> Condensed:
        """L2 at the trigger: the record prepared ahead, or one made now. A digest still standing in
        for a record not ready is folded into the new span (its call is dropped: nobody waits for it)."""
        self.drop_stand_in()
        return self.now(messages, frame, total, self._ahead.take(messages))

    def now(self, messages: list[Message], frame: Frame, total: int, taken: Taken | None) -> Condensed:
        """The record for the span L2 cuts now: the one prepared ahead, if it is ready; else, while the
        model may be asked, a digest stands in at once and the model writes the record in the
        background (the same call a summary now would make), so the turn waits for no summary. A
        digest that does not shrink the request cannot stand in: then the turn waits for that call."""
        host = self._host
        # (A provider's own record is carried as it came, after the history it was made for; with the
        # latch holding the model back, a digest is the record itself: nothing to stand in for.)
        if (taken is not None and taken.ready) or not host.stands_in or not host.may_call():
            return self._condense(messages, frame, total, taken)
        if taken is not None:
            plan, future = taken.plan, taken.future
        else:
            started = self._call(messages, frame)
            if started is None:
                return Condensed(messages, total, False)  # nothing to cut, or the gate skipped it
            plan, call = started
            future = self._ahead.submit(call)
        outcome = host.runner.condense(
            messages, plan, frame, total, thresholds=host.thresholds,
            layer=CompactLayer.SUMMARIZE, trigger="auto", focus=None, use_model=False,
        )  # fmt: skip
        if not outcome.acted and outcome.transcript:
            # Not even the digest shrinks the request (a large frame, a short span): it cannot stand
            # in. The turn waits for the record the model is writing, as it would with no digest:
            # that call is already paid for, and dropping it would leave the request to L4.
            return self._waited(
                messages, plan, frame, total, outcome.transcript, future, ahead=taken is not None
            )
        if not outcome.acted:
            future.cancel()
            return outcome
        events = tuple(
            dataclasses.replace(e, stand_in=True) if isinstance(e, CompactEvent) else e
            for e in outcome.events
        )
        outcome = dataclasses.replace(outcome, events=events)
        head = outcome.messages[: len(outcome.messages) - (len(messages) - plan.cut)]
        self._stand_in = StandIn(tuple(plan.span(messages)), tuple(head), outcome.transcript, future)
        return outcome

    def _waited(
        self,
        messages: list[Message],
        plan: CondensePlan,
        frame: Frame,
        total: int,
        path: str,
        future: Future[SummaryReply],
        *,
        ahead: bool,
    ) -> Condensed:
        """The model's record for the span of `plan` (saved to `path`), waited for: what a summary
        made now would have given (`ahead`: its call was started before the trigger)."""
        host = self._host
        built = host.runner.record_for(
            plan.span(messages), plan.tail(messages), frame, path, thresholds=host.thresholds,
            reply=future.result,
        )  # fmt: skip
        events = tuple(
            dataclasses.replace(e, ahead=ahead, messages_before=len(messages), tokens_before=total)
            if isinstance(e, CompactEvent)
            else e
            for e in built.events
        )
        return self._judged(dataclasses.replace(built, events=events, ahead=ahead), "auto")

    def replace(self, messages: list[Message], frame: Frame, total: int) -> Condensed:
        """The record made in the background in the place of the digest that stood in for it, once its
        call has ended (and the digest still leads); else the history as it is."""
        stand_in, host = self._stand_in, self._host
        if stand_in is None or not stand_in.ready:
            return Condensed(messages, total, False)
        self._stand_in = None
        if not stand_in.leads(messages):  # (an edit of the history took the digest away)
            return Condensed(messages, total, False)
        built = host.runner.record_for(
            stand_in.span, stand_in.tail(messages), frame, stand_in.path, thresholds=host.thresholds,
            reply=stand_in.future.result,
        )  # fmt: skip
        judged = self._judged(built, "auto")
        if built.failure is not None or not built.acted:  # the digest stays: what the record fell back to
            said = tuple(e for e in judged.events if not isinstance(e, CompactEvent))
            return Condensed(messages, total, False, events=said)
        events = tuple(
            dataclasses.replace(
                e, ahead=True, stand_in=True, messages_before=len(messages), tokens_before=total
            )
            if isinstance(e, CompactEvent)
            else e
            for e in judged.events
        )
        return dataclasses.replace(judged, events=events, ahead=True)

    def hold(self, messages: list[Message], frame: Frame, total: int) -> bool:
        """Past the trigger: whether this request may go as it is while its record is made in the
        background (under the hold line, a model asked for the record). A record on its way for the
        span still leading is left running; with none, the one a summary now would make is started."""
        if total >= self._host.thresholds.hold_at or self._stand_in is not None:
            return False  # (a digest standing in: folded into the record made now)
        if self._ahead.holds:
            if self._ahead.leads(messages):
                return not self._ahead.ready  # ready: taken now, with no wait
            self._ahead.drop()  # its span changed: the record is of no use
        if not self._host.may_call():
            return False  # a record built by code: no call to wait for
        host = self._host
        th = host.thresholds
        plan = plan_condense(messages, host.runner.counts(messages), th, requested=False)
        if plan is None:
            return False
        verdict = host.gate(CompactLayer.SUMMARIZE, "auto", None)
        if not verdict.skip:  # (skipped this turn, as the gate may: the request goes as it is; L4 still acts)
            span = plan.span(messages)
            self._ahead.start(plan, span, host.runner.summary_call(span, frame, th, None, verdict.extra))
        return True

    def prepare(self, messages: list[Message], frame: Frame, total: int) -> None:
        """Above the prepare line, with L1 idle: start the record of the span L2 would cut, while the
        model may be asked (not while the latch holds). The span is then L1's to leave alone.

        What arrives until the trigger joins the verbatim tail, so the tail kept now is smaller by
        that much: at the swap it is about the tail a blocking summary keeps."""
        if self._ahead.holds or self._stand_in is not None or not self._host.may_call():
            return  # (a digest standing in: a span planned now would not lead once its record arrives)
        th = self._host.thresholds
        sooner = dataclasses.replace(th, keep_tail=max(th.keep_tail - (th.trigger_at - total), 0))
        started = self._call(messages, frame, sooner)
        if started is not None:
            self._ahead.start(started[0], started[0].span(messages), started[1])

    def _call(
        self, messages: list[Message], frame: Frame, planned_by: Thresholds | None = None
    ) -> tuple[CondensePlan, Callable[[], SummaryReply]] | None:
        """The span L2 would cut now and the summary call for it, once the gate let it go."""
        host = self._host
        th = host.thresholds
        plan = plan_condense(messages, host.runner.counts(messages), planned_by or th, requested=False)
        if plan is None:
            return None
        verdict = host.gate(CompactLayer.SUMMARIZE, "auto", None)
        if verdict.skip:
            return None  # not a failure: L4 still acts at its line
        return plan, host.runner.summary_call(plan.span(messages), frame, th, None, verdict.extra)

"""L2 and L3's record for a span, and what the engine learns from how each fared.

    summaries = Summaries(host, limits)
    summaries.condense(messages, frame, total, "summarize", "auto", None)   # a record, judged
    summaries.note_result(failed)                                          # the loop guard

`condense` asks the plan for a span (or takes the one a record was prepared ahead for), asks the
gate (the user's PreCompact hooks) whether an automatic summary may go and what to add to its
instruction, and lets the layer runner make the record. Its owner keeps the latch (after repeated
summary failures the record is written by code) and the loop guard (after repeated compactions
that do not get below the trigger, automatic compaction stops), as one `CompactionState` value.
The host is the engine: its thresholds, its layers and its gate, as they are at each call.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from agent_cli.context.ahead import Taken
from agent_cli.context.gate import Gate, skippable
from agent_cli.context.latch import CompactionState, Limits
from agent_cli.context.layers import Condensed, LayerRunner
from agent_cli.context.notices import loop_guard_stopped, summary_outcome
from agent_cli.context.plan import CondensePlan, plan_condense
from agent_cli.context.protocol import EngineEvent, Frame
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message

__all__ = ["RecordHost", "Summaries"]


class RecordHost(Protocol):
    """What a record's making reads of the engine, as it is at each call."""

    @property
    def thresholds(self) -> Thresholds: ...

    @property
    def runner(self) -> LayerRunner: ...

    @property
    def gate(self) -> Gate: ...


class Summaries:
    def __init__(self, host: RecordHost, limits: Limits) -> None:
        self._host = host
        self.limits = limits
        self._state = CompactionState()  # the latch and the loop guard (latch.py)

    @property
    def state(self) -> CompactionState:
        return self._state

    def may_call(self) -> bool:
        """The latch lets the model be asked for a record."""
        return self._state.may_call(self.limits)

    def restart(self) -> None:
        """Past failures no longer count."""
        self._state = CompactionState.fresh()

    def requested(self) -> None:
        """The user or the model asked for a compaction: automatic compaction is on again."""
        self._state = self._state.requested()

    def stop(self) -> None:
        """Automatic compaction off, as the loop guard leaves it."""
        self._state = self._state.stopped()

    def condense(
        self,
        messages: list[Message],
        frame: Frame,
        total: int,
        layer: CompactLayer,
        trigger: CompactTrigger,
        focus: str | None,
        ahead: Taken | None = None,
    ) -> Condensed:
        """L2 / L3 where the plan finds a span worth a record; with `ahead`, the record prepared for
        its span (the plan it was made for, and its reply)."""
        run, thresholds = self._host.runner, self._host.thresholds
        requested = layer == CompactLayer.MANUAL  # L3: asked for by the user or the model
        if ahead is not None:
            plan: CondensePlan | None = ahead.plan
        else:
            plan = plan_condense(messages, run.counts(messages), thresholds, requested=requested)
        if plan is None:
            return Condensed(messages, total, False)
        extra = ""
        if ahead is None:  # (a record made ahead passed the gate when it was started)
            verdict = self._host.gate(layer, trigger, focus)
            if verdict.skip and skippable(trigger):
                return Condensed(messages, total, False)  # not a failure: L4 still acts at its line
            extra = verdict.extra
        use_model = requested or ahead is not None or self.may_call()
        outcome = run.condense(
            messages,
            plan,
            frame,
            total,
            thresholds=thresholds,
            layer=layer,
            trigger=trigger,
            focus=focus,
            use_model=use_model,
            reply=ahead.reply if ahead is not None else None,
            extra=extra,
        )
        if ahead is not None:  # its event says the record was made ahead
            marked = tuple(
                dataclasses.replace(e, ahead=True) if isinstance(e, CompactEvent) else e
                for e in outcome.events
            )
            outcome = dataclasses.replace(outcome, events=marked, ahead=True)
        return self.judged(outcome, trigger)

    def condense_auto(
        self, messages: list[Message], frame: Frame, total: int, taken: Taken | None
    ) -> Condensed:
        """L2 at the trigger (with the record prepared ahead for its span, if any)."""
        return self.condense(messages, frame, total, CompactLayer.SUMMARIZE, "auto", None, taken)

    def judged(self, outcome: Condensed, trigger: CompactTrigger) -> Condensed:
        """The latch learns how the model's record fared; what went wrong is said in one message."""
        self._state, latched = self._state.summary(outcome.summary, self.limits, trigger=trigger)
        notice = summary_outcome(outcome.failure, outcome.shortfall, outcome.transcript, latched)
        if notice:  # one message: what happened, and what follows
            return dataclasses.replace(outcome, events=(*outcome.events, WarningEvent(message=notice)))
        return outcome

    def note_result(self, failed: bool) -> list[EngineEvent]:
        """The loop guard: stop automatic compaction after repeated failures, and say so."""
        self._state, stopped = self._state.compaction(failed, self.limits)
        if not stopped:
            return []
        return [ErrorEvent(message=loop_guard_stopped(self._state.compaction_failures), kind="compaction")]

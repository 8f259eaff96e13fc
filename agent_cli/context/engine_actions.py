"""How the context engine carries out what `decide` chooses for L1 and L2.

`EngineActions` is the part of `ContextEngine` (engine.py) that keeps what the engine remembers (one
`EngineState`) and its one background call (`records.RecordAhead`: the summary of the record on its
way), asks `decide` (`_decide`) and carries each of L1's and L2's actions out: a clear (`Clear`), L2
at the trigger (hold, start the record, condense now, a digest standing in), a record swapped in (its
call ended, or owed by an earlier run), and the latch told how a record fared. `ContextEngine` adds
the loop's calls (ingest, prepare, observe, on_overflow, compact, finish) over it; `records.py` and
`layers.py` do the work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from agent_cli.config.settings import ContextSettings
from agent_cli.context import engine_values as v
from agent_cli.context import records
from agent_cli.context.cut import CondensePlan
from agent_cli.context.decide import decide
from agent_cli.context.engine_state import Ahead, CachePrice, EngineState
from agent_cli.context.layers import Condensed, LayerRunner, Step
from agent_cli.context.notices import summary_outcome
from agent_cli.context.protocol import Frame, Gate, open_gate
from agent_cli.context.summary_request import SummaryReply
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.events import CompactLayer, CompactTrigger, WarningEvent
from agent_cli.core.messages import Message
from agent_cli.core.thinking import settle_thinking

__all__ = ["EngineActions"]


class EngineActions:
    def __init__(
        self,
        settings: ContextSettings,
        window: int,
        max_output: int,
        run: LayerRunner,
        clock: Callable[[], float],
        submit: records.Submit = records.in_thread,
        gate: Gate = open_gate,
        price: CachePrice | None = None,
    ) -> None:
        self._clock = clock
        self._run = run  # runs a layer: archive first, recount, one event
        self._state = EngineState.start(settings, window, max_output, price)  # all the engine remembers
        self._call = records.RecordAhead(submit)  # the one background call: the record on its way
        self._gate = gate  # asked before each summary: the user's PreCompact hooks

    @property
    def thresholds(self) -> Thresholds:
        return self._state.thresholds

    # -- the decision, and the one background call ----------------------------------------

    def _start(self, plan: CondensePlan, messages: list[Message], frame: Frame) -> None:
        """The record of the span `plan` cuts, in the background (the gate may skip it: no failure)."""
        if not records.start_record(
            self._run, self.thresholds, self._gate, self._call, plan, messages, frame
        ):
            self._decide(v.Happened("skipped"))

    def _decide(self, seen: v.Observation) -> v.Action:
        """Ask `decide`, keep what it remembers; a call for a record it no longer has is cancelled."""
        action, self._state = decide(self._state, seen)
        if not v.takes_call(action):
            self._call.follow(self._state.record)
        return action

    # -- when L1 and L2 act ----------------------------------------------------

    def _clear(self, messages: list[Message], frame: Frame, total: int, *, past: bool) -> Step:
        """L1, as `decide` chooses: counted only when it is to look (see `cache_choices.clearing`).

        Past the trigger "below the trigger" is the count after the stubs, not the estimate (a stub
        is longer than the estimate allows): a result stubbed and then summarized anyway would be a
        change inside the span, and with a keep-tail record (Anthropic's) it costs the kept turns
        their thinking, which was bound to the result as it was sent (core/thinking.py)."""
        now = self._clock()
        if self._state.clear_skipped(messages, total, now):
            return Step(messages, total)
        action = self._decide(v.Clearing(messages, self._run.counts(messages), total, past, now))
        return self._cleared(action, messages, frame, total, self.thresholds.trigger_at if past else None)

    def _after_l2(self, acted: bool, messages: list[Message], frame: Frame, total: int) -> Step:
        """L1 after L2 was asked at the trigger, as `decide` chooses (it clears when L2 did not act)."""
        seen = v.PastTrigger(acted, messages, self._run.counts(messages), total, self._clock())
        return self._cleared(self._decide(seen), messages, frame, total, None)

    def _cleared(
        self, action: v.Action, messages: list[Message], frame: Frame, total: int, below: int | None
    ) -> Step:
        """L1's `Clear` carried out (`below`: the count the stubs must get the request under)."""
        if not isinstance(action, v.Clear):
            return Step(messages, total)
        return self._run.clear(messages, frame, total, action.to_clear, action.freed, below)

    def _at_trigger(self, messages: list[Message], frame: Frame, total: int) -> Condensed | None:
        """L2 at the trigger: held (None: the request goes while its record is made), or its record now."""
        action = self._decide(v.AtTrigger(messages, self._run.counts(messages), total, self._call.ready))
        match action:
            case v.Hold():
                return None
            case v.StartHeld(plan):
                self._start(plan, messages, frame)
                return None
            case v.Condense(ahead):
                future = self._call.take(messages) if ahead is not None else None
                return self._condense(
                    messages, frame, total, CompactLayer.SUMMARIZE, "auto", None, ahead, future
                )
            case v.StandInDigest(plan, reuse):
                outcome, seen = records.stand_in_now(
                    self._run, self.thresholds, self._gate, self._call, messages, plan, frame, total,
                    reuse=reuse,
                )  # fmt: skip
                if seen is not None:
                    self._decide(seen)
                return self._judged(outcome, "auto") if isinstance(seen, v.DigestTooBig) else outcome
        return Condensed(messages, total, False)  # nothing worth a record

    def _past_swap(self, history: Sequence[Message], swapped: Condensed, frame: Frame) -> Condensed:
        """The tail grew past the trigger while the record was prepared: L1 first (the span it had to
        leave alone is gone), then, if that is not enough, a summary made now (or held)."""
        cleared = self._clear(swapped.messages, frame, swapped.tokens, past=True)
        events = (*swapped.events, *cleared.events)
        settled = settle_thinking(history, cleared.messages)
        again = None
        if cleared.tokens >= self.thresholds.trigger_at:
            again = self._at_trigger(settled, frame, cleared.tokens)
        if again is None:
            return dataclasses.replace(
                swapped, messages=cleared.messages, tokens=cleared.tokens, events=events
            )
        return dataclasses.replace(again, events=(*events, *again.events))

    def _quiet(self, messages: list[Message], frame: Frame, total: int | None) -> Condensed:
        """The record made in the background in the place of the digest that stood in for it, once
        its call has ended (and the digest still leads), or the one an earlier run owed, made now;
        else the history as it is (`total`: its count, None when not counted: it is counted only
        for a swap)."""
        return self._swap(self._decide(v.Quiet(messages, self._call.ready)), messages, frame, total)

    def _swap(self, action: v.Action, messages: list[Message], frame: Frame, total: int | None) -> Condensed:
        """`SwapIn` (the background call's record) or `FinishRecord` (an owed record, its call made
        now, once the gate lets it go, as any automatic compaction: bounded by the summary call's
        timeout; blocked, or on Ctrl-C, it stays owed) carried out."""
        extra = ""
        if isinstance(action, v.SwapIn):
            future = self._call.take(messages)
            if future is None:
                return Condensed(messages, total or 0, False)
            reply: Callable[[], SummaryReply] | None = future.result
        elif isinstance(action, v.FinishRecord):
            # A new run's hooks are asked anew (their additionalContext was not logged with the span).
            # Blocked, the digest stays and the record stays owed: asked again before the next
            # request, as a blocked automatic compaction is, and logged owed if the run ends first.
            verdict = self._gate(CompactLayer.SUMMARIZE, "auto", None)
            if verdict.skip:
                self._decide(v.Owed(action.stand_in))
                return Condensed(messages, total or 0, False)
            reply, extra = None, verdict.extra
        else:
            return Condensed(messages, total or 0, False)
        total = self._run.count(frame, messages) if total is None else total
        try:
            built = records.swap_record(
                self._run, self.thresholds, action.stand_in, messages, frame, reply, extra
            )
        except KeyboardInterrupt:
            if reply is None:
                self._decide(v.Owed(action.stand_in))  # (still owed: the session's next run makes it)
            raise
        return records.swapped_in(built, self._judged(built, "auto"), messages, total)

    def _condense(
        self,
        messages: list[Message],
        frame: Frame,
        total: int,
        layer: CompactLayer,
        trigger: CompactTrigger,
        focus: str | None,
        ahead: Ahead | None = None,
        future: Future[SummaryReply] | None = None,
    ) -> Condensed:
        """L2 / L3 now (with the record prepared ahead for its span, if any), judged."""
        outcome = records.condense_now(
            self._run, self.thresholds, self._gate, messages, frame, total, layer, trigger, focus,
            may_call=self._state.may_call, ahead=ahead, future=future,
        )  # fmt: skip
        return self._judged(outcome, trigger)

    def _judged(self, outcome: Condensed, trigger: CompactTrigger) -> Condensed:
        """The latch learns how the model's record fared; what went wrong is said in one message."""
        latched = self._decide(v.Fared(outcome.summary, trigger))
        text = latched.text if isinstance(latched, v.Say) else None
        notice = summary_outcome(outcome.failure, outcome.shortfall, outcome.transcript, text)
        if notice:  # one message: what happened, and what follows
            return dataclasses.replace(outcome, events=(*outcome.events, WarningEvent(message=notice)))
        return outcome

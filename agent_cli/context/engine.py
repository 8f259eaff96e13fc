"""The context engine: decides which layer fires so every request fits the model's window.

`ContextEngine` is the one object the loop talks to (it implements
`protocol.ContextPolicy`). It owns the little state the layers need across
turns (the thresholds, learned from the provider when it reports a smaller
window, and the loop guard's failure count) and decides, cheapest first:

    ingest      L0 cap a tool result as it arrives
    prepare     L1 clear old results, L2 condense at the trigger (L1 alone only if it
                reaches the target), L4 drop at the emergency line
    on_overflow learn the true count, force L2 then L4 down to the target, or raise
    compact     L3: condense the whole conversation now, steered by a focus

A record for a span, and what the engine learns from how it fared (the latch, the loop guard), is
`summaries.Summaries`: before each summary it asks the gate (`gate.py`: the user's PreCompact
hooks), which may skip an automatic one or add to its instruction; the emergency line holds
whatever the gate says. How a layer runs (archive first, one CompactEvent each) is `layers.LayerRunner`;
where L2 cuts is `plan.plan_condense`; when its record is made (prepared ahead, held, or with a
digest standing in, so no turn waits on a summary) is `timing.RecordTiming`. `prepare` costs one
count when nothing fires.
Whatever a layer changes, the thinking blocks after the change go with it
(`core.thinking.settle_thinking`), so the request passes the prefix check.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from agent_cli.config.settings import ContextSettings
from agent_cli.context.ahead import Submit, in_thread
from agent_cli.context.breakdown import Breakdown, compute_breakdown
from agent_cli.context.clear import clearable, next_change
from agent_cli.context.gate import Gate, open_gate
from agent_cli.context.latch import CompactionState, Limits
from agent_cli.context.layers import Condensed, LayerRunner, Step
from agent_cli.context.notices import (
    overflow_unresolved,
    smaller_window,
    under_reported,
)
from agent_cli.context.protocol import EngineEvent, Frame, Prepared
from agent_cli.context.summaries import Summaries
from agent_cli.context.summary_request import Summarize
from agent_cli.context.thresholds import (
    MIN_SHARED_CAP,
    Counter,
    Thresholds,
    compute_thresholds,
    output_for_window,
)
from agent_cli.context.timing import RecordTiming
from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, WarningEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.core.thinking import settle_thinking
from agent_cli.store.archive import Archive

# Counts here are estimates until the provider reports: a request this far over the whole window
# is refused whatever the estimate's error, so it is not sent.
UNSENDABLE_OVER_WINDOW = 1.25

__all__ = ["ContextEngine"]

NOTHING_TO_COMPACT = "Nothing to compact yet: the conversation has no earlier part to condense."


class ContextEngine:
    def __init__(
        self,
        *,
        settings: ContextSettings,
        window: int,
        max_output: int,
        counter: Counter,
        archive: Archive,
        summarize: Summarize,
        clock: Callable[[], float] = time.monotonic,
        submit: Submit = in_thread,
        gate: Gate = open_gate,
    ) -> None:
        self.settings = settings
        self._gate = gate  # asked before each summary (gate.py): the user's PreCompact hooks
        self._clock = clock
        self._run = LayerRunner(counter, archive, summarize, clock)
        limits = Limits(settings.summary_failures_to_latch, settings.latch_compactions, settings.max_failures)
        self._summaries = Summaries(self, limits)  # the record for a span, the latch and the loop guard
        # When L2's record is made: ahead, while the request goes on, or with a digest standing in.
        self._timing = RecordTiming(
            self, submit, condense=self._summaries.condense_auto, judged=self._summaries.judged
        )
        self.max_output = max_output
        self.thresholds: Thresholds = compute_thresholds(settings, window, max_output)
        self._clear_skip = ("", 0)  # (first message id, count): L1 found no batch below that count
        self._said_under_report = False  # a usage report far below the local count is said once
        self._still_below = 0  # after /uncompact: no automatic L1 or L2 until the count reaches this
        self._in_request: frozenset[str] = frozenset()  # the ids of the messages the last request held

    def reset(
        self,
        *,
        window: int,
        max_output: int,
        counter: Counter | None = None,
        summarize: Summarize | None = None,
        archive: Archive | None = None,
    ) -> None:
        """Another model or session from now on: its window and output reserve set every line, and
        the loop guard starts over. A new model brings its own counter (vocabulary, learned ratio,
        anchor) and summary call; a new session its own archive."""
        run = self._run
        self._run = LayerRunner(
            counter or run.counter, archive or run.archive, summarize or run.summarize, self._clock
        )
        self.max_output = max_output
        self.thresholds = compute_thresholds(self.settings, window, max_output)
        self._said_under_report = False
        self.restart()

    def restart(self) -> None:
        """A fresh start (`/clear`, another model or session): past failures no longer count."""
        self._summaries.restart()
        self._clear_skip = ("", 0)
        self._still_below = 0
        self._in_request = frozenset()
        self._timing.drop()

    def keep_size(self, tokens: int) -> None:
        """The user chose a context of `tokens` (/uncompact): L1 and L2 leave it alone until it has
        grown by the trigger's margin over the target; L4 still guards the window."""
        self._timing.drop()
        self._still_below = tokens + self.thresholds.trigger_at - self.thresholds.target

    @property
    def state(self) -> CompactionState:
        """What the engine remembers of its failures (the latch and the loop guard), as a value."""
        return self._summaries.state

    @property
    def limits(self) -> Limits:
        return self._summaries.limits

    @property
    def auto_compact(self) -> bool:
        """False once the loop guard stopped automatic compaction (a requested compaction restarts it)."""
        return self._summaries.state.automatic

    def stop_automatic(self) -> None:
        """Automatic compaction off, as the loop guard leaves it (only L1 and L4 act)."""
        self._summaries.stop()

    @property
    def window(self) -> int:  # as the engine knows it: it learns a smaller one from errors
        return self.thresholds.window

    @property
    def counter(self) -> Counter:
        return self._run.counter

    @property
    def archive(self) -> Archive:
        return self._run.archive

    # -- what the record's timing reads (timing.TimingHost) ------------------------

    @property
    def runner(self) -> LayerRunner:
        return self._run

    @property
    def gate(self) -> Gate:
        return self._gate

    @property
    def stands_in(self) -> bool:
        # (A provider's own record is carried as it came, after the history it was made for: no digest
        # stands in for it.)
        return self.settings.digest_stands_in and self.settings.summarizer == "model"

    def may_call(self) -> bool:
        return self._summaries.may_call()

    # -- the loop's calls ----------------------------------------------------

    def ingest(
        self, use: ToolUse, result: ToolResult, *, round_size: int = 1
    ) -> tuple[ToolResult, CompactEvent | None]:
        """L0: an oversized result is saved in full, then cut to head + tail. The `round_size`
        results of one turn share the cap: the round stays verbatim until the model saw it."""
        limit = max(self.thresholds.tool_result_cap // max(round_size, 1), MIN_SHARED_CAP)
        # ASCII text takes at most one token a character, two at the highest learned ratio: such a
        # result that fits even so needs no count. Other text (emoji run to 3+ tokens a character)
        # is counted.
        if result.content.isascii() and len(result.content) * 2 <= limit:
            return result, None
        return self._run.cap(use, result, limit)

    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared:
        """Before every request: L1, L2 and L4 as the count requires."""
        messages = list(history)
        th = self.thresholds
        far = self.counter.fits_under(frame.system, frame.tools, messages, th.clear_at)
        if far and not self._timing.swap_ready:
            return Prepared(settle_thinking(history, messages), [])  # far from every line: not counted
        total = self._run.count(frame, messages)
        if total < th.clear_at or (total < self._still_below and total < th.emergency_at):
            swapped = self._timing.replace(messages, frame, total)  # (nothing, unless a record is ready)
            return Prepared(settle_thinking(history, swapped.messages), list(swapped.events))
        capped = self._run.cap_inputs(messages, frame, total, th.tool_result_cap)
        past = capped.tokens >= th.trigger_at and self.auto_compact
        cleared = self._clear(capped.messages, frame, capped.tokens, past=past)
        messages, total = cleared.messages, cleared.tokens
        events: list[EngineEvent] = [*capped.events, *cleared.events]
        # Thinking after a cleared result is bound to what was there: it goes before L2 sends the span.
        messages = settle_thinking(history, messages)
        # A record made in the background takes the place of the digest that stood in for it as soon as
        # it is ready: later requests read it from the cache, and so does the next summary call.
        swapped = self._timing.replace(messages, frame, total)
        messages, total = swapped.messages, swapped.tokens
        events += swapped.events
        failed = False
        if total >= th.trigger_at and self.auto_compact and self._timing.hold(messages, frame, total):
            pass  # its record is on its way and the request fits under the hold line: it goes as it is
        elif total >= th.trigger_at and self.auto_compact:
            outcome = self._timing.summarize(messages, frame, total)
            if outcome.acted and outcome.tokens >= th.trigger_at and outcome.ahead:
                outcome = self._past_swap(history, outcome, frame)
            messages, total = outcome.messages, outcome.tokens
            events += outcome.events
            # A record built and still above the trigger (or thrown away for not shrinking) is a failure;
            # nothing to condense costs nothing and is not.
            # A record still on its way for what is left (the hold, after a swap) is not a failure either.
            held = total < th.hold_at and self._timing.leads(messages)
            failed = outcome.attempted and total >= th.trigger_at and not held
            if outcome.attempted:
                events += self._summaries.note_result(failed)
        elif total >= th.prepare_at and self.auto_compact and not cleared.events:
            self._timing.prepare(messages, frame, total)
        if total >= th.emergency_at or (failed and total >= th.trigger_at):
            step = self._run.drop(messages, frame, total, th.target, trigger="auto")
            messages, total = step.messages, step.tokens
            events += step.events
        unsendable = None
        if total > th.window * UNSENDABLE_OVER_WINDOW:
            # What is left cannot go (a pasted 2 MB prompt: the user's words are never cut): say so
            # now rather than send a request the provider must refuse.
            largest = max((self.counter.count_message(m) for m in messages), default=0)
            text = overflow_unresolved(th, total, largest, frame=self._run.count(frame, []), counted=True)
            unsendable = ContextOverflowError(text, tokens=total, limit=th.window)
        return Prepared(settle_thinking(history, messages), events, unsendable)

    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> WarningEvent | None:
        """After each response: the provider's count anchors the next one, unless it is far below
        the local count (then the local count does, and the first time it is said)."""
        self._in_request = frozenset(m.id for m in sent)  # what recall leaves out: the model sees it
        counted = self.counter.observe(frame.system, frame.tools, list(sent), usage)
        if counted is None or self._said_under_report:
            return None
        self._said_under_report = True
        return WarningEvent(message=under_reported(usage.prompt_tokens, counted))

    def on_overflow(self, history: Sequence[Message], frame: Frame, error: ContextOverflowError) -> Prepared:
        """The provider rejected the prompt: learn from it, force L2 then L4; when that cannot make it
        fit, the history as it was and why (`unsendable`)."""
        messages = list(history)
        events: list[EngineEvent] = []
        if error.limit and 0 < error.limit < self.thresholds.window:
            # Replies shrink with the window: a prompt plus max_tokens over the window is refused too.
            self.max_output = output_for_window(self.max_output, error.limit)
            self.thresholds = compute_thresholds(self.settings, error.limit, self.max_output)
            events.append(WarningEvent(message=smaller_window(error.limit)))
        if error.tokens:
            self.counter.calibrate_overflow(frame.system, frame.tools, messages, error.tokens)
        th = self.thresholds
        total = self._run.count(frame, messages)
        if error.tokens:
            total = max(total, error.tokens)
        before = total
        outcome = Condensed(messages, total, False)
        self._timing.drop_stand_in()  # (the record L2 makes now folds its digest in)
        if self.auto_compact:
            outcome = self._summaries.condense(
                messages, frame, total, CompactLayer.SUMMARIZE, "overflow", None
            )
            messages, total = outcome.messages, outcome.tokens
            events += outcome.events
        # Without numbers in the error our count is all there is, and it was not enough:
        # go down to the target whatever L2 achieved.
        if total > th.target and (not outcome.acted or total >= th.trigger_at or not error.tokens):
            step = self._run.drop(messages, frame, total, th.target, trigger="overflow")
            messages, total = step.messages, step.tokens
            events += step.events
        if total >= before or total > th.budget:
            largest = max((self.counter.count_message(m) for m in messages), default=0)
            frame_tokens = self._run.count(frame, [])
            text = overflow_unresolved(th, total, largest, frame=frame_tokens, counted=bool(error.tokens))
            return Prepared(list(history), events, ContextOverflowError(text, tokens=total, limit=th.window))
        return Prepared(settle_thinking(history, messages), events)

    def compact(
        self,
        history: Sequence[Message],
        frame: Frame,
        focus: str | None = None,
        trigger: CompactTrigger = "manual",
    ) -> Prepared:
        """L3: condense the whole conversation so far (an open trailing tool round stays). It always
        asks the model, whatever the summarizer latch says."""
        self._summaries.requested()
        total = self._run.count(frame, list(history))
        swapped = self._timing.replace(list(history), frame, total)  # its record in the summary's span
        self._timing.drop_stand_in()  # (one not ready: the record made now folds its digest in)
        messages, total = swapped.messages, swapped.tokens
        events: list[EngineEvent] = list(swapped.events)
        outcome = self._summaries.condense(messages, frame, total, CompactLayer.MANUAL, trigger, focus)
        events += outcome.events
        if not outcome.acted and not events:
            events.append(WarningEvent(message=NOTHING_TO_COMPACT))
        messages, total = outcome.messages, outcome.tokens
        th = self.thresholds
        if total >= th.emergency_at:
            step = self._run.drop(messages, frame, total, th.target, trigger=trigger)
            messages, total = step.messages, step.tokens
            events += step.events
        return Prepared(settle_thinking(history, messages), events)

    def cache_anchor(self, history: Sequence[Message]) -> int | None:
        """The last message the next clear will keep as it is (see `clear.next_change`), if any."""
        if not any(m.tool_results for m in history):  # nothing a clear changes, nothing counted
            return None  # (a first request loads no vocabulary)
        change = next_change(history, self._run.counts(history))
        return change - 1 if change else None

    def recall(self, query: str) -> str:
        """The recall tool: matching passages from this session's archive, verbatim, but for the
        messages the last request held as they are (the model sees them already)."""
        return self.archive.search(query, self.settings.recall_max_chars, visible=self._in_request)

    def recall_project(self, query: str) -> str:
        """recall with scope "project": this project's earlier sessions as well as this one."""
        return self.archive.search_project(query, self.settings.recall_max_chars, visible=self._in_request)

    def tokens(self, history: Sequence[Message], frame: Frame) -> int:
        return self._run.count(frame, list(history))

    def breakdown(self, history: Sequence[Message], frame: Frame) -> Breakdown:
        return compute_breakdown(
            history, frame, self.counter, self.thresholds, auto_compact=self.auto_compact
        )

    # -- when L1 and L2 act ----------------------------------------------------

    def _clear(self, messages: list[Message], frame: Frame, total: int, *, past: bool) -> Step:
        """L1: stub old tool results when a big enough batch can go. Past the trigger it must also get
        the request below the trigger, else L2 takes the span whole (its summary sees the output, not
        stubs). Clearing is free and a summary is a model call: L1 carries what it can.

        "Below the trigger" is the count after the stubs, not the estimate (a stub is longer than the
        estimate allows): a result stubbed and then summarized anyway would be a change inside the
        span, and with a keep-tail record (Anthropic's) it costs the kept turns their thinking,
        which was bound to the result as it was sent (core/thinking.py)."""
        th = self.thresholds
        key = messages[0].id if messages else ""
        if key == self._clear_skip[0] and total < self._clear_skip[1]:
            return Step(messages, total)
        to_clear, freed = clearable(
            messages, self._run.counts(messages), protect_tokens=th.clear_protect, start=self._timing.holds
        )
        if freed < th.clear_min_batch or not to_clear:
            # What L1 could free grows by at most what the history grows: while the same
            # history (same first message) has not grown by the shortfall, there is no
            # need to look again. Keeps prepare O(new content) above the L1 line.
            self._clear_skip = (key, total + th.clear_min_batch - freed)
            return Step(messages, total)
        if past and total - freed >= th.trigger_at:
            return Step(messages, total)  # L1 alone cannot get below the trigger: L2 takes the span whole
        return self._run.clear(messages, frame, total, to_clear, freed, th.trigger_at if past else None)

    # -- a record made in the background ---------------------------------------------

    def _past_swap(self, history: Sequence[Message], swapped: Condensed, frame: Frame) -> Condensed:
        """The tail grew past the trigger while the record was prepared: L1 first (the span it had to
        leave alone is gone), then, if that is not enough, a summary made now."""
        cleared = self._clear(swapped.messages, frame, swapped.tokens, past=True)
        events = (*swapped.events, *cleared.events)
        settled = settle_thinking(history, cleared.messages)
        if cleared.tokens < self.thresholds.trigger_at or self._timing.hold(settled, frame, cleared.tokens):
            return dataclasses.replace(
                swapped, messages=cleared.messages, tokens=cleared.tokens, events=events
            )
        again = self._timing.now(settled, frame, cleared.tokens, None)
        return dataclasses.replace(again, events=(*events, *again.events))

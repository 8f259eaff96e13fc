"""The context engine: carries out what `decide` chooses, so every request fits the model's window.

`ContextEngine` is the one object the loop talks to (`protocol.ContextPolicy`). It remembers one
frozen value (`engine_state.EngineState`), tells `decide.decide` what it saw, and carries the
action out (L1's and L2's in `engine_actions.EngineActions`, which it extends, with the one
background call: `records.RecordAhead`, the summary of the record on its way): `layers.LayerRunner`
runs a layer (archive first, recount, one event), `records.py` makes L2/L3's record at the time
`decide` chose. Cheapest first:

    ingest      L0 cap a tool result as it arrives
    prepare     L1 clear old results, L2 condense at the trigger (L1 alone only if it
                reaches the target), L4 drop at the emergency line
    on_overflow learn the true count, force L2 then L4 down to the target, or raise
    compact     L3: condense the whole conversation now, steered by a focus

`prepare` costs one count when nothing fires. Whatever a layer changes, the thinking blocks after
the change go with it (`core.thinking.settle_thinking`), so the request passes the prefix check.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from agent_cli.config.settings import ContextSettings
from agent_cli.context import engine_values as v
from agent_cli.context import records
from agent_cli.context.cap import cap_arrival
from agent_cli.context.engine_actions import EngineActions
from agent_cli.context.engine_state import CachePrice, CompactionState, Limits, StandIn
from agent_cli.context.layers import Condensed, LayerRunner
from agent_cli.context.notices import Breakdown, compute_breakdown, overflow_unresolved
from agent_cli.context.protocol import EngineEvent, Frame, Gate, Prepared, open_gate
from agent_cli.context.summary_request import Summarize
from agent_cli.context.thresholds import MIN_SHARED_CAP, Counter
from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.core.requests import RequestOptions
from agent_cli.core.thinking import settle_thinking
from agent_cli.store.archive import Archive

# Counts here are estimates until the provider reports: a request this far over the whole window
# is refused whatever the estimate's error, so it is not sent.
UNSENDABLE_OVER_WINDOW = 1.25

__all__ = ["ContextEngine"]

NOTHING_TO_COMPACT = "Nothing to compact yet: the conversation has no earlier part to condense."


class ContextEngine(EngineActions):
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
        submit: records.Submit = records.in_thread,
        gate: Gate = open_gate,
        price: CachePrice | None = None,
    ) -> None:
        run = LayerRunner(counter, archive, summarize, clock)
        super().__init__(settings, window, max_output, run, clock, submit, gate, price)
        self.settings = settings
        self._frame_tokens = 0  # the system prompt and tools of the last request prepared

    def reset(
        self,
        *,
        window: int,
        max_output: int,
        counter: Counter | None = None,
        summarize: Summarize | None = None,
        archive: Archive | None = None,
        price: CachePrice | None = None,
    ) -> None:
        """Another model or session from now on: its window and output reserve set every line, and
        the loop guard starts over. A new model brings its own counter (vocabulary, learned ratio,
        anchor), summary call and cache price; a new session its own archive. The record on its way
        carries across a model switch (`decide`'s Reset row: owed when the new lines give it less
        room); a session resumed has none (its run ended first)."""
        run = self._run
        self._run = LayerRunner(
            counter or run.counter, archive or run.archive, summarize or run.summarize, self._clock
        )
        self._decide(v.Reset(window, max_output, price))

    def restart(self) -> None:
        """A fresh start (`/clear`, another model or session): past failures no longer count."""
        self._decide(v.Happened("restarted"))

    def keep_size(self, tokens: int) -> None:
        """The user chose a context of `tokens` (/uncompact): L1 and L2 leave it alone until it has
        grown by the trigger's margin over the target; L4 still guards the window."""
        self._decide(v.KeepSize(tokens))

    @property
    def state(self) -> CompactionState:
        """What the engine remembers of its failures (the latch and the loop guard), as a value."""
        return self._state.failures

    @property
    def limits(self) -> Limits:
        return self._state.limits

    @property
    def max_output(self) -> int:
        return self._state.max_output

    @property
    def auto_compact(self) -> bool:
        """False once the loop guard stopped automatic compaction (a requested compaction restarts it)."""
        return self._state.failures.automatic

    def stop_automatic(self) -> None:
        """Automatic compaction off, as the loop guard leaves it (only L1 and L4 act)."""
        self._decide(v.Happened("stopped"))

    @property
    def price(self) -> CachePrice:
        """What the session's prompt cache charges, as the engine's priced choices weigh it."""
        return self._state.price

    @property
    def window(self) -> int:  # as the engine knows it: it learns a smaller one from errors
        return self.thresholds.window

    @property
    def counter(self) -> Counter:
        return self._run.counter

    @property
    def archive(self) -> Archive:
        return self._run.archive

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
        return cap_arrival(use, result, limit, counter=self.counter, archive=self.archive, clock=self._clock)

    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared:
        """Before every request: L1, L2 and L4 as the count requires."""
        messages = list(history)
        th = self.thresholds
        self._frame_tokens = self.counter.count_frame(frame.system, frame.tools)
        far = self.counter.fits_under(frame.system, frame.tools, messages, th.clear_at)
        total = None if far else self._run.count(frame, messages)  # (far from every line: not counted)
        kept = total is not None and total < self._state.still_below and total < th.emergency_at
        if total is None or total < th.clear_at or kept:
            swapped = self._quiet(messages, frame, total)  # (nothing, unless a record is ready)
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
        swapped = self._quiet(messages, frame, total)
        messages, total = swapped.messages, swapped.tokens
        events += swapped.events
        failed = False
        if total >= th.trigger_at and self.auto_compact:
            outcome = self._at_trigger(messages, frame, total)
            if outcome is not None:  # (None: held, the request goes as it is while its record is made)
                if outcome.acted and outcome.tokens >= th.trigger_at and outcome.ahead:
                    outcome = self._past_swap(history, outcome, frame)
                messages, total = outcome.messages, outcome.tokens
                events += outcome.events
                late = self._after_l2(outcome.acted, messages, frame, total)  # (L1, when L2 did not act)
                messages, total = late.messages, late.tokens
                events += late.events
                if outcome.attempted:  # (nothing to condense costs nothing and is no failure)
                    guard = self._decide(v.Compacted(messages, total, self._run.counts(messages)))
                    failed = isinstance(guard, v.Drop | v.StopAutomatic)
                    if isinstance(guard, v.StopAutomatic):
                        events.append(ErrorEvent(message=guard.text, kind="compaction"))
        elif self.auto_compact and (
            (starts := total >= th.prepare_at and not cleared.events) or self._call.ready
        ):
            # (a record ready, from above the prepare line or a turn's end, goes in at any size, also
            # when L1 cleared (on a cold cache it clears any batch); a record starts only above it)
            counts = self._run.counts(messages)
            seen = v.Prepare(messages, counts, total, self._call.ready, self._clock(), starts)
            action = self._decide(seen)
            if isinstance(action, v.PrepareAhead):
                self._start(action.plan, messages, frame)
            elif isinstance(action, v.Condense) and action.ahead is not None:
                future = self._call.take(messages)
                outcome = self._condense(
                    messages, frame, total, CompactLayer.SUMMARIZE, "auto", None, action.ahead, future
                )
                messages, total = outcome.messages, outcome.tokens
                events += outcome.events
                if outcome.attempted:  # (below the trigger: a success, the loop guard starts over)
                    self._decide(v.Compacted(messages, total, self._run.counts(messages)))
        if total >= th.emergency_at or failed:
            step = self._run.drop(messages, frame, total, th.target, trigger="auto")
            messages, total = step.messages, step.tokens
            events += step.events
        # What is left cannot go (a pasted 2 MB prompt: the user's words are never cut): say so now
        # rather than send a request the provider must refuse.
        unsendable = (
            self._unresolved(messages, frame, total, True)
            if total > th.window * UNSENDABLE_OVER_WINDOW
            else None
        )
        return Prepared(settle_thinking(history, messages), events, unsendable)

    def turn_ended(self, history: Sequence[Message], frame: Frame) -> None:
        """The turn ended and the user is to speak: near the trigger, the record is started now, in
        the background (`decide._turn_ended`)."""
        messages = list(history)
        th = self.thresholds
        if not self.auto_compact or self.counter.fits_under(frame.system, frame.tools, messages, th.clear_at):
            return
        seen = v.TurnEnded(messages, self._run.counts(messages), self._run.count(frame, messages))
        action = self._decide(seen)
        if isinstance(action, v.PrepareAhead):
            self._start(action.plan, messages, frame)

    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> WarningEvent | None:
        """After each response: the provider's count anchors the next one, unless it is far below
        the local count (then the local count does, and the first time it is said)."""
        counted = self.counter.observe(frame.system, frame.tools, list(sent), usage)
        # (the ids: what recall leaves out, the model sees it)
        said = self._decide(v.Answered(frozenset(m.id for m in sent), usage.prompt_tokens, counted))
        return WarningEvent(message=said.text) if isinstance(said, v.Say) else None

    def on_overflow(self, history: Sequence[Message], frame: Frame, error: ContextOverflowError) -> Prepared:
        """The provider rejected the prompt: learn from it, force L2 then L4; when that cannot make it
        fit, the history as it was and why (`unsendable`)."""
        messages = list(history)
        events: list[EngineEvent] = []
        learned = self._decide(v.SmallerWindow(error.limit or 0))
        if isinstance(learned, v.Say):
            events.append(WarningEvent(message=learned.text))
        if error.tokens:
            self.counter.calibrate_overflow(frame.system, frame.tools, messages, error.tokens)
        th = self.thresholds
        total = self._run.count(frame, messages)
        if error.tokens:
            total = max(total, error.tokens)
        before = total
        outcome = Condensed(messages, total, False)
        self._decide(v.Happened("folded"))  # (the record L2 makes now folds a digest standing in into it)
        if self.auto_compact:
            outcome = self._condense(messages, frame, total, CompactLayer.SUMMARIZE, "overflow", None)
            messages, total = outcome.messages, outcome.tokens
            events += outcome.events
        # Without numbers in the error our count is all there is, and it was not enough:
        # go down to the target whatever L2 achieved.
        if total > th.target and (not outcome.acted or total >= th.trigger_at or not error.tokens):
            step = self._run.drop(messages, frame, total, th.target, trigger="overflow")
            messages, total = step.messages, step.tokens
            events += step.events
        if total >= before or total > th.budget:
            return Prepared(
                list(history), events, self._unresolved(messages, frame, total, bool(error.tokens))
            )
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
        self._decide(v.Happened("requested"))
        total = self._run.count(frame, list(history))
        swapped = self._quiet(list(history), frame, total)  # its record in the summary's span
        self._decide(v.Happened("folded"))  # (one not ready: the record made now folds its digest in)
        messages, total = swapped.messages, swapped.tokens
        events: list[EngineEvent] = list(swapped.events)
        outcome = self._condense(messages, frame, total, CompactLayer.MANUAL, trigger, focus)
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

    def finish(self, history: Sequence[Message], frame: Frame) -> Prepared | StandIn | None:
        """The run ends. A digest standing in must not stay where a record was due: its record, when
        its call has ended, is swapped in now (the history to keep, and its events); when the call
        is still running the engine does not wait for it, and returns the record owed (the session
        logs it; `owe` takes it back in the next run). None when nothing was due."""
        messages = list(history)
        action = self._decide(v.Ending(messages, self._call.ready))
        if isinstance(action, v.OweRecord):
            return action.stand_in
        swapped = self._swap(action, messages, frame, None)
        if not swapped.acted and not swapped.events:
            return None
        return Prepared(settle_thinking(history, swapped.messages), list(swapped.events))

    def owe(self, stand_in: StandIn) -> None:
        """An earlier run of this session ended owing the record of the digest that leads the
        history (`finish`): it is made before the next request goes."""
        self._decide(v.Owed(stand_in))

    def cache_options(self, history: Sequence[Message]) -> RequestOptions:
        """Where the request's cache marks go (`cache_choices.sending`): the last message the next
        clear keeps, whether the newest is worth writing, where the next summary's span ends, the
        1-hour checkpoint."""
        # A first request counts nothing (it loads no vocabulary): no clear, no summary is near.
        first = len(history) < 2 and not any(m.tool_results for m in history)
        counts = None if first else self._run.counts(history)
        mark = self._decide(v.Sending(list(history), counts, self._clock(), self._frame_tokens))
        if not isinstance(mark, v.Mark):
            return RequestOptions()
        return RequestOptions(
            cache_anchor=mark.anchor,
            cache_newest=mark.newest,
            cache_span_end=mark.span_end,
            cache_checkpoint=mark.checkpoint,
        )

    def recall(self, query: str) -> str:
        """The recall tool: matching passages from this session's archive, verbatim, but for the
        messages the last request held as they are (the model sees them already)."""
        visible = self._state.in_request
        return self.archive.search(query, self.settings.recall_max_chars, visible=visible)

    def recall_project(self, query: str) -> str:
        """recall with scope "project": this project's earlier sessions as well as this one."""
        visible = self._state.in_request
        return self.archive.search_project(query, self.settings.recall_max_chars, visible=visible)

    def tokens(self, history: Sequence[Message], frame: Frame) -> int:
        return self._run.count(frame, list(history))

    def breakdown(self, history: Sequence[Message], frame: Frame) -> Breakdown:
        return compute_breakdown(
            history, frame, self.counter, self.thresholds, auto_compact=self.auto_compact
        )

    def _unresolved(
        self, messages: list[Message], frame: Frame, total: int, counted: bool
    ) -> ContextOverflowError:
        """Why the request cannot go, in one actionable line."""
        largest = max((self.counter.count_message(m) for m in messages), default=0)
        th = self.thresholds
        text = overflow_unresolved(th, total, largest, frame=self._run.count(frame, []), counted=counted)
        return ContextOverflowError(text, tokens=total, limit=th.window)

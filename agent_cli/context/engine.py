"""The context engine: runs the layers so every request fits the model's window.

`ContextEngine` is the one object the loop talks to. It owns the little state
the layers need across turns (the thresholds, learned from the provider when
it reports a smaller window, and the loop guard's failure count) and calls the
pure layer functions in order, cheapest first:

    ingest      L0 cap a tool result as it arrives
    prepare     L1 clear old results, L2 condense at the trigger (L1 alone only if it
                reaches the target), L4 drop at the emergency line
    on_overflow learn the true count, force L2 then L4 down to the target, or raise
    compact     L3: condense the whole conversation now, steered by a focus

Every layer writes what it removes to the transcript store first and emits
exactly one CompactEvent. `prepare` costs one count when nothing fires.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.config.settings import ContextSettings
from agent_cli.context.breakdown import Breakdown, compute_breakdown
from agent_cli.context.cap import cap_result
from agent_cli.context.clear import apply_clear, clearable
from agent_cli.context.condense import condensed_history, engine_prefix
from agent_cli.context.cut import find_safe_cut, open_round_start
from agent_cli.context.emergency import apply_drop, marker_text, plan_drop
from agent_cli.context.notices import (
    loop_guard_stopped,
    not_saved,
    overflow_unresolved,
    smaller_window,
    summary_failed,
)
from agent_cli.context.plain import call_text
from agent_cli.context.policy import (
    MIN_SHARED_CAP,
    Counter,
    Frame,
    Thresholds,
    compute_thresholds,
    output_for_window,
)
from agent_cli.context.summary_request import Summarize, run_summary
from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, CompactLayer, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.store.archive import TranscriptStore

__all__ = ["Breakdown", "ContextEngine", "Frame", "Prepared", "Summarize", "Thresholds"]

EngineEvent = CompactEvent | WarningEvent | ErrorEvent


@dataclass(frozen=True, slots=True)
class Prepared:
    """The history to send (and keep) and what happened to it."""

    messages: list[Message]
    events: list[EngineEvent]


@dataclass(frozen=True, slots=True)
class _Outcome:
    messages: list[Message]
    tokens: int
    acted: bool  # a record replaced a span


class ContextEngine:
    def __init__(
        self,
        *,
        settings: ContextSettings,
        window: int,
        max_output: int,
        counter: Counter,
        store: TranscriptStore,
        summarize: Summarize,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.max_output = max_output
        self.counter = counter
        self.store = store
        self._summarize = summarize
        self._clock = clock
        self.thresholds: Thresholds = compute_thresholds(settings, window, max_output)
        self.failures = 0  # consecutive automatic compactions that left the request above the trigger
        self.auto_compact = True  # the loop guard turns this off; a manual compaction turns it on
        self._clear_skip = ("", 0)  # (first message id, count): L1 found no batch below that count

    def retarget(self, window: int, max_output: int) -> None:
        """Another model or session from now on: its window and output reserve set every line."""
        self.max_output = max_output
        self.thresholds = compute_thresholds(self.settings, window, max_output)
        self.failures, self.auto_compact, self._clear_skip = 0, True, ("", 0)

    @property
    def window(self) -> int:  # as the engine knows it: it learns a smaller one from errors
        return self.thresholds.window

    # -- the loop's calls ----------------------------------------------------

    def ingest(
        self, use: ToolUse, result: ToolResult, *, round_size: int = 1
    ) -> tuple[ToolResult, CompactEvent | None]:
        """L0: an oversized result is saved in full, then cut to head + tail. The `round_size`
        results of one turn share the cap: the round stays verbatim until the model saw it."""
        limit = max(self.thresholds.tool_result_cap // max(round_size, 1), MIN_SHARED_CAP)
        if len(result.content) * 2 <= limit:  # even at two tokens a character it fits: skip the count
            return result, None
        tokens = self.counter.count_text(result.content)
        if tokens <= limit:
            return result, None
        start = self._clock()
        header = f"[full output of {call_text(use)} · id {use.id}]"
        try:
            path = self.store.write_output(use.id, result.content, header=header)
        except OSError:  # not on disk, so not cut: L1, L2 and L4 still keep the request in bounds
            return result, None
        count, saved = self.counter.count_text, str(path)
        capped = cap_result(use, result, max_tokens=limit, tokens=tokens, count_text=count, saved_to=saved)
        after = self.counter.count_text(capped.content)
        event = CompactEvent(
            layer="cap",
            trigger="ingest",
            messages_before=1,
            messages_after=1,
            tokens_before=tokens,
            tokens_after=after,
            summary=None,
            transcript=str(path),
            duration=self._clock() - start,
        )
        return capped, event

    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared:
        """Before every request: L1, L2 and L4 as the count requires."""
        messages = list(history)
        th = self.thresholds
        total = self._count(frame, messages)
        if total < th.clear_at:
            return Prepared(messages, [])
        events: list[EngineEvent] = []
        past = total >= th.trigger_at and self.auto_compact
        messages, total = self._clear(messages, frame, total, events, past=past)
        failed = False
        if total >= th.trigger_at and self.auto_compact:
            outcome = self._condense(
                messages, frame, total, events, layer="summarize", trigger="auto", focus=None
            )
            messages, total = outcome.messages, outcome.tokens
            failed = outcome.acted and total >= th.trigger_at  # nothing to condense is not a failure
            self._note_result(failed, events)
        if total >= th.emergency_at or (failed and total >= th.trigger_at):
            messages, total = self._emergency(messages, frame, total, events, trigger="auto")
        return Prepared(messages, events)

    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> None:
        """After each response: the provider's count anchors the next one."""
        self.counter.observe(frame.system, frame.tools, list(sent), usage)

    def on_overflow(self, history: Sequence[Message], frame: Frame, error: ContextOverflowError) -> Prepared:
        """The provider rejected the prompt: learn from it, force L2 then L4, or raise."""
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
        total = self._count(frame, messages)
        if error.tokens:
            total = max(total, error.tokens)
        before = total
        outcome = _Outcome(messages, total, False)
        if self.auto_compact:
            outcome = self._condense(
                messages, frame, total, events, layer="summarize", trigger="overflow", focus=None
            )
            messages, total = outcome.messages, outcome.tokens
        # Without numbers in the error our count is all there is, and it was not enough:
        # go down to the target whatever L2 achieved.
        if total > th.target and (not outcome.acted or total >= th.trigger_at or not error.tokens):
            messages, total = self._emergency(messages, frame, total, events, trigger="overflow")
        if total >= before or total > th.budget:
            largest = max((self.counter.count_message(m) for m in messages if m.role == "user"), default=0)
            text = overflow_unresolved(th, total, largest, counted=bool(error.tokens))
            raise ContextOverflowError(text, tokens=total, limit=th.window)
        return Prepared(messages, events)

    def compact(
        self,
        history: Sequence[Message],
        frame: Frame,
        focus: str | None = None,
        trigger: str = "manual",
    ) -> Prepared:
        """L3: condense the whole conversation so far (an open trailing tool round stays)."""
        self.failures = 0
        self.auto_compact = True
        messages = list(history)
        events: list[EngineEvent] = []
        total = self._count(frame, messages)
        outcome = self._condense(messages, frame, total, events, layer="manual", trigger=trigger, focus=focus)
        if not outcome.acted and not events:
            events.append(
                WarningEvent(
                    message="Nothing to compact yet: the conversation has no earlier part to condense."
                )
            )
        messages, total = outcome.messages, outcome.tokens
        if total >= self.thresholds.emergency_at:
            messages, total = self._emergency(messages, frame, total, events, trigger=trigger)
        return Prepared(messages, events)

    def recall(self, query: str) -> str:
        """The recall tool: matching passages from this session's transcripts, verbatim."""
        return self.store.search(query, self.settings.recall_max_chars)

    def tokens(self, history: Sequence[Message], frame: Frame) -> int:
        return self._count(frame, list(history))

    def breakdown(self, history: Sequence[Message], frame: Frame) -> Breakdown:
        return compute_breakdown(
            history, frame, self.counter, self.thresholds, auto_compact=self.auto_compact
        )

    # -- layers --------------------------------------------------------------

    def _count(self, frame: Frame, messages: list[Message]) -> int:
        return self.counter.count_request(frame.system, frame.tools, messages)

    def _counts(self, messages: Sequence[Message]) -> list[int]:
        return [self.counter.count_message(m) for m in messages]

    def _clear(
        self, messages: list[Message], frame: Frame, total: int, events: list[EngineEvent], *, past: bool
    ) -> tuple[list[Message], int]:
        """L1: stub old tool results when a big enough batch can go. Past the trigger it must also
        reach the target, else L2 takes the span whole (its summary sees the output, not stubs)."""
        th = self.thresholds
        key = messages[0].id if messages else ""
        if key == self._clear_skip[0] and total < self._clear_skip[1]:
            return messages, total
        to_clear, freed = clearable(messages, self._counts(messages), protect_tokens=th.clear_protect)
        if freed < th.clear_min_batch or not to_clear:
            # What L1 could free grows by at most what the history grows: while the same
            # history (same first message) has not grown by the shortfall, there is no
            # need to look again. Keeps prepare O(new content) above the L1 line.
            self._clear_skip = (key, total + th.clear_min_batch - freed)
            return messages, total
        if past and total - freed > th.target:
            return messages, total
        start = self._clock()
        plan = apply_clear(messages, to_clear, freed)
        path = self._save(plan.originals, "clear", events)
        if path is None:
            return messages, total
        after = self._recount(frame, messages, plan.messages)
        events.append(
            CompactEvent(
                layer="clear",
                trigger="auto",
                messages_before=len(messages),
                messages_after=len(plan.messages),
                tokens_before=total,
                tokens_after=after,
                summary=None,
                transcript=str(path),
                duration=self._clock() - start,
            )
        )
        return plan.messages, after

    def _condense(
        self,
        messages: list[Message],
        frame: Frame,
        total: int,
        events: list[EngineEvent],
        *,
        layer: CompactLayer,
        trigger: str,
        focus: str | None,
    ) -> _Outcome:
        """L2 / L3: replace the older part with a record (the model's, or the digest)."""
        th = self.thresholds
        start = self._clock()
        base = engine_prefix(messages)
        # What the model has not answered yet stays verbatim: the latest request, or the
        # tool round it has not seen the results of (else it would never see that output).
        end = len(messages) - 1 if messages and messages[-1].is_plain_user else len(messages)
        if layer != "manual":
            end = min(end, open_round_start(messages))
        if layer == "manual":
            cut = open_round_start(messages[:end])
        else:
            counts = self._counts(messages)
            room = th.keep_tail - sum(counts[end:])
            cut = find_safe_cut(messages[:end], counts[:end], max(room, 0), floor=base + 1)
        # Condensing a span no larger than a record frees nothing: no model call for it.
        if cut <= base or (layer != "manual" and sum(self._counts(messages[base:cut])) <= th.summary_cap):
            return _Outcome(messages, total, False)
        span, tail = messages[:cut], messages[cut:]
        saved = self._save(span, "compact" if layer == "summarize" else layer, events)
        if saved is None:
            return _Outcome(messages, total, False)
        path = saved
        pending = messages[-1].role == "user"
        reason = ""
        try:
            body = run_summary(
                span,
                frame,
                cap=th.summary_cap,
                focus=focus,
                budget=th.budget,
                counter=self.counter,
                summarize=self._summarize,
            )
        except Exception as exc:  # the summarizer's failure must not lose the session; the digest stands in
            body, reason = "", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        # A manual compaction of a short conversation may grow it a little; that is
        # what the user asked for. An automatic one must shrink the request.
        must_shrink = layer != "manual"
        new, after = self._rebuild(span, tail, frame, body, path, pending)
        if body and must_shrink and after >= total:
            reason = f"the model's record would not shrink the request ({total:,} -> {after:,} tokens)"
            body = ""
            new, after = self._rebuild(span, tail, frame, body, path, pending)
        degraded = bool(reason) or not body
        if must_shrink and after >= total:  # not even the digest shrinks it: leave the history as it was
            events.append(
                WarningEvent(message=f"Compaction could not shrink the conversation ({total:,} tokens).")
            )
            return _Outcome(messages, total, False)
        if degraded:
            events.append(WarningEvent(message=summary_failed(reason, path)))
        record = new[0].summary
        events.append(
            CompactEvent(
                layer=layer,
                trigger=trigger,
                messages_before=len(messages),
                messages_after=len(new),
                tokens_before=total,
                tokens_after=after,
                summary=record.text if record else None,
                transcript=path,
                duration=self._clock() - start,
                degraded=degraded,
            )
        )
        return _Outcome(new, after, True)

    def _rebuild(
        self, span: list[Message], tail: list[Message], frame: Frame, body: str, path: str, pending: bool
    ) -> tuple[list[Message], int]:
        th, count = self.thresholds, self.counter.count_text
        new = condensed_history(span, tail, body, path, thresholds=th, count_text=count, pending=pending)
        return new, self._recount(frame, [*span, *tail], new)

    def _recount(self, frame: Frame, before: list[Message], after: list[Message]) -> int:
        """`after` counted on the scale of `before` (the provider's, when anchored): figures agree."""
        fixed = self.counter.count_frame(frame.system, frame.tools)
        local_before = fixed + sum(self._counts(before))
        scale = self._count(frame, before) / max(local_before, 1)
        return max(round((fixed + sum(self._counts(after))) * scale), 1)

    def _emergency(
        self, messages: list[Message], frame: Frame, total: int, events: list[EngineEvent], *, trigger: str
    ) -> tuple[list[Message], int]:
        """L4: drop the oldest groups down to the target, leaving a marker."""
        start = self._clock()
        counts = self._counts(messages)
        # Local counts may sit below the anchored total; scale the need accordingly.
        local = sum(counts) or 1
        conversation = max(total - self.counter.count_frame(frame.system, frame.tools), 1)
        need = (total - self.thresholds.target) * local // conversation + 100
        plan = plan_drop(messages, counts, need)
        if plan is None:
            return messages, total
        dropped = plan.dropped(messages)
        path = self._save(dropped, "emergency", events)
        if path is None:
            return messages, total
        new = apply_drop(messages, plan, marker_text(len(dropped), path))
        after = self._recount(frame, messages, new)
        took, n = self._clock() - start, len(messages)
        events.append(
            CompactEvent(
                layer="emergency",
                trigger=trigger,
                messages_before=n,
                messages_after=len(new),
                tokens_before=total,
                tokens_after=after,
                summary=None,
                transcript=path,
                duration=took,
            )
        )
        return new, after

    def _note_result(self, failed: bool, events: list[EngineEvent]) -> None:
        """The loop guard: stop automatic compaction after repeated failures, and say so."""
        self.failures = self.failures + 1 if failed else 0
        if failed and self.failures >= self.settings.max_failures:
            self.auto_compact = False
            events.append(ErrorEvent(message=loop_guard_stopped(self.failures), kind="compaction"))

    def _save(self, messages: list[Message], label: str, events: list[EngineEvent]) -> str | None:
        """Write what a layer removes; None (and a warning) if the disk refuses: the layer does nothing."""
        try:
            return str(self.store.write_span(messages, label))
        except OSError as exc:
            events.append(WarningEvent(message=not_saved(label, exc)))
            return None

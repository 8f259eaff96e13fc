"""Running one layer on a history: save what goes, change the history, recount, one event.

`LayerRunner` is the engine's hands. The engine (engine.py) decides *when*
a layer fires; the runner does it the same way every time:

1. what the layer removes is written to the archive first; if the disk
   refuses, the layer does nothing and says so (nothing leaves the context
   without being on disk);
2. the pure layer function (cap.py for the model's own calls, clear.py, emergency.py; condense.py
   for L2/L3's record: the model's, judged, or the digest) builds the new history;
3. the new history is counted on the scale of the count before it (the
   provider's, when anchored), so the figures in one event agree;
4. exactly one `CompactEvent` says what happened.

L0 on a tool result as it arrives, before it joins any history, is cap.py's `cap_arrival`.

Each layer returns what it did as a value (`Step`, or `Condensed` for L2/L3): the new history, its
count and the events that say so (a warning when the disk refused). No layer appends to a list it
was handed.

It holds what a layer needs besides the thresholds: the counter, the archive,
the summary call and a clock. A new model or session gets a new runner.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.cap import cap_input
from agent_cli.context.clear import apply_clear
from agent_cli.context.condense import make_record
from agent_cli.context.cut import CondensePlan, engine_prefix
from agent_cli.context.emergency import apply_drop, marker_text, plan_drop
from agent_cli.context.engine_state import SummaryOutcome
from agent_cli.context.notices import not_saved
from agent_cli.context.plain import abbreviate, call_text, tool_calls_by_id
from agent_cli.context.protocol import EngineEvent, Frame
from agent_cli.context.summary_request import Summarize, SummaryReply, run_summary
from agent_cli.context.thresholds import Counter, Thresholds
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, WarningEvent
from agent_cli.core.messages import Message, ToolUse, Usage
from agent_cli.store.archive import Archive

__all__ = ["Condensed", "LayerRunner", "Step", "SummaryOutcome"]


@dataclass(frozen=True, slots=True)
class Step:
    """What a layer came to: the history, its count, and the events that say what happened."""

    messages: list[Message]
    tokens: int
    events: tuple[EngineEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class Condensed:
    """What L2/L3 came to: the history, its count, whether a record replaced a span, and how the
    model's summary fared ("ok", "failed", "skipped": no call was made, or nothing was attempted)."""

    messages: list[Message]
    tokens: int
    acted: bool
    summary: SummaryOutcome = "skipped"
    attempted: bool = False  # a record was built for the span (whether or not it was used)
    failure: str | None = None  # why the model's record was not used (the digest stood in)
    shortfall: str | None = None  # how the model's record, used, fell short (repaired by code)
    transcript: str = ""  # where the span went
    events: tuple[EngineEvent, ...] = ()
    ahead: bool = False  # the record was prepared before the trigger (decide._prepare)


def _arg_size(use: ToolUse, count_text: Callable[[str], int]) -> tuple[int, int]:
    """(characters, tokens) of a call's arguments as sent."""
    text = json.dumps(dict(use.input), ensure_ascii=False)
    return len(text), max(count_text(text), 1)


class LayerRunner:
    def __init__(
        self, counter: Counter, archive: Archive, summarize: Summarize, clock: Callable[[], float]
    ) -> None:
        self.counter = counter
        self.archive = archive
        self.summarize = summarize
        self._clock = clock

    # -- counting --------------------------------------------------------------

    def count(self, frame: Frame, messages: list[Message]) -> int:
        return self.counter.count_request(frame.system, frame.tools, messages)

    def counts(self, messages: Sequence[Message]) -> list[int]:
        return [self.counter.count_message(m) for m in messages]

    def recount(self, frame: Frame, before: list[Message], after: list[Message]) -> int:
        """`after` counted on the scale of `before` (the provider's, when anchored): figures agree."""
        fixed = self.counter.count_frame(frame.system, frame.tools)
        local_before = fixed + sum(self.counts(before))
        scale = self.count(frame, before) / max(local_before, 1)
        return max(round((fixed + sum(self.counts(after))) * scale), 1)

    # -- the layers --------------------------------------------------------------

    def cap_inputs(self, messages: list[Message], frame: Frame, total: int, limit: int) -> Step:
        """L0 for the model's own calls: an argument over `limit` tokens in a call that has run (a
        2 MB `write_file`) is saved in full, then cut to head + tail, like an oversized result."""
        answered = {r.tool_use_id for m in messages for r in m.tool_results}
        out = list(messages)
        events: list[EngineEvent] = []
        for i, message in enumerate(messages):
            if message.role != "assistant" or self.counter.count_message(message) <= limit:
                continue
            count = self.counter.count_text
            sizes = {u.id: _arg_size(u, count) for u in message.tool_uses if u.id in answered}
            over = {k: v for k, v in sizes.items() if v[1] > limit}
            if not over:
                continue
            start = self._clock()
            path, refused = self._save([message], "input")
            events += refused
            if path is None:
                continue
            blocks = [
                cap_input(
                    b, max_chars=limit * over[b.id][0] // over[b.id][1], saved_to=self.archive.shown(path)
                )
                if isinstance(b, ToolUse) and b.id in over
                else b
                for b in message.content
            ]
            out[i] = message.replace(blocks)
            uses = [u for u in message.tool_uses if u.id in over]
            after = self.recount(frame, messages, out)
            detail = ", ".join(f"{abbreviate(call_text(u), 60)} · id {u.id}" for u in uses)
            events.append(
                self._event(
                    CompactLayer.CAP, "input", messages, out, total, after, path, start, detail=detail
                )
            )
            total = after
        return Step(out, total, tuple(events))

    def clear(
        self,
        messages: list[Message],
        frame: Frame,
        total: int,
        to_clear: dict[int, set[str]],
        freed: int,
        below: int | None = None,
    ) -> Step:
        """L1: the results `to_clear` names (message index -> result ids) become recall stubs; nothing
        changes (nor is saved) when the count after it would not be under `below`."""
        start = self._clock()
        plan = apply_clear(messages, to_clear, freed)
        after = self.recount(frame, messages, plan.messages)
        if below is not None and after >= below:
            return Step(messages, total)
        path, refused = self._save(plan.originals, CompactLayer.CLEAR)
        if path is None:
            return Step(messages, total, refused)
        calls = tool_calls_by_id(messages)
        names = [
            abbreviate(call_text(calls[i]), 50)
            for ids in to_clear.values()
            for i in sorted(ids)
            if i in calls
        ]
        shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
        detail = f"{plan.cleared} old tool result{'s' if plan.cleared != 1 else ''}: {shown}"
        event = self._event(
            CompactLayer.CLEAR, "auto", messages, plan.messages, total, after, path, start, detail=detail
        )
        return Step(plan.messages, after, (event,))

    def condense(
        self,
        messages: list[Message],
        plan: CondensePlan,
        frame: Frame,
        total: int,
        *,
        thresholds: Thresholds,
        layer: CompactLayer,
        trigger: CompactTrigger,
        focus: str | None,
        use_model: bool = True,
        reply: Callable[[], SummaryReply] | None = None,
        extra: str = "",
    ) -> Condensed:
        """L2 / L3: the span of `plan` becomes a record (the model's, or the digest; only the digest
        when `use_model` is False, as while the summarizer latch holds). `reply` is the summary call
        made ahead for this span (decide._prepare), waited for here; None makes it now.

        A requested compaction (L3) of a short conversation may grow it a little; that is
        what the user asked for. An automatic one must shrink the request.
        """
        start = self._clock()
        path, refused = self._save(
            plan.span(messages), "compact" if layer == CompactLayer.SUMMARIZE else layer
        )
        if path is None:
            return Condensed(messages, total, False, events=refused)
        call = reply or self.summary_call(plan.span(messages), frame, thresholds, focus, extra)
        return self._condensed(
            messages, plan, frame, total, path, start, thresholds, layer, trigger, call, use_model
        )

    def record_for(
        self,
        span: Sequence[Message],
        tail: Sequence[Message],
        frame: Frame,
        path: str,
        *,
        thresholds: Thresholds,
        reply: Callable[[], SummaryReply],
    ) -> Condensed:
        """The model's record for a span a digest stood in for (saved to `path` then), followed by
        `tail`, what the history now holds after the digest: the history a summary of that span would
        have given (the digest again if the record fails)."""
        messages = [*span, *tail]
        plan = CondensePlan(engine_prefix(span), len(span))
        total = self.count(frame, messages)
        return self._condensed(
            messages,
            plan,
            frame,
            total,
            path,
            self._clock(),
            thresholds,
            CompactLayer.SUMMARIZE,
            "auto",
            reply,
            True,
        )

    def _condensed(
        self,
        messages: list[Message],
        plan: CondensePlan,
        frame: Frame,
        total: int,
        path: str,
        start: float,
        thresholds: Thresholds,
        layer: CompactLayer,
        trigger: CompactTrigger,
        call: Callable[[], SummaryReply],
        use_model: bool,
    ) -> Condensed:
        must_shrink = layer != CompactLayer.MANUAL
        record = make_record(
            messages, plan, total, self.archive.shown(path), thresholds, call,
            must_shrink=must_shrink, use_model=use_model, counter=self.counter,
            recount=lambda new: self.recount(frame, messages, new),
        )  # fmt: skip
        if must_shrink and record.tokens >= total:  # not even the digest shrinks it: leave it as it was
            warning = WarningEvent(
                message=f"Compaction could not shrink the conversation ({total:,} tokens)."
            )
            return Condensed(
                messages, total, False, record.summary, attempted=True, transcript=path, events=(warning,)
            )
        # What went wrong with the model's record is said by the engine, once, with the latch's word.
        failure = record.failure if use_model else None
        first = record.messages[0]
        summary = first.summary.text if first.summary else first.native.text if first.native else None
        event = self._event(
            layer, trigger, messages, record.messages, total, record.tokens, path, start,
            summary=summary,
            degraded=record.failure is not None,
            usage=record.usage,
        )  # fmt: skip
        return Condensed(
            record.messages, record.tokens, True, record.summary, True, failure, record.shortfall, path,
            (event,),
        )  # fmt: skip

    def summary_call(
        self, span: Sequence[Message], frame: Frame, th: Thresholds, focus: str | None = None, extra: str = ""
    ) -> Callable[[], SummaryReply]:
        """The summary call for `span`, to make now or ahead: the same request either way (`extra`:
        text appended to its instruction, see protocol.Gate); the request carries the frame's notes
        (`run_summary`)."""
        return lambda: run_summary(
            span,
            frame,
            cap=th.summary_cap,
            focus=focus,
            budget=th.budget,
            counter=self.counter,
            summarize=self.summarize,
            extra=extra,
        )

    def drop(
        self,
        messages: list[Message],
        frame: Frame,
        total: int,
        target: int,
        *,
        trigger: CompactTrigger,
    ) -> Step:
        """L4: drop the oldest groups down to `target`, leaving a marker."""
        start = self._clock()
        counts = self.counts(messages)
        # Local counts may sit below the anchored total; scale the need accordingly.
        local = sum(counts) or 1
        conversation = max(total - self.counter.count_frame(frame.system, frame.tools), 1)
        need = (total - target) * local // conversation + 100
        plan = plan_drop(messages, counts, need)
        if plan is None:
            return Step(messages, total)
        dropped = plan.dropped(messages)
        path, refused = self._save(dropped, CompactLayer.EMERGENCY)
        if path is None:
            return Step(messages, total, refused)
        new = apply_drop(messages, plan, marker_text(len(dropped), self.archive.shown(path)))
        after = self.recount(frame, messages, new)
        return Step(
            new,
            after,
            (self._event(CompactLayer.EMERGENCY, trigger, messages, new, total, after, path, start),),
        )

    # -- parts -----------------------------------------------------------------

    def _event(
        self,
        layer: CompactLayer,
        trigger: CompactTrigger,
        before: Sequence[Message],
        after: Sequence[Message],
        tokens_before: int,
        tokens_after: int,
        path: str,
        start: float,
        *,
        detail: str | None = None,
        summary: str | None = None,
        degraded: bool = False,
        usage: Usage | None = None,
    ) -> CompactEvent:
        """What a layer that changed the history reports: sizes before and after, where the
        originals went, how long it took."""
        return CompactEvent(
            layer=layer,
            trigger=trigger,
            messages_before=len(before),
            messages_after=len(after),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            transcript=path,
            duration=self._clock() - start,
            detail=detail,
            summary=summary,
            degraded=degraded,
            usage=usage,
        )

    def _save(self, messages: list[Message], label: str) -> tuple[str | None, tuple[EngineEvent, ...]]:
        """Write what a layer removes: its path, or None and a warning when the disk refuses (then the
        layer does nothing)."""
        try:
            return str(self.archive.write_span(messages, label)), ()
        except OSError as exc:
            return None, (WarningEvent(message=not_saved(label, exc)),)

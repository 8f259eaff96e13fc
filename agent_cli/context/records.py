"""L2/L3's record for a span, carried out as `decide` chose, and the one background call.

    condense_now(run, th, gate, messages, frame, total, layer, trigger, focus, may_call=...)
    digest_in_place(run, th, messages, plan, frame, total)   # a digest standing in for a record
    waited(run, th, messages, plan, frame, total, path, future, ahead=...)   # the record, waited for
    start_record(run, th, gate, call, plan, messages, frame)   # prepared ahead, or held
    stand_in_now(run, th, gate, call, messages, plan, frame, total, reuse=...)   # -> (outcome, seen)
    swap_record(run, th, stand_in, messages, frame, reply, extra)   # the record in its digest's place

Each returns the `Condensed` a summary made then would have given; the engine tells `decide` how
the model's record fared (the latch) and what stands in. The record is always the reply to the
request a summary made then would have sent, built by the same code from the same span, so the
history after a swap is what that summary would have made.

    call = RecordAhead(submit)
    call.start(plan, span, call)       # a record prepared ahead: `call` runs in the background
    call.adopt(stand_in, future)       # the call a digest stands in for
    call.ready                         # the call has ended (taking its reply waits for nothing)
    call.take(messages) -> Future      # its reply, when its record still leads the history
    call.follow(record)                # the decision moved on: a call for another record is cancelled

A summary call takes seconds to minutes; made at the trigger, the turn waits for it. Made in the
background, it runs while the model's reply streams or the user types. Which record is on its way,
and what to do with it, is `decide.decide`'s (the record is part of `EngineState`); this holds only
its call, one at a time, so that a reply is never read for a record the decision has dropped.

The call runs in a daemon thread behind a `concurrent.futures.Future` (`in_thread`), not in an
executor: an executor's worker is joined when the interpreter exits, so a session that ends while
a record is being written would wait for the call (up to the summary's timeout) before it exits.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from agent_cli.context.cut import CondensePlan, plan_condense
from agent_cli.context.engine_state import Ahead, StandIn
from agent_cli.context.engine_values import DigestIn, DigestTooBig, Happened
from agent_cli.context.layers import Condensed, LayerRunner
from agent_cli.context.protocol import EngineEvent, Frame, Gate, skippable
from agent_cli.context.summary_request import SummaryReply
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger
from agent_cli.core.messages import Message

__all__ = [
    "RecordAhead",
    "Submit",
    "condense_now",
    "digest_in_place",
    "in_thread",
    "marked",
    "stand_in_now",
    "start_record",
    "swap_record",
    "swapped_in",
    "waited",
]

# Runs a call and hands back its future (a thread by default; the benchmark runs it at once).
Submit = Callable[[Callable[[], SummaryReply]], "Future[SummaryReply]"]


def in_thread(call: Callable[[], SummaryReply]) -> Future[SummaryReply]:
    """`call` in a daemon thread: its reply, or what it raised, in the future."""
    future: Future[SummaryReply] = Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(call())
        except BaseException as exc:  # handed to whoever takes the record
            future.set_exception(exc)

    threading.Thread(target=work, name="record-ahead", daemon=True).start()
    return future


class RecordAhead:
    def __init__(self, submit: Submit = in_thread) -> None:
        self._submit = submit
        self._record: Ahead | StandIn | None = None
        self._future: Future[SummaryReply] | None = None

    @property
    def holds(self) -> int:
        """The end of the span being summarized ahead (0 when none): messages before it must not change."""
        return self._record.plan.cut if isinstance(self._record, Ahead) else 0

    @property
    def ready(self) -> bool:
        """Whether the call has ended (taking its reply waits for nothing)."""
        return self._future is not None and self._future.done()

    def start(self, plan: CondensePlan, span: Sequence[Message], call: Callable[[], SummaryReply]) -> None:
        """Start `call`, the summary of `span` (the messages `plan` replaces), unless one runs."""
        if self._future is None:
            self.adopt(Ahead(plan, tuple(span)), self._submit(call))

    def submit(self, call: Callable[[], SummaryReply]) -> Future[SummaryReply]:
        """Start `call` in the background now; it is this holder's once adopted."""
        return self._submit(call)

    def adopt(self, record: Ahead | StandIn, future: Future[SummaryReply]) -> None:
        """`future` is the call of `record` from now on."""
        self.drop()
        self._record, self._future = record, future

    def take(self, messages: Sequence[Message]) -> Future[SummaryReply] | None:
        """The call, handed over, when its record still leads `messages`; else None (and a call for a
        span that is gone is cancelled)."""
        record, future = self._record, self._future
        self._record, self._future = None, None
        if record is None or future is None:
            return None
        if not record.leads(messages):
            future.cancel()
            return None
        return future

    def follow(self, record: Ahead | StandIn | None) -> None:
        """The decision's record is `record`: a call for any other is of no use and is cancelled."""
        if self._record is not None and self._record != record:
            self.drop()

    def drop(self) -> None:
        """Forget the call; its reply is not used."""
        if self._future is not None:
            self._future.cancel()
        self._record, self._future = None, None


def marked(events: Sequence[EngineEvent], **changes: object) -> tuple[EngineEvent, ...]:
    """The events with their `CompactEvent`s changed (`ahead`, `stand_in`, the sizes before)."""
    return tuple(dataclasses.replace(e, **changes) if isinstance(e, CompactEvent) else e for e in events)  # type: ignore[arg-type]


def condense_now(
    run: LayerRunner,
    th: Thresholds,
    gate: Gate,
    messages: list[Message],
    frame: Frame,
    total: int,
    layer: CompactLayer,
    trigger: CompactTrigger,
    focus: str | None,
    *,
    may_call: bool,
    ahead: Ahead | None = None,
    future: Future[SummaryReply] | None = None,
) -> Condensed:
    """L2 / L3 where the plan finds a span worth a record; with `ahead`, the record prepared for its
    span (the plan it was made for, and its call's `future`). The gate (the user's PreCompact
    hooks) may skip an automatic one or add to its instruction; a record made ahead passed it when it
    was started."""
    requested = layer == CompactLayer.MANUAL  # L3: asked for by the user or the model
    if ahead is not None:
        plan: CondensePlan | None = ahead.plan
    else:
        plan = plan_condense(messages, run.counts(messages), th, requested=requested)
    if plan is None:
        return Condensed(messages, total, False)
    extra = ""
    if ahead is None:
        verdict = gate(layer, trigger, focus)
        if verdict.skip and skippable(trigger):
            return Condensed(messages, total, False)  # not a failure: L4 still acts at its line
        extra = verdict.extra
    outcome = run.condense(
        messages, plan, frame, total, thresholds=th, layer=layer, trigger=trigger, focus=focus,
        use_model=requested or ahead is not None or may_call,
        reply=future.result if future is not None else None, extra=extra,
    )  # fmt: skip
    if ahead is not None:  # its event says the record was made ahead
        return dataclasses.replace(outcome, events=marked(outcome.events, ahead=True), ahead=True)
    return outcome


def start_record(
    run: LayerRunner,
    th: Thresholds,
    gate: Gate,
    call: RecordAhead,
    plan: CondensePlan,
    messages: list[Message],
    frame: Frame,
) -> bool:
    """Start the record of the span `plan` cuts in the background, once the gate lets it go (the
    same request a summary now would send); False when the gate skipped it."""
    verdict = gate(CompactLayer.SUMMARIZE, "auto", None)
    if verdict.skip:
        return False
    span = plan.span(messages)
    call.start(plan, span, run.summary_call(span, frame, th, None, verdict.extra))
    return True


def stand_in_now(
    run: LayerRunner,
    th: Thresholds,
    gate: Gate,
    call: RecordAhead,
    messages: list[Message],
    plan: CondensePlan,
    frame: Frame,
    total: int,
    *,
    reuse: bool,
) -> tuple[Condensed, DigestIn | DigestTooBig | Happened | None]:
    """A digest in the span's place at once while the model writes its record in the background:
    the call prepared ahead (`reuse`), or the one a summary now would make, started once the gate
    lets it go. Returns the outcome and what `decide` is to be told: the digest stands in (its call
    is then `call`'s), could not shrink the request (the outcome is then the record, waited for:
    that call is already paid for, and dropping it would leave the request to L4; not yet judged),
    or the disk refused the span (the call is cancelled); None when the gate skipped it."""
    if reuse:
        future = call.take(messages)
    else:
        verdict = gate(CompactLayer.SUMMARIZE, "auto", None)
        if verdict.skip:
            return Condensed(messages, total, False), None  # not a failure: L4 still acts at its line
        span = plan.span(messages)
        future = call.submit(run.summary_call(span, frame, th, None, verdict.extra))
    assert future is not None  # (decide reuses only a call whose record leads)
    outcome = digest_in_place(run, th, messages, plan, frame, total)
    if not outcome.acted and outcome.transcript:  # not even the digest shrinks the request
        path = outcome.transcript
        return waited(run, th, messages, plan, frame, total, path, future, ahead=reuse), DigestTooBig(
            plan, path, reuse
        )
    if not outcome.acted:
        future.cancel()
        return outcome, Happened("refused")
    head = outcome.messages[: len(outcome.messages) - (len(messages) - plan.cut)]
    stand_in = StandIn(tuple(plan.span(messages)), tuple(head), outcome.transcript)
    call.adopt(stand_in, future)
    return outcome, DigestIn(stand_in)


def digest_in_place(
    run: LayerRunner, th: Thresholds, messages: list[Message], plan: CondensePlan, frame: Frame, total: int
) -> Condensed:
    """The digest of the span of `plan` in its place now (built by code, at once), its events marked
    `stand_in`: the model's record for it is on its way."""
    outcome = run.condense(
        messages, plan, frame, total, thresholds=th,
        layer=CompactLayer.SUMMARIZE, trigger="auto", focus=None, use_model=False,
    )  # fmt: skip
    if not outcome.acted:
        return outcome
    return dataclasses.replace(outcome, events=marked(outcome.events, stand_in=True))


def waited(
    run: LayerRunner,
    th: Thresholds,
    messages: list[Message],
    plan: CondensePlan,
    frame: Frame,
    total: int,
    path: str,
    future: Future[SummaryReply],
    *,
    ahead: bool,
) -> Condensed:
    """The model's record for the span of `plan` (saved to `path`), waited for: what a summary made
    now would have given (`ahead`: its call was started before the trigger)."""
    built = run.record_for(
        plan.span(messages), plan.tail(messages), frame, path, thresholds=th, reply=future.result
    )
    events = marked(built.events, ahead=ahead, messages_before=len(messages), tokens_before=total)
    return dataclasses.replace(built, events=events, ahead=ahead)


def swap_record(
    run: LayerRunner,
    th: Thresholds,
    stand_in: StandIn,
    messages: list[Message],
    frame: Frame,
    reply: Callable[[], SummaryReply] | None,
    extra: str = "",
) -> Condensed:
    """The record made in the background for the span a digest stood in for (`reply`: its call's
    result; None makes the call now, for a record an earlier run owed, `extra` appended to its
    instruction as the gate said), followed by what the history holds after the digest now (the
    digest again if the record fails)."""
    call = reply or run.summary_call(stand_in.span, frame, th, None, extra)
    tail = stand_in.tail(messages)
    return run.record_for(stand_in.span, tail, frame, stand_in.path, thresholds=th, reply=call)


def swapped_in(built: Condensed, judged: Condensed, messages: list[Message], total: int) -> Condensed:
    """What a swap came to: the record (`judged`: `built` with the latch's word) in the digest's
    place, its events marked; or, when it failed, the digest stays (what the record fell back to)
    and only what went wrong is said."""
    if built.failure is not None or not built.acted:
        said = tuple(e for e in judged.events if not isinstance(e, CompactEvent))
        return Condensed(messages, total, False, events=said)
    events = marked(
        judged.events, ahead=True, stand_in=True, messages_before=len(messages), tokens_before=total
    )
    return dataclasses.replace(judged, events=events, ahead=True)

"""The record prepared ahead: L2's summary call, started before the trigger, taken when it is reached.

    ahead = RecordAhead()
    ahead.start(plan, span, call)      # above the prepare line: `call` runs in a worker thread
    ahead.holds                        # the span's end while it runs: L1 leaves that span alone
    ahead.leads(messages), ahead.ready # its span still leads the history; its call has ended
    ahead.take(messages) -> Taken      # at the trigger: the same span? its plan and its reply

A summary call takes seconds to minutes; made at the trigger, the turn waits for it. Made ahead,
it runs while the model's reply streams or the user types. The reply is the one a blocking call
would have got: the same request, built from the same span by the same code (`call`), so the
history after the swap is what a blocking summary of that span would have made. If the span has
changed since (L0 cut an argument in it, `/model` reset the engine), the reply is dropped and the
turn summarizes as before. If it is not ready when the trigger is reached, the request goes as it
is while it stays under the hold line (the record is swapped in at a later request, when ready);
above that line the turn waits for it, as it would have waited for a call made then. A turn that
reaches the trigger with no record on its way starts one the same way and goes on.

Where the turn would wait (past the hold line, the record not ready or never started), a digest
(built by code, at once) stands in for the record instead (`StandIn`), and the call goes on in the
background; at the first request after its call has ended, the record it gives takes the digest's
place (one more rewrite of the cached prefix, so that later requests and the next summary call
read the record from the cache). When each is used is `timing.RecordTiming`.

One record is prepared at a time. The worker is a daemon thread, so a session that ends while
a record is being prepared does not wait for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from agent_cli.context.plan import CondensePlan
from agent_cli.context.summary_request import SummaryReply
from agent_cli.core.messages import Message

__all__ = ["RecordAhead", "StandIn", "Submit", "Taken", "in_thread"]

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


@dataclass(frozen=True, slots=True)
class Taken:
    """A prepared record whose span is still the history's: its plan, and its call."""

    plan: CondensePlan
    future: Future[SummaryReply]

    @property
    def reply(self) -> Callable[[], SummaryReply]:
        """Its reply: blocks until the call ends; raises what it raised."""
        return self.future.result

    @property
    def ready(self) -> bool:
        return self.future.done()


@dataclass(frozen=True, slots=True)
class StandIn:
    """A digest standing in for the record of `span` while the model writes it in the background.

    The digest's messages lead the history (`head`); the span went to the archive at `path`. When
    the call has ended, the record it gives (or the digest again, if it fails) is built from `span`
    and what follows the head then: the history a summary made at the swap would have given.
    """

    span: tuple[Message, ...]
    head: tuple[Message, ...]
    path: str
    future: Future[SummaryReply]

    def leads(self, messages: Sequence[Message]) -> bool:
        """Whether the digest still leads `messages` unchanged."""
        n = len(self.head)
        return len(messages) >= n and _same(messages[:n], self.head)

    def tail(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[len(self.head) :])

    @property
    def ready(self) -> bool:
        return self.future.done()


@dataclass(frozen=True, slots=True)
class _Job:
    plan: CondensePlan
    span: tuple[Message, ...]
    future: Future[SummaryReply]


class RecordAhead:
    def __init__(self, submit: Submit = in_thread) -> None:
        self._submit = submit
        self._job: _Job | None = None

    @property
    def holds(self) -> int:
        """The end of the span being summarized (0 when none): messages before it must not change."""
        return self._job.plan.cut if self._job is not None else 0

    def start(self, plan: CondensePlan, span: Sequence[Message], call: Callable[[], SummaryReply]) -> None:
        """Start `call`, the summary of `span` (the messages `plan` replaces), unless one runs."""
        if self._job is None:
            self._job = _Job(plan, tuple(span), self._submit(call))

    def leads(self, messages: Sequence[Message]) -> bool:
        """Whether a record is being prepared (or is ready) for a span that still leads `messages`."""
        job = self._job
        return job is not None and len(messages) > job.plan.cut and _same(messages[: job.plan.cut], job.span)

    @property
    def ready(self) -> bool:
        """Whether the record's call has ended (taking it waits for nothing)."""
        return self._job is not None and self._job.future.done()

    def take(self, messages: Sequence[Message]) -> Taken | None:
        """The prepared record, when its span still leads `messages` unchanged; else None (and a
        record for a span that is gone is dropped)."""
        job, self._job = self._job, None
        if job is None:
            return None
        cut = job.plan.cut
        if len(messages) <= cut or not _same(messages[:cut], job.span):
            job.future.cancel()
            return None
        return Taken(job.plan, job.future)

    def submit(self, call: Callable[[], SummaryReply]) -> Future[SummaryReply]:
        """Start `call` in the background now, outside the one record prepared ahead (a stand-in's)."""
        return self._submit(call)

    def drop(self) -> None:
        """Forget the record being prepared (the engine was reset); its call's reply is not used."""
        if self._job is not None:
            self._job.future.cancel()
        self._job = None


def _same(now: Sequence[Message], then: Sequence[Message]) -> bool:
    return all(a is b or a == b for a, b in zip(now, then, strict=True))

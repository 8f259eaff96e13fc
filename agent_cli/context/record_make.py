"""The record that replaces a span (L2/L3): the model's summary, judged, or the digest instead.

    make_record(messages, plan, total, path, thresholds, call, must_shrink=..., use_model=...,
                counter=..., recount=...) -> MadeRecord

The summary call is made (or its reply, prepared ahead, taken); its own failures (a provider error,
a timeout, an empty or refused reply, the disk) put the digest in its place, never lose the
session. A reply is used when `record_choice.judge_record` says so: it shrinks what must shrink,
keeps within its cap, and is measured against the mechanical check (fidelity.py). Pure but for the
call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_cli.context.condense import condensed_history
from agent_cli.context.engine_state import SummaryOutcome
from agent_cli.context.fidelity import misses_key_facts
from agent_cli.context.plan import CondensePlan
from agent_cli.context.record_choice import judge_record
from agent_cli.context.summary_request import SummaryFailed, SummaryReply
from agent_cli.context.thresholds import Counter, Thresholds
from agent_cli.core.errors import ProviderError
from agent_cli.core.messages import Message, NativeRecord, Usage

__all__ = ["MadeRecord", "SummaryOutcome", "make_record"]


@dataclass(frozen=True, slots=True)
class MadeRecord:
    messages: list[Message]
    tokens: int
    failure: str | None  # why the model's record was not used (the digest stands in); None when it was
    usage: Usage | None  # what the summary call cost, when it answered
    summary: SummaryOutcome  # "failed" also when the record was used but fell short
    shortfall: str | None = None  # how a record that was used fell short


def make_record(
    messages: list[Message],
    plan: CondensePlan,
    total: int,
    path: str,
    th: Thresholds,
    call: Callable[[], SummaryReply],
    *,
    must_shrink: bool,
    use_model: bool,
    counter: Counter,
    recount: Callable[[list[Message]], int],
) -> MadeRecord:
    """The history with the span of `plan` condensed (`path`: where the span went, as the record
    names it; `recount`: a new history counted on the scale of `total`). The digest stands in for a
    summary that failed, or that would not shrink a request that must shrink."""
    span, tail = plan.span(messages), plan.tail(messages)
    pending = messages[-1].role == "user"
    failure: str | None = None
    usage: Usage | None = None
    if not use_model:
        new = condensed_history(
            span, tail, "", path, thresholds=th, count_text=counter.count_text, pending=pending
        )
        return MadeRecord(new, recount(new), "latched", None, "skipped")
    native = None
    try:
        reply = call()
        body, usage, native = reply.text, reply.usage, reply.native
    except (ProviderError, TimeoutError, SummaryFailed, OSError) as exc:
        # The summary call's own failures must not lose the session: the digest stands in. A bug
        # (anything else) is not one of them: it goes up to the crash log, not into a digest.
        body, failure = "", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    written = counter.count_text(body) if body else 0
    replaced = sum(counter.count_message(m) for m in span)

    def build(text: str, record: NativeRecord | None = None) -> tuple[list[Message], int]:
        new = condensed_history(
            span, tail, text, path, thresholds=th, count_text=counter.count_text, pending=pending,
            native=record,
        )  # fmt: skip
        return new, recount(new)

    with_summary = build(body, native) if body and written < replaced else None
    verdict = judge_record(
        failure=failure,
        written=written,
        replaced=replaced,
        after=with_summary[1] if with_summary else None,
        total=total,
        cap=th.summary_cap,
        must_shrink=must_shrink,
        # A provider's record is not judged by our check: what it leaves out, its carrier says.
        misses_facts=lambda: native is None and misses_key_facts(span, tail, body),
    )
    used = with_summary if with_summary is not None and verdict.failure is None else build("")
    return MadeRecord(*used, verdict.failure, usage, verdict.fared, verdict.shortfall)

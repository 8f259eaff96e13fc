"""The record that replaces a span (L2/L3): the model's summary, judged, or the digest instead.

    make_record(messages, plan, total, path, thresholds, call, must_shrink=..., use_model=...,
                counter=..., recount=...) -> MadeRecord

The summary call is made (or its reply, prepared ahead, taken); its own failures (a provider error,
a timeout, an empty or refused reply, the disk) put the digest in its place, never lose the
session. A reply is used when `judge_record` (below) says so: it shrinks what must shrink,
keeps within its cap, and is measured against the mechanical check (fidelity.py). Pure but for the
call.

*The choice* (`judge_record`, pure): does the model's summary stand, or does the digest stand in?
It decides from the figures alone, so the rule reads in one place and is tested as a table:

- the call failed: the digest stands in, and the failure is said;
- the summary is as large as what it replaces, or (when the request must shrink: every automatic
  compaction) the history with it is no smaller than before: the digest stands in;
- else the summary stands; it *fell short* when it ran over its length (its end was cut) or left
  out the latest error or every file the span touched (code adds them). A record that fell short
  counts as a failed summary for the latch, though it is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agent_cli.context.condense import condensed_history
from agent_cli.context.cut import CondensePlan
from agent_cli.context.engine_state import SummaryOutcome
from agent_cli.context.fidelity import misses_key_facts
from agent_cli.context.summary_request import SummaryFailed, SummaryReply
from agent_cli.context.thresholds import Counter, Thresholds
from agent_cli.core.errors import ProviderError
from agent_cli.core.messages import Message, NativeRecord, Usage

__all__ = [
    "MISSED_FACTS",
    "OVERLONG",
    "MadeRecord",
    "SummaryOutcome",
    "Verdict",
    "judge_record",
    "make_record",
]


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


OVERLONG = 1.5  # a record this far over its length cap counts as a failed summary
MISSED_FACTS = "left out the latest error or every file it touched; code added them to the record"


@dataclass(frozen=True, slots=True)
class Verdict:
    failure: str | None = None  # why the model's record is not used: the digest stands in
    shortfall: str | None = None  # how a record that is used fell short (repaired by code)

    @property
    def fared(self) -> Literal["ok", "failed"]:
        return "failed" if self.failure is not None or self.shortfall is not None else "ok"


def judge_record(
    *,
    failure: str | None,
    written: int,
    replaced: int,
    after: int | None,
    total: int,
    cap: int,
    must_shrink: bool,
    misses_facts: Callable[[], bool],
) -> Verdict:
    """The verdict on a summary of `written` tokens for a span of `replaced` tokens.

    `failure` is the call's own failure (no summary then), `after` the count of the history with
    the summary in it (None when it was not built: no summary, or one too large), `total` the count
    before, `cap` the record's length cap. `misses_facts` checks the record's content (only asked
    when nothing else is wrong)."""
    if failure is not None:
        return Verdict(failure)
    if written and written >= replaced:
        return Verdict(f"the model's record ({written:,} tokens) is larger than what it replaces")
    if written and must_shrink and after is not None and after >= total:
        return Verdict(f"the model's record would not shrink the request ({total:,} -> {after:,} tokens)")
    if written > cap * OVERLONG:
        return Verdict(shortfall=f"ran over its length ({written:,} tokens for {cap:,}), so its end was cut")
    if misses_facts():
        return Verdict(shortfall=MISSED_FACTS)
    return Verdict()

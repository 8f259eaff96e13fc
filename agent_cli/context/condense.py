"""L2/L3: the record that replaces a span (the model's summary, judged, or the digest), and the
history rebuilt around it.

    make_record(messages, plan, total, path, thresholds, call, must_shrink=..., use_model=...,
                counter=..., recount=...) -> MadeRecord

*The record.* The summary call is made (or its reply, prepared ahead, taken); its own failures (a
provider error, a timeout, an empty or refused reply, the disk) put the digest in its place, never
lose the session. A reply is used when `judge_record` (below) says so: it shrinks what must shrink,
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

*The history* (`condensed_history`, pure): the record (the body capped to its length, the user's
messages verbatim, the fidelity repair, the transcript's name and how to recall from it) put first,
as a user message holding a SummaryBlock, then an acknowledgement when the next message is the
user's (or nothing follows and the user speaks next), then the tail.

*The provider's own record* (`context.summarizer = "native"`, `native_history`): a *native record*
is what the provider's compaction returned (`core.messages.NativeRecord`): it stands for exactly the
span it was given and goes back byte for byte, alone in the history's first message. Keep-tail
(Anthropic's docs): the kept turns follow it unchanged, so their thinking stays valid; hence nothing
of ours goes between. After them, appended as the history's last message, goes a *carrier* of ours
(a `SummaryBlock`): what the rules of every record ask for and the provider's does not give. The
user's messages verbatim (unless the provider's record already holds them as they were sent:
OpenAI's compaction output does), the transcript's name and how to recall from it, and what the
mechanical check finds missing from the readable text (the last request, the latest error, the
files). A record whose text is not readable (OpenAI's is encrypted) is checked as having said
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from agent_cli.context.clear import image_names, recall_phrase
from agent_cli.context.cut import ACK, CondensePlan
from agent_cli.context.engine_state import SummaryOutcome
from agent_cli.context.fidelity import check, files_section, misses_key_facts, repair, span_facts
from agent_cli.context.record_parts import (
    assemble_record,
    build_digest,
    cap_text,
    collect_user_messages,
    render_user_messages,
)
from agent_cli.context.summary_request import SummaryFailed, SummaryReply
from agent_cli.context.thresholds import Counter, Thresholds
from agent_cli.core.errors import ProviderError
from agent_cli.core.messages import Message, NativeRecord, SummaryBlock, Usage

__all__ = [
    "MISSED_FACTS",
    "OVERLONG",
    "MadeRecord",
    "Verdict",
    "carrier_text",
    "condensed_history",
    "files_budget",
    "judge_record",
    "make_record",
    "native_history",
]


# -- the record: the summary, judged, or the digest ------------------------------------------------


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


# -- the history rebuilt around the record ---------------------------------------------------------


def condensed_history(
    span: Sequence[Message],
    tail: Sequence[Message],
    body: str,
    transcript: str,
    *,
    thresholds: Thresholds,
    count_text: Callable[[str], int],
    pending: bool,
    native: NativeRecord | None = None,
) -> list[Message]:
    """The record replacing `span`, then `tail`. An empty `body` means the digest stands in; `native`
    is the provider's own record (`body` its readable text), carried with ours (`native_history`)."""
    if native is not None and body:
        return native_history(
            span, tail, native, transcript,
            thresholds=thresholds, count_text=count_text, recall_hint=_recall_hint(span),
        )  # fmt: skip
    text = cap_text(body or build_digest(span), thresholds.summary_cap, count_text)
    users = render_user_messages(collect_user_messages(span), thresholds.user_messages, count_text)
    facts = span_facts(span)
    missing = check(facts, text + "\n" + users, tail)
    text = repair(text, missing, ())  # what the check found missing; the files list comes next
    budget = files_budget(thresholds, count_text(text) + count_text(users))
    files = files_section(facts.paths, budget=budget, count=count_text, unlisted=missing.unlisted)
    text = f"{text.rstrip()}\n\n{files}" if files else text
    record = assemble_record(
        body=text,
        users=users,
        transcript=transcript,
        replaced=len(span),
        recall_hint=_recall_hint(span),
        degraded=not body,
        images=image_names(span),
    )
    new = [Message("user", (SummaryBlock(record, transcript),))]
    if (tail and tail[0].role == "user") or (not tail and not pending):
        new.append(Message.assistant(ACK))
    new.extend(tail)
    return new


def files_budget(thresholds: Thresholds, used: int) -> int:
    """The tokens the files list may take in a record whose other parts take `used`: what the body's
    cap and the user messages' budget leave, with the room under the target the verbatim tail does
    not take (about 3.5k at a 32k window, where the tail makes way for `min_freed_tokens`; a large
    window's lists are whole); at least the body's cap, so a small window's record still names its
    newest files by the hundred (a working day at 32k: 265 files; an eighth of the cap named a few
    dozen and the artifact probe fell from 43% to 28%, docs/context-engine.md)."""
    th = thresholds
    spare = max(th.target - th.summary_cap - th.user_messages - th.keep_tail, 0)
    return max(th.summary_cap + th.user_messages + spare - used, th.summary_cap)


def _recall_hint(span: Sequence[Message]) -> str:
    """An example recall phrase from the span: the last path or command a tool used."""
    for message in reversed(span):
        for use in reversed(message.tool_uses):
            phrase = recall_phrase(use, "")
            if phrase:
                return f'"{phrase}"'
    return '"error"'


def carrier_text(
    span: Sequence[Message],
    tail: Sequence[Message],
    native: NativeRecord,
    transcript: str,
    *,
    user_budget: int,
    count_text: Callable[[str], int],
    recall_hint: str,
) -> str:
    """The text of the SummaryBlock that goes beside `native`."""
    users = ""
    if not native.keeps_user_messages:
        users = render_user_messages(collect_user_messages(span), user_budget, count_text)
    facts = span_facts(span)
    said = (native.text if native.readable else "") + "\n" + users
    added = repair("", check(facts, said, tail), facts.paths).strip()
    intro = (
        f"The {native.provider} compaction record at the start of the conversation stands for the "
        f"{len(span)} earlier messages it replaced (it is the provider's, carried as it came); the turns "
        f"after it are kept verbatim. The replaced messages' full text is saved in "
        f'{transcript}; call recall("<phrase>") with a file name, an error or a few words '
        f"(e.g. recall({recall_hint})) to fetch exact passages."
    )
    closing = (
        "Continue from the work state without redoing finished steps. Files may have changed since "
        "they were read: re-read one before editing it."
    )
    return "\n\n".join(p for p in (intro, added, users, closing) if p)


def native_history(
    span: Sequence[Message],
    tail: Sequence[Message],
    native: NativeRecord,
    transcript: str,
    *,
    thresholds: Thresholds,
    count_text: Callable[[str], int],
    recall_hint: str,
) -> list[Message]:
    """The provider's record replacing `span`, then `tail` as it is, then our carrier. No
    acknowledgement: the record goes to the API as the assistant's turn (Anthropic), or as items
    that need none (OpenAI); the carrier is a user turn, joined by the user's next words."""
    text = carrier_text(
        span,
        tail,
        native,
        transcript,
        user_budget=thresholds.user_messages,
        count_text=count_text,
        recall_hint=recall_hint,
    )
    return [Message("user", (native,)), *tail, Message("user", (SummaryBlock(text, transcript),))]

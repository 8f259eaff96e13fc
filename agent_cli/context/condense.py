"""L2/L3: the history rebuilt around a condensed record, ours or the provider's (pure).

Given the span being replaced, the tail being kept and the model's text (or
nothing, for the digest), build the record: the body capped to its length,
the user's messages verbatim, the fidelity repair, the transcript's name and
how to recall from it; then put it first, as a user message holding a
SummaryBlock, followed by an acknowledgement when the next message is the
user's (or nothing follows and the user speaks next).

*The provider's own record* (`context.summarizer = "native"`, `native_history`).

A *native record* is what the provider's compaction returned (`core.messages.NativeRecord`): it
stands for exactly the span it was given and goes back byte for byte, alone in the history's first
message. Keep-tail (Anthropic's docs): the kept turns follow it unchanged, so their thinking stays
valid; hence nothing of ours goes between. After them, appended as the history's last message, goes
a *carrier* of ours (a `SummaryBlock`): what the rules of every record ask for and the provider's
does not give. The user's messages verbatim (unless the provider's record already holds them as they
were sent: OpenAI's compaction output does), the transcript's name and how to recall from it, and
what the mechanical check finds missing from the readable text (the last request, the latest error,
the files). A record whose text is not readable (OpenAI's is encrypted) is checked as having said
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_cli.context.clear import image_names, recall_phrase
from agent_cli.context.cut import ACK
from agent_cli.context.digest import build_digest
from agent_cli.context.fidelity import check, files_section, repair, span_facts
from agent_cli.context.sections import assemble_record, cap_text, collect_user_messages, render_user_messages
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.messages import Message, NativeRecord, SummaryBlock

__all__ = ["carrier_text", "condensed_history", "files_budget", "native_history"]


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
    not take (the lines leave none in a small window, a large one's lists are whole); at least the
    body's cap, so a small window's record still names its newest files by the hundred (a working
    day at 32k: 265 files; an eighth of the cap named a few dozen and the artifact probe fell from
    43% to 28%, docs/context-engine.md)."""
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

"""L2/L3: the history rebuilt around a condensed record (pure).

Given the span being replaced, the tail being kept and the model's text (or
nothing, for the digest), build the record: the body capped to its length,
the user's messages verbatim, the fidelity repair, the transcript's name and
how to recall from it; then put it first, as a user message holding a
SummaryBlock, followed by an acknowledgement when the next message is the
user's (or nothing follows and the user speaks next).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_cli.context.clear import image_names, recall_phrase
from agent_cli.context.digest import build_digest
from agent_cli.context.emergency import ACK
from agent_cli.context.fidelity import check, repair, span_facts
from agent_cli.context.native_record import native_history
from agent_cli.context.sections import assemble_record, cap_text, collect_user_messages, render_user_messages
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.messages import Message, NativeRecord, SummaryBlock

__all__ = ["condensed_history"]


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
    is the provider's own record (`body` its readable text), carried with ours (native_record.py)."""
    if native is not None and body:
        return native_history(
            span, tail, native, transcript,
            thresholds=thresholds, count_text=count_text, recall_hint=_recall_hint(span),
        )  # fmt: skip
    text = cap_text(body or build_digest(span), thresholds.summary_cap, count_text)
    users = render_user_messages(collect_user_messages(span), thresholds.user_messages, count_text)
    facts = span_facts(span)
    text = repair(text, check(facts, text + "\n" + users, tail), facts.paths)
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


def _recall_hint(span: Sequence[Message]) -> str:
    """An example recall phrase from the span: the last path or command a tool used."""
    for message in reversed(span):
        for use in reversed(message.tool_uses):
            phrase = recall_phrase(use, "")
            if phrase:
                return f'"{phrase}"'
    return '"error"'

"""The parts of a condensed record that code writes, not the model.

Pure functions: the user's own messages kept verbatim (newest first within a
budget, oldest elided with a note; carried over from the previous record so
a second compaction does not lose the first one's), the record's intro and
closing lines, and the length cap. The user's words and the model's record
are carried byte for byte: nothing here rewords, escapes or inserts a
character into them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.policy import is_engine_note
from agent_cli.core.messages import Message

__all__ = [
    "UserMessages",
    "assemble_record",
    "cap_text",
    "collect_user_messages",
    "parse_user_messages",
    "render_user_messages",
    "strip_user_messages",
]

USER_HEADER = "## The user's messages, verbatim (oldest first)"
USER_END = "[end of the user's messages]"
_ENTRY_RE = re.compile(r"^\[user message \d+\]$")
_ELIDED_RE = re.compile(r"^\((\d+) earlier user messages? not shown")


@dataclass(frozen=True, slots=True)
class UserMessages:
    """The user's messages so far, oldest first, and how many older ones were already elided."""

    texts: tuple[str, ...]
    elided: int = 0


def strip_user_messages(record: str) -> str:
    """An earlier record without its user-message section (rebuilt separately)."""
    start = record.find(USER_HEADER)
    if start == -1:
        return record
    end = record.find(USER_END, start)
    return record[:start] + (record[end + len(USER_END) :] if end != -1 else "")


def parse_user_messages(record: str) -> UserMessages:
    """The user-message section of an earlier record (empty if it has none)."""
    start = record.find(USER_HEADER)
    if start == -1:
        return UserMessages(())
    end = record.find(USER_END, start)
    body = record[start + len(USER_HEADER) : end if end != -1 else len(record)]
    texts: list[str] = []
    elided = 0
    current: list[str] | None = None
    for line in body.split("\n"):
        if _ENTRY_RE.match(line):
            if current is not None:
                texts.append("\n".join(current).strip("\n"))
            current = []
            continue
        match = _ELIDED_RE.match(line)
        if match and current is None:
            elided = int(match.group(1))
            continue
        if current is not None:
            current.append(line)
    if current is not None:
        texts.append("\n".join(current).strip("\n"))
    return UserMessages(tuple(texts), elided)


def collect_user_messages(span: Sequence[Message]) -> UserMessages:
    """Everything the user typed in `span`, with the previous record's list in front."""
    elided = 0
    texts: list[str] = []
    for message in span:
        summary = message.summary
        if summary is not None:
            earlier = parse_user_messages(summary.text)
            elided += earlier.elided
            texts.extend(earlier.texts)
        elif message.is_plain_user and not is_engine_note(message) and message.text.strip():
            texts.append(message.text)
    return UserMessages(tuple(texts), elided)


def render_user_messages(users: UserMessages, budget: int, count: Callable[[str], int]) -> str:
    """The section: newest messages first into `budget` tokens, shown oldest first."""
    kept: list[str] = []
    used = 0
    for text in reversed(users.texts):
        cost = count(text) + 6
        if used + cost > budget:
            if not kept:  # the newest message always appears, cut to the budget if it must
                room = max(int(len(text) * max(budget - 6, 1) / max(cost, 1)), 200)
                kept.append(
                    text[:room] + f"\n[... {len(text) - room:,} characters cut; recall finds the rest]"
                )
            break
        kept.append(text)
        used += cost
    kept.reverse()
    elided = users.elided + len(users.texts) - len(kept)
    lines = [USER_HEADER]
    if elided:
        lines.append(f"({elided} earlier user messages not shown here; recall finds them in the transcripts)")
    for n, text in enumerate(kept, start=elided + 1):
        lines.append(f"[user message {n}]")
        lines.append(text)
    lines.append(USER_END)
    return "\n".join(lines)


def cap_text(text: str, cap_tokens: int, count: Callable[[str], int]) -> str:
    """`text` cut to about `cap_tokens`, at a line boundary, with a note."""
    tokens = count(text)
    if tokens <= cap_tokens:
        return text
    keep = int(len(text) * cap_tokens / tokens * 0.95)
    nl = text.rfind("\n", 0, keep)
    if nl > keep // 2:
        keep = nl
    return text[:keep] + "\n[... cut to the record's length cap]"


def assemble_record(
    *,
    body: str,
    users: str,
    transcript: str,
    replaced: int,
    recall_hint: str,
    degraded: bool = False,
) -> str:
    """The text of the SummaryBlock that replaces `replaced` messages."""
    kind = "mechanical digest (no model was available to write it)" if degraded else "record"
    intro = (
        f"Condensed {kind} of the earlier conversation: {replaced} messages were replaced by it to free "
        f'context. Their full text is saved in {transcript}; call recall("<phrase>") with a file name, '
        f"an error or a few words (e.g. recall({recall_hint})) to fetch exact passages."
    )
    closing = (
        "Continue from the work state above without redoing finished steps. Files may have changed "
        "since they were read: re-read one before editing it."
    )
    parts = [intro, body.strip(), users, closing]
    return "\n\n".join(p for p in parts if p)

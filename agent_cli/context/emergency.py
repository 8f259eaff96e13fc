"""L4: drop the oldest groups, first in first out, and leave a marker.

Pure. When the history is still above the emergency line (or L2 failed),
whole groups (never a tool_use without its result) go, oldest first, until
the request is at the target. Two things are kept as long as anything else
can go: the latest condensed record (it stands for far more than its size)
and the user's latest message, which always survives (as a message, or inside
the record that holds it verbatim). The marker, a user
message, takes the place of the first dropped group and names the transcript
the dropped messages were written to, and keeps the files list of what went (the
files a dropped record listed and the dropped calls touched, the newest kept), so
which files the session touched is not lost with the record; the next record
carries that list on (`fidelity.span_facts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.cut import (
    ACK,
    ENGINE_NOTE_PREFIX,
    groups,
    is_ack,
    latest_user_index,
    open_round_start,
    safe_cuts,
)
from agent_cli.context.fidelity import FILES_HEADER, files_section, span_facts
from agent_cli.core.messages import Message
from agent_cli.tokens.estimate import estimate_tokens

__all__ = ["DropPlan", "apply_drop", "dropped_files", "marker_text", "plan_drop", "stitch"]

# The marker's files list: at least this many tokens (four characters a token), or as many as the
# largest list a dropped record held (that list was within its record's budget already).
MARKER_FILES_TOKENS = 1_000


@dataclass(frozen=True, slots=True)
class DropPlan:
    drop: frozenset[int]  # indices of the messages to drop
    tokens: int  # their estimated tokens

    def dropped(self, messages: Sequence[Message]) -> list[Message]:
        return [m for i, m in enumerate(messages) if i in self.drop]


def plan_drop(messages: Sequence[Message], counts: Sequence[int], need: int) -> DropPlan | None:
    """The oldest groups whose tokens add up to at least `need` (or all that may go)."""
    latest = latest_user_index(messages)
    unseen = open_round_start(messages)  # a tool round whose results the model has not seen
    ok = safe_cuts(messages)
    ordinary: list[tuple[int, int]] = []
    records: list[tuple[int, int]] = []
    for start, end in groups(messages):
        if (latest is not None and start <= latest < end) or not ok[end] or end > unseen:
            continue  # the latest request, or a round the model has not seen the end of
        if any(messages[i].summary is not None or messages[i].native is not None for i in range(start, end)):
            if latest is None:  # the latest request lives only in the record now (verbatim)
                continue
            records.append((start, end))
        else:
            ordinary.append((start, end))
    drop: set[int] = set()
    freed = 0
    for start, end in ordinary + records:
        if freed >= need:
            break
        drop.update(range(start, end))
        freed += sum(counts[start:end])
    if not drop:
        return None
    return DropPlan(frozenset(drop), freed)


def marker_text(dropped: int, transcript: str) -> str:
    return (
        f"{ENGINE_NOTE_PREFIX}{dropped} earlier messages were dropped to keep the conversation within "
        f'the model\'s window. They are saved in {transcript}; call recall("<phrase>") with a file name, '
        "an error or a few words to fetch exact passages.]"
    )


def dropped_files(dropped: Sequence[Message]) -> str:
    """The files list of the `dropped` messages ("" when they touched none): every file a dropped
    record listed and a dropped call touched, the newest within `MARKER_FILES_TOKENS` or the largest
    list a dropped record held, the earlier ones counted."""
    facts = span_facts(dropped)
    held = [
        len(m.summary.text) - m.summary.text.rfind(FILES_HEADER)
        for m in dropped
        if m.summary is not None and FILES_HEADER in m.summary.text
    ]
    budget = max(MARKER_FILES_TOKENS, max(held, default=0) // 4 + 1)
    return files_section(facts.paths, budget=budget, count=estimate_tokens, unlisted=facts.unlisted)


def apply_drop(messages: Sequence[Message], plan: DropPlan, marker: str) -> list[Message]:
    """The history without the dropped messages, the marker where the first of them was (with the
    files list of what was dropped)."""
    files = dropped_files(plan.dropped(messages))
    marker = f"{marker}\n\n{files}" if files else marker
    out: list[Message] = []
    placed = False
    for i, message in enumerate(messages):
        if i in plan.drop:
            if not placed:
                out.append(Message.user(marker))
                placed = True
            continue
        out.append(message)
    pending = bool(messages) and messages[-1].role == "user"
    return stitch(out, pending=pending)


def stitch(messages: Sequence[Message], *, pending: bool) -> list[Message]:
    """Restore alternation after messages were removed.

    An acknowledgement goes between two user messages; a dangling
    acknowledgement before another assistant message goes; and when the model
    is to answer next (`pending`), the history does not end on one.
    """
    out: list[Message] = []
    for message in messages:
        if out and out[-1].role == message.role == "user":
            out.append(Message.assistant(ACK))
        elif out and out[-1].role == message.role == "assistant" and is_ack(out[-1]):
            out.pop()
        out.append(message)
    while pending and out and is_ack(out[-1]):
        out.pop()
    return out

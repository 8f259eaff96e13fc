"""The compactions a session's log records, read back so `/uncompact` can undo the last one.

Every compaction leaves two things in the log: a checkpoint (the working history after it) and,
right after it, the layer's CompactEvent. The history before it is what the log replayed to just
before that checkpoint (`sessions.replay`, the same reading `--resume` does). So the log alone
says what the last compaction removed, after a restart too: nothing is kept in memory.

`last_compaction` walks the records keeping a stack of the condensing compactions (L2, L3, L4):
a checkpoint written by `/uncompact` takes the top off (a second `/uncompact` undoes the one
before), and one written by `/clear` or `/rewind` empties it (what came before is no longer the
conversation to go back to).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.core.events import CompactEvent, CompactLayer
from agent_cli.core.messages import Message
from agent_cli.store.log_records import EventRecord, HistoryRecord, LogRecord, MessageRecord

__all__ = ["UNCOMPACT", "Compaction", "last_compaction", "undone"]

UNCOMPACT = "uncompact"  # the reason of the checkpoint /uncompact writes
FORGETTING = frozenset({"clear", "rewind"})  # checkpoints after which nothing earlier comes back


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction as the log holds it: the history before it and the ids of the messages it
    put in (the record, its acknowledgement, a drop's marker)."""

    before: tuple[Message, ...]
    added: frozenset[str]
    layer: CompactLayer
    removed: int  # messages of `before` the compaction took out


def last_compaction(records: Sequence[LogRecord]) -> Compaction | None:
    """The compaction `/uncompact` would undo now, or None when there is none to undo."""
    stack: list[Compaction] = []
    history: list[Message] = []
    seen: set[str] = set()
    pending: tuple[tuple[Message, ...], tuple[Message, ...]] | None = None  # (before, after) a checkpoint
    for rec in records:
        if isinstance(rec, EventRecord):
            if pending is not None and isinstance(rec.event, CompactEvent) and rec.event.layer.undoable:
                before, after = pending
                old, new = {m.id for m in before}, {m.id for m in after}
                stack.append(Compaction(before, frozenset(new - old), rec.event.layer, len(old - new)))
                pending = None
            continue
        pending = None
        if isinstance(rec, MessageRecord) and rec.message.id not in seen:
            history.append(rec.message)
            seen.add(rec.message.id)
        elif isinstance(rec, HistoryRecord):
            if rec.reason == UNCOMPACT and stack:
                stack.pop()
            elif rec.reason in FORGETTING:
                stack.clear()
            else:
                pending = (tuple(history), rec.messages)
            history = list(rec.messages)
            seen = {m.id for m in history}
    return stack[-1] if stack else None


def undone(compaction: Compaction, now: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """The history with `compaction` undone: every message it removed back, exactly as it was and in
    its place, then what was said since (the record it put in taken out). Returned as (what the
    log held before it, what came after), so the caller can settle the later messages' thinking."""
    earlier = {m.id for m in compaction.before}
    since = [m for m in now if m.id not in earlier and m.id not in compaction.added]
    return list(compaction.before), since

"""The record in the context, as the user sees, edits and undoes it (`/record`, `/uncompact`).

Pure functions over a history and the session log's records:

    find_record(history)          where the condensed record is (the newest one)
    with_record(history, i, text) the history with the user's text as that record, byte for byte
    record_origin(records, id)    how that record came to be: which layer, set off by what, when
    uncompacted(records, history) the history with the last compaction undone (store/compactions.py)
    view_record(history, records) the record taken apart for /record (context/record_parts.py)

Whatever changes a message before an assistant turn unbinds that turn's thinking, so both edits
settle it (`core.thinking`): the messages after the change lose their thinking, the earlier keep it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.record_parts import RecordPart, archive_files, record_parts
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, SummaryBlock
from agent_cli.core.thinking import settle_thinking, strip_thinking
from agent_cli.store.compactions import last_compaction, undone
from agent_cli.store.log_records import EventRecord, HistoryRecord, LogRecord
from agent_cli.store.sessions import sendable

__all__ = [
    "RECORD_EDIT",
    "Origin",
    "RecordView",
    "Uncompacted",
    "find_record",
    "record_origin",
    "uncompacted",
    "view_record",
    "with_record",
]

RECORD_EDIT = "record-edit"  # the reason of the checkpoint an edited record writes
_TRIGGERS = {
    "auto": "at the compaction line",
    "manual": "by /compact",
    "tool": "by the model's compact call",
    "overflow": "after the provider refused a request as too long",
}


@dataclass(frozen=True, slots=True)
class Origin:
    """How the record came to be, in words for /record."""

    how: str  # "L2, at the compaction line", "/record edit"
    when: str  # the log's timestamp
    edited: bool = False
    degraded: bool = False  # the digest stands in: no model wrote the body


def find_record(history: Sequence[Message]) -> int | None:
    """The index of the newest message holding a condensed record, None when there is none."""
    return next((i for i in range(len(history) - 1, -1, -1) if history[i].summary is not None), None)


def with_record(history: Sequence[Message], index: int, text: str) -> list[Message]:
    """`history` with the record at `index` holding `text` (its transcript kept)."""
    message = history[index]
    blocks = [SummaryBlock(text, b.transcript) if isinstance(b, SummaryBlock) else b for b in message.content]
    edited = [*history[:index], message.replace(blocks), *history[index + 1 :]]
    return settle_thinking(history, edited)


def record_origin(records: Sequence[LogRecord], message_id: str) -> Origin | None:
    """Where the log first holds the record message `message_id`, and the layer that put it there."""
    found: HistoryRecord | None = None
    for rec in records:
        if found is None:
            if isinstance(rec, HistoryRecord) and any(m.id == message_id for m in rec.messages):
                found = rec
                if rec.reason == RECORD_EDIT:
                    return Origin("/record edit", rec.ts, edited=True)
            continue
        if isinstance(rec, EventRecord) and isinstance(rec.event, CompactEvent):
            event = rec.event
            if event.layer.undoable:
                trigger = _TRIGGERS.get(event.trigger, event.trigger)
                ahead = ", prepared ahead" if event.ahead else ""
                how = f"{event.layer.design}, {trigger}{ahead}"
                return Origin(how, found.ts, degraded=event.degraded)
            continue
        if not isinstance(rec, EventRecord):
            break
    return Origin("a compaction", found.ts) if found is not None else None


def uncompacted(records: Sequence[LogRecord], history: Sequence[Message]) -> tuple[list[Message], int] | None:
    """The history with the last compaction the log records undone, and how many messages came
    back; None when there is none to undo. The messages that came back are as the log holds them
    (a secret the log redacted unbinds the thinking after it, as on --resume); what was said since
    the compaction followed a record that is gone, so its thinking goes."""
    compaction = last_compaction(records)
    if compaction is None:
        return None
    before, since = undone(compaction, history)
    restored = sendable(before)
    return [*restored, *strip_thinking(since, 0)], compaction.removed


@dataclass(frozen=True, slots=True)
class Uncompacted:
    """What /uncompact did: `restored` messages back and the context now `tokens`; or, with `over`
    above 0, nothing, because the conversation would be that many tokens over what the window holds."""

    restored: int
    tokens: int
    over: int = 0


@dataclass(frozen=True, slots=True)
class RecordView:
    """What /record shows: the record's text, its parts, the archive files it names, its origin."""

    text: str
    transcript: str | None
    parts: tuple[RecordPart, ...]
    files: tuple[str, ...]
    origin: Origin | None
    native: bool = False  # the provider's own record stands first: /record edit cannot change it


def view_record(
    history: Sequence[Message], records: Sequence[LogRecord], *, writer: str
) -> RecordView | None:
    """The record in `history` taken apart; `writer` names the model that writes summaries."""
    index = find_record(history)
    if index is None:
        return None
    block = history[index].summary
    assert block is not None
    origin = record_origin(records, history[index].id)
    if origin is not None and origin.edited:
        source = "edited by you (/record edit)"
    elif origin is not None and origin.degraded:
        source = "a mechanical digest by agent-cli (no model could write the record)"
    else:
        source = f"written by the summary model ({writer})"
    parts = record_parts(block.text, writer=source)
    native = next((n for m in history if (n := m.native) is not None), None)
    if native is not None:  # the provider's own record comes first; ours beside it carries the rest
        what = "its summary" if native.readable else "a note of what it holds (the rest is encrypted)"
        source = f"written by {native.provider}'s own compaction, signed: it cannot be edited; shown: {what}"
        parts.insert(0, RecordPart("provider's record", source, native.text))
    files = [block.transcript] if block.transcript else []
    files += [f for f in archive_files(block.text) if f not in files]
    return RecordView(block.text, block.transcript, tuple(parts), tuple(files), origin, native is not None)

"""The session log read back as typed records: the one reader every module that reads a log uses.

`SessionLog` writes `{"rid", "ts", "kind", ...}` lines (see session_log.py); `read_log` turns a
log into `MetaRecord`, `MessageRecord`, `EventRecord`, `HistoryRecord` and `StateRecord` values,
and counts the lines it could not take: torn or undecodable lines, and records that do not fit their kind. A
log a newer version wrote still reads: an event of a type this version does not know is left out; a
record of a kind it does not know becomes a `ForeignRecord` (its kind only), and a message holding
blocks of a type it does not know is kept without them (`MessageRecord.left_out` names their types),
so the reader of a session can say what it could not take instead of dropping it without a word.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from agent_cli.core.events import EVENT_TYPES, Event, UsageEvent, event_from_json
from agent_cli.core.messages import Block, Message, UnknownBlockType, Usage, block_from_json, new_id
from agent_cli.store.image_refs import image_digests, resolved

__all__ = [
    "EventRecord",
    "ForeignRecord",
    "HistoryRecord",
    "LogRecord",
    "MessageRecord",
    "MetaRecord",
    "StateRecord",
    "UnknownRecord",
    "last_usage",
    "read_log",
    "record_from_json",
]


@dataclass(frozen=True, slots=True)
class MetaRecord:
    """Provider, model, cwd, version: written when a session starts or resumes."""

    rid: str
    ts: str
    meta: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class MessageRecord:
    rid: str
    ts: str
    message: Message
    left_out: tuple[str, ...] = ()  # the types of the blocks a newer version wrote that were not read


@dataclass(frozen=True, slots=True)
class EventRecord:
    rid: str
    ts: str
    event: Event


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    """A checkpoint: the whole working history after a compaction or /clear."""

    rid: str
    ts: str
    messages: tuple[Message, ...]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class StateRecord:
    """What the user changed about the session besides its messages (`topic`: "pins", "rewind", ...),
    with the data that topic's reader takes: the pins as they stand, what a rewind restored."""

    rid: str
    ts: str
    topic: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ForeignRecord:
    """A record of a kind this version does not know (a newer version's): kept by its kind only."""

    rid: str
    ts: str
    kind: str


LogRecord: TypeAlias = MetaRecord | MessageRecord | EventRecord | HistoryRecord | StateRecord | ForeignRecord


class UnknownRecord(ValueError):
    """A record of a kind, or an event of a type, this version does not know."""


def record_from_json(data: Mapping[str, Any]) -> LogRecord:
    """The record one log line holds. Raises UnknownRecord for a kind or event type not known here,
    ValueError for a record that does not fit its kind."""
    rid, ts, kind = str(data.get("rid") or ""), str(data.get("ts") or ""), data.get("kind")
    try:
        if kind == "meta":
            meta = data["meta"]
            if not isinstance(meta, Mapping):
                raise ValueError("a meta record without its fields")
            return MetaRecord(rid, ts, dict(meta))
        if kind == "message":
            message, left_out = _logged_message(data["message"])
            return MessageRecord(rid, ts, message, left_out)
        if kind == "history":
            messages = tuple(Message.from_json(m) for m in data["messages"])
            return HistoryRecord(rid, ts, messages, str(data.get("reason") or ""))
        if kind == "state":
            topic, body = data["topic"], data["data"]
            if not isinstance(topic, str) or not isinstance(body, Mapping):
                raise ValueError("a state record without its topic and data")
            return StateRecord(rid, ts, topic, dict(body))
        if kind == "event":
            event = data["event"]
            if not isinstance(event, Mapping):
                raise ValueError("an event record without its event")
            if event.get("type") not in EVENT_TYPES:
                raise UnknownRecord(f"an event of type {event.get('type')!r}")
            return EventRecord(rid, ts, event_from_json(event))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"a {kind} record that does not fit: {exc}") from None
    if isinstance(kind, str) and kind:
        return ForeignRecord(rid, ts, kind)
    raise ValueError("a record without its kind")


def _logged_message(data: Mapping[str, Any]) -> tuple[Message, tuple[str, ...]]:
    """The message a record holds, without the blocks of types not known here; and those types."""
    role = data["role"]
    if role not in ("user", "assistant"):
        raise ValueError(f"unknown role: {role!r}")
    blocks: list[Block] = []
    left_out: list[str] = []
    for block in data["content"]:
        try:
            blocks.append(block_from_json(block))
        except UnknownBlockType:
            left_out.append(str(block.get("type")))
    return Message(role, tuple(blocks), str(data.get("id") or new_id())), tuple(left_out)


def last_usage(records: Sequence[LogRecord]) -> Usage | None:
    """What the provider reported for the last request the log records, if any."""
    for rec in reversed(records):
        if isinstance(rec, EventRecord) and isinstance(rec.event, UsageEvent):
            return rec.event.usage
    return None


def read_log(path: Path) -> tuple[list[LogRecord], int]:
    """The log's records in order, and how many lines could not be read (see the module's docstring).
    Raises OSError when the file cannot be read at all."""
    records: list[LogRecord] = []
    skipped = 0
    images: dict[str, str] = {}  # the images read so far, by digest: a checkpoint names them (image_refs.py)
    for raw in path.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
            if not isinstance(value, dict):
                raise ValueError("not a record")
            if value.get("kind") == "message" and isinstance(value.get("message"), dict):
                images.update(image_digests(value["message"]))
            elif value.get("kind") == "history" and isinstance(value.get("messages"), list):
                value["messages"] = resolved(value["messages"], images)
                for message in value["messages"]:
                    images.update(image_digests(message) if isinstance(message, dict) else {})
            records.append(record_from_json(value))
        except UnknownRecord:
            continue
        except ValueError:  # torn, undecodable (UnicodeDecodeError too), or not fitting its kind
            skipped += 1
    return records, skipped

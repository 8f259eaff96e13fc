"""Rewind points: a session's prompts as its log holds them, and what going back to one takes.

    points(records) -> [RewindPoint]             the prompts of the current line, numbered from 1
    pick(points, number) -> RewindPoint          one of them, or a one-line CommandError
    undo_plan(records, point) -> UndoPlan        how each file changed since the prompt was before it
    history_before(records, point) -> [Message]  the working history just before the prompt
    before_prompt(live, records, point)          the same, from the working history while it holds it
    rewind_data(point, chat, code, restored)     what the log's `rewind` record holds

A *prompt* is a message the user sent: a plain user message in the log, but not the loop's own
notes (a turn interrupted, a reply cut off) nor what a `!command` printed (its changes to the files
are watched, and counted with the prompt before it). Prompts are numbered from the log, not from the
working history, so a prompt a compaction condensed away keeps its number and can still be gone
back to: its history is replayed from the log's records up to it (checkpoints included, as
`--resume` replays them).

The *current line*: a rewind of the conversation to prompt N takes prompts N and later out of the
list (they stay in the log and the archive); a rewind of the files alone leaves the list as it is.
Each prompt carries the touches recorded after it and before the next prompt (file_changes.py),
which is what the list shows.

Undoing the files since prompt N takes every touch after N's record, in the log's order, whatever
line it was on (a file changed after N, then rewound, then changed again, is still changed since
N): for each path the first touch's state before is how it was at N. A rewind's own touch counts
too, so a later rewind can go back over an earlier one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_cli.agent.attachments import is_shell_message
from agent_cli.agent.continuations import CONTINUE_AFTER_CUTOFF
from agent_cli.agent.file_changes import FILES_TOPIC, REWIND_TOPIC, Change, Lost, Touch, UndoPlan
from agent_cli.agent.restore import Restored
from agent_cli.agent.turn_stops import INTERRUPTED_TURN
from agent_cli.core.errors import CommandError
from agent_cli.core.messages import Message, TextBlock
from agent_cli.core.pairing import repair_history
from agent_cli.store.log_records import LogRecord, MessageRecord, StateRecord
from agent_cli.store.sessions import replay

__all__ = [
    "RewindPoint",
    "Rewound",
    "before_prompt",
    "history_before",
    "is_prompt",
    "pick",
    "points",
    "prompt_text",
    "rewind_data",
    "touch_of",
    "undo_plan",
]

_LOOP_NOTES = frozenset({INTERRUPTED_TURN, CONTINUE_AFTER_CUTOFF})


@dataclass(frozen=True, slots=True)
class RewindPoint:
    """Prompt `number` of the current line: its text as typed, its message, where the log has it,
    and what the tool calls of its turn changed."""

    number: int
    text: str
    message_id: str
    at: int  # the index of its MessageRecord in the log's records
    touches: tuple[Touch, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """Every path its turn changed (written, edited, created, deleted), sorted."""
        return tuple(sorted({p for t in self.touches for p in t.paths}))

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands its turn ran, in order."""
        return tuple(t.command for t in self.touches if t.command)


@dataclass(frozen=True, slots=True)
class Rewound:
    """What `/rewind N` did: the prompt gone back to, whether the conversation went back, and what
    became of the files (None when they were left as they are)."""

    point: RewindPoint
    chat: bool
    restored: Restored | None


def prompt_text(message: Message) -> str:
    """What the user typed: the message's first text block (hooks add theirs after it)."""
    return next((b.text for b in message.content if isinstance(b, TextBlock)), "")


def is_prompt(message: Message) -> bool:
    text = prompt_text(message)
    return message.is_plain_user and text not in _LOOP_NOTES and not is_shell_message(text)


def touch_of(record: LogRecord) -> Touch | None:
    """The touch a `files` or `rewind` state record holds; None for any other record (or a damaged one)."""
    if not isinstance(record, StateRecord):
        return None
    try:
        if record.topic == FILES_TOPIC:
            return Touch.from_json(record.data)
        if record.topic == REWIND_TOPIC and isinstance(record.data.get("touch"), dict):
            return Touch.from_json(record.data["touch"])
    except (KeyError, TypeError, ValueError):
        return None
    return None


@dataclass
class _Open:
    message: Message
    at: int
    touches: list[Touch] = field(default_factory=list)


def points(records: Sequence[LogRecord]) -> list[RewindPoint]:
    """The prompts of the current line, in order, numbered from 1 (see the module's docstring)."""
    line: list[_Open] = []
    last: _Open | None = None
    for index, record in enumerate(records):
        if isinstance(record, MessageRecord) and is_prompt(record.message):
            last = _Open(record.message, index)
            line.append(last)
        elif isinstance(record, StateRecord) and record.topic == FILES_TOPIC:
            touch = touch_of(record)
            if touch is not None and last is not None:
                last.touches.append(touch)
        elif isinstance(record, StateRecord) and record.topic == REWIND_TOPIC and record.data.get("chat"):
            back_to = record.data.get("message")
            cut = next((i for i, p in enumerate(line) if p.message.id == back_to), None)
            if cut is not None:
                del line[cut:]
                last = None
    return [
        RewindPoint(n, prompt_text(p.message), p.message.id, p.at, tuple(p.touches))
        for n, p in enumerate(line, start=1)
    ]


def pick(found: Sequence[RewindPoint], number: int) -> RewindPoint:
    if not found:
        raise CommandError("nothing to rewind yet: this session has no prompts")
    if not 1 <= number <= len(found):
        last = len(found)
        has = "1 prompt" if last == 1 else f"{last} prompts (1-{last})"
        raise CommandError(f"no prompt {number}: this session has {has}; /rewind lists them")
    return found[number - 1]


def undo_plan(records: Sequence[LogRecord], point: RewindPoint) -> UndoPlan:
    """How every path changed after `point`'s prompt was at that moment (the first touch says)."""
    first: dict[str, Change | Lost] = {}
    notes: list[str] = []
    for record in records[point.at + 1 :]:
        touch = touch_of(record)
        if touch is None:
            continue
        each: list[Change | Lost] = [*touch.changes, *touch.lost]
        for change in each:
            first.setdefault(change.path, change)
        if touch.note and touch.note not in notes:
            notes.append(touch.note)
    changes = tuple(c for c in first.values() if isinstance(c, Change))
    lost = tuple(c for c in first.values() if isinstance(c, Lost))
    return UndoPlan(changes, lost, tuple(notes))


def history_before(records: Sequence[LogRecord], point: RewindPoint) -> list[Message]:
    """The working history as the log replays it just before `point`'s prompt was sent (its tool
    calls paired, as `--resume` pairs them: a session may have stopped inside a call before it)."""
    return repair_history(replay(records[: point.at])[1])


def before_prompt(live: Sequence[Message], records: Sequence[LogRecord], point: RewindPoint) -> list[Message]:
    """The conversation to go on from: the working history up to the prompt while it holds it (as
    the engine condensed it since, and as sent: the log holds secrets redacted); else, when a
    compaction took the prompt away, the history as the log replays it just before the prompt."""
    ids = [m.id for m in live]
    if point.message_id in ids:
        return list(live[: ids.index(point.message_id)])
    return history_before(records, point)


def rewind_data(point: RewindPoint, chat: bool, code: bool, restored: Restored | None) -> dict[str, Any]:
    """What the log's `rewind` state record holds: the prompt gone back to, what was rewound,
    the rewind's own touch and what could not be put back."""
    data: dict[str, Any] = {"prompt": point.number, "message": point.message_id, "chat": chat, "code": code}
    if restored is not None:
        data["touch"] = restored.touch.to_json()
        data["unrestored"] = [lost.to_json() for lost in restored.unrestored]
    return data

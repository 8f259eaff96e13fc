"""The context engine as the loop sees it: the values the two exchange, and where the frame's notes
ride in the history.

- `Frame`: the fixed prefix of every request (system prompt and tool specs).
  The loop owns it; the engine counts it. Its *notes* (the todo list's, the goal's) ride in the
  history instead: where, is below.
- `Prepared`: the history to send (and keep from now on), plus what the
  engine did to it, as events the loop emits.
- `ContextPolicy`: the calls the loop makes. `context.engine.ContextEngine`
  is the implementation; tests use a pass-through fake.
- `Gate`: what an observer (a user's PreCompact hook) says of a compaction before L2 or L3 asks
  the model for a record, as a value (`CompactGate`):
  `skip` leaves this automatic compaction out for now (only an automatic one, the trigger or a
  provider's overflow, and only L2: the emergency layer still acts, so no gate can make a request
  overflow; a requested compaction, /compact or the compact tool, always runs); `extra` is text
  appended to the summary instruction (a hook's `additionalContext`).

*The notes* (the todo list's, and the goal's) ride in the history: a note in the newest user
message, kept there.

The *note* is the list's text (`core.todos.todo_note`): every request carries it byte for byte while
the list is not empty. When the list changes it is todo_write's own result, in the round's results
message (the newest user message). When a layer takes it (L1 clears that result, L2 condenses it,
L4 drops it; /clear; an edited record), it is placed again as a text block of its own at the end of
the newest user message. Either way it is then left where it is, so the history stays append-only
for the provider's cache: a change of the list costs the note's tokens, not a new cache of the whole
prefix as a change of the system prompt would (the figures are in docs/context-engine.md). Pure
functions over message lists:

- `holds(messages, note)`: whether a text block of the messages is the note.
- `carried(messages, note)`: the history with the note placed, or None when nothing changes.
- `with_note(span, note)`: a summary request's span with the note at its end, so the instruction the
  request appends after it stays its last text block.
The goal's note (`core.goals.goal_note`) rides the same way, a block of its own beside the list's:
`carried` and `with_note` take every note the frame names (`Frame.notes`).

- `logged_todos(records)`: the list as the session log last recorded it (`--continue`, `/resume`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse, Usage
from agent_cli.core.requests import RequestOptions, ToolSpec
from agent_cli.core.todos import TodoItem, todos_from_json
from agent_cli.store.log_records import LogRecord, StateRecord

__all__ = [
    "OPEN",
    "TOPIC",
    "CompactGate",
    "ContextPolicy",
    "EngineEvent",
    "Frame",
    "Gate",
    "Prepared",
    "carried",
    "holds",
    "logged_todos",
    "open_gate",
    "skippable",
    "with_note",
]

EngineEvent: TypeAlias = CompactEvent | WarningEvent | ErrorEvent


@dataclass(frozen=True, slots=True)
class Frame:
    """The fixed prefix of every request: the system prompt and the tool specs. `pins` is the part
    of `system` that holds the user's pins (prompt/pins.py), so /context can say what they take.
    `todos` is the todo list's note (core/todos.py): not part of `system` (it rides in the history:
    `carried`), but carried by every request, summary requests included. `goal` is the goal's
    note (core/goals.py), carried the same way while a goal is active."""

    system: str
    tools: tuple[ToolSpec, ...] = ()
    pins: str = ""
    todos: str = ""
    goal: str = ""

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes every request carries in its history (`carried` places them)."""
        return tuple(note for note in (self.todos, self.goal) if note)

    def digest(self) -> str:
        """A short fingerprint of the frame. Thinking blocks are bound to it: a session resumed
        under another frame (a new day in the system prompt, changed tools) cannot send them back."""
        specs = [[t.name, t.description, dict(t.input_schema)] for t in self.tools]
        body = json.dumps([self.system, specs], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The history to send (and keep) and what happened to it."""

    messages: list[Message]
    events: list[EngineEvent]
    # Set when even after every layer the request cannot go (far over the window before sending, or
    # still refused after an overflow): why it is not sent. The history is then as it was.
    unsendable: ContextOverflowError | None = None


class ContextPolicy(Protocol):
    """What the loop needs from the context engine."""

    def ingest(
        self, use: ToolUse, result: ToolResult, *, round_size: int = 1
    ) -> tuple[ToolResult, CompactEvent | None]:
        """L0, as each tool result arrives: the result to keep, and the cut if one was made."""
        ...

    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared:
        """Before every request: whatever layers the count calls for."""
        ...

    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> WarningEvent | None:
        """After every response: the provider's count of what was sent; a warning when it is not
        believed (far below the local count), the first time."""
        ...

    def turn_ended(self, history: Sequence[Message], frame: Frame) -> None:
        """A turn ended and the user is to speak (an interactive session): work that can go on
        while they read and type may start now."""
        ...

    def on_overflow(self, history: Sequence[Message], frame: Frame, error: ContextOverflowError) -> Prepared:
        """The provider refused the prompt as too long: the shrunk history, or (when nothing more
        can go) the history as it was with `unsendable` saying why."""
        ...

    def compact(
        self, history: Sequence[Message], frame: Frame, focus: str | None, trigger: CompactTrigger
    ) -> Prepared:
        """L3: condense the conversation now (`/compact`, or the model's compact tool)."""
        ...

    def cache_options(self, history: Sequence[Message]) -> RequestOptions:
        """Where the request's cache marks go, for a provider that caches only at marked points: the
        last message the engine's next clear keeps byte for byte, whether the newest message is worth
        writing, where the next summary's span ends, the message marked for an hour."""
        ...

    def tokens(self, history: Sequence[Message], frame: Frame) -> int: ...

    @property
    def window(self) -> int:
        """The window as the engine knows it (it learns a smaller one from errors)."""
        ...

    @property
    def max_output(self) -> int:
        """Tokens a reply may take (the engine lowers it when it learns a smaller window)."""
        ...


@dataclass(frozen=True, slots=True)
class CompactGate:
    skip: bool = False
    extra: str = ""


OPEN = CompactGate()

# (layer, trigger, focus) -> what to do; called on the engine's thread before the summary request.
Gate: TypeAlias = Callable[[CompactLayer, CompactTrigger, str | None], CompactGate]


def open_gate(layer: CompactLayer, trigger: CompactTrigger, focus: str | None) -> CompactGate:
    """The gate of an engine nobody observes: every compaction goes, as it is."""
    return OPEN


def skippable(trigger: CompactTrigger) -> bool:
    """Whether a gate may skip a compaction this trigger set off (the automatic ones only)."""
    return trigger in ("auto", "overflow")


# -- the notes in the history ----------------------------------------------------------------------

TOPIC = "todos"  # the session log's state topic: {"todos": [{content, status, activeForm?}, ...]}


def holds(messages: Sequence[Message], note: str) -> bool:
    """Whether the note is in the messages whole: a text block of its own, or in a tool result
    (todo_write's, until L1 clears it or L0 cuts it)."""
    return any(
        (isinstance(b, TextBlock) and b.text == note) or (isinstance(b, ToolResult) and note in b.content)
        for m in messages
        for b in m.content
    )


def carried(messages: Sequence[Message], *notes: str) -> list[Message] | None:
    """`messages` with each note (the todo list's, the goal's) the history does not hold as a block
    at the end of the newest message; None when there is none to place, or the newest message is
    the model's (a paused reply goes back as it is; the notes join the next user message instead: a
    block put before a reply's thinking would unbind it)."""
    if not messages or messages[-1].role != "user":
        return None
    missing = [note for note in notes if note and not holds(messages, note)]
    if not missing:
        return None
    last = messages[-1]
    return [*messages[:-1], last.replace((*last.content, *(TextBlock(note) for note in missing)))]


def with_note(span: Sequence[Message], *notes: str) -> list[Message]:
    """A summary request's span carrying the notes: at the end of its last user message, or as a user
    message after the span's last reply (the request adds its instruction to that message, after it)."""
    missing = [note for note in notes if note and not holds(span, note)]
    if not missing:
        return list(span)
    blocks = tuple(TextBlock(note) for note in missing)
    if span and span[-1].role == "user":
        last = span[-1]
        return [*span[:-1], Message(last.role, (*last.content, *blocks), last.id + "+t")]
    return [*span, Message("user", blocks)]


def logged_todos(records: Sequence[LogRecord]) -> tuple[TodoItem, ...]:
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    return todos_from_json(last.data.get("todos")) if last is not None else ()

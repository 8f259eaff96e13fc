"""Where the todo list (and the goal) rides: a note in the newest user message, kept in the history.

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

from collections.abc import Sequence

from agent_cli.core.messages import Message, TextBlock, ToolResult
from agent_cli.core.todos import TodoItem, todos_from_json
from agent_cli.store.log_records import LogRecord, StateRecord

__all__ = ["TOPIC", "carried", "holds", "logged_todos", "with_note"]

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

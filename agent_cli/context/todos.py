"""Where the todo list rides: a note in the newest user message, kept in the history.

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


def carried(messages: Sequence[Message], note: str) -> list[Message] | None:
    """`messages` with the note as the last block of the newest message; None when there is no list,
    the note is already there, or the newest message is the model's (a paused reply goes back as it
    is; the note joins the next user message instead: a block put before a reply's thinking would
    unbind it)."""
    if not note or not messages or messages[-1].role != "user" or holds(messages, note):
        return None
    last = messages[-1]
    return [*messages[:-1], last.replace((*last.content, TextBlock(note)))]


def with_note(span: Sequence[Message], note: str) -> list[Message]:
    """A summary request's span carrying the note: at the end of its last user message, or as a user
    message after the span's last reply (the request adds its instruction to that message, after it)."""
    if not note or holds(span, note):
        return list(span)
    if span and span[-1].role == "user":
        last = span[-1]
        return [*span[:-1], Message(last.role, (*last.content, TextBlock(note)), last.id + "+t")]
    return [*span, Message.user(note)]


def logged_todos(records: Sequence[LogRecord]) -> tuple[TodoItem, ...]:
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    return todos_from_json(last.data.get("todos")) if last is not None else ()

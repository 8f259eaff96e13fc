"""The session's todo list as values: its items, read from a tool call or a log, and its note.

- `TodoItem`: one item (`content`, `status`, Claude Code's optional `active_form`).
- `parse_todos(value)`: the `todos` argument of a `todo_write` call as items, or `ValueError` with a
  line the model can act on (the tool turns it into an error result).
- `todos_to_json` / `todos_from_json`: the list as the session log keeps it, and read back (a
  malformed entry is skipped, never raised: a log is read, not trusted).
- `todo_note(items)`: the text every request carries while the list is not empty (the *note*). It
  holds each item's content byte for byte, and is the same text for the same list, so a request
  can tell whether it already holds it by comparing text.
- `current_item(items)`: the item in progress (the first one), for the REPL's toolbar.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

__all__ = [
    "MAX_CONTENT",
    "MAX_ITEMS",
    "TodoItem",
    "TodoStatus",
    "current_item",
    "parse_todos",
    "todo_note",
    "todos_from_json",
    "todos_to_json",
]

TodoStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = get_args(TodoStatus)

# Every request carries the whole list: these bound what one call can add to every request after it.
MAX_ITEMS = 50
MAX_CONTENT = 500

NOTE_OPEN = "<todo-list>"
NOTE_CLOSE = "</todo-list>"
NOTE_HEAD = (
    "The todo list as your last todo_write left it (kept in every request, through every compaction; "
    "todo_write replaces it):"
)


@dataclass(frozen=True, slots=True)
class TodoItem:
    content: str
    status: TodoStatus = "pending"
    active_form: str = ""  # Claude Code's present-tense form ("Running the tests"); optional


def _item(raw: Any, n: int) -> TodoItem:
    if not isinstance(raw, Mapping):
        raise ValueError(f"todos[{n}] must be an object with content and status")
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"todos[{n}].content must be a non-empty string")
    if len(content) > MAX_CONTENT:
        raise ValueError(f"todos[{n}].content is {len(content):,} characters; at most {MAX_CONTENT:,}")
    status = raw.get("status", "pending")
    if status not in STATUSES:
        choices = ", ".join(repr(s) for s in STATUSES)
        raise ValueError(f"todos[{n}].status must be one of {choices}, got {json.dumps(status)[:60]}")
    active = raw.get("activeForm", "")
    if active is None:
        active = ""
    if not isinstance(active, str) or len(active) > MAX_CONTENT:
        raise ValueError(f"todos[{n}].activeForm must be a string of at most {MAX_CONTENT:,} characters")
    return TodoItem(content, status, active)


def parse_todos(value: Any) -> tuple[TodoItem, ...]:
    """The items of a `todos` argument (a list of objects; a JSON text of one is accepted too)."""
    if isinstance(value, str):  # some models send the array as a JSON string
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("todos must be an array of {content, status} objects") from None
    if not isinstance(value, list):
        raise ValueError("todos must be an array of {content, status} objects")
    if len(value) > MAX_ITEMS:
        raise ValueError(f"todos has {len(value)} items; at most {MAX_ITEMS}")
    return tuple(_item(raw, n) for n, raw in enumerate(value))


def todos_to_json(items: Iterable[TodoItem]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for item in items:
        entry = {"content": item.content, "status": item.status}
        if item.active_form:
            entry["activeForm"] = item.active_form
        out.append(entry)
    return out


def todos_from_json(data: Any) -> tuple[TodoItem, ...]:
    """The list as a log recorded it; entries that do not read as items are left out."""
    if not isinstance(data, list):
        return ()
    items: list[TodoItem] = []
    for n, raw in enumerate(data):
        try:
            items.append(_item(raw, n))
        except ValueError:
            continue
    return tuple(items)


def todo_note(items: Sequence[TodoItem]) -> str:
    """The text every request carries for this list ("" for an empty list): each content as written."""
    if not items:
        return ""
    lines = [NOTE_OPEN, NOTE_HEAD]
    lines += [f"{n}. [{item.status}] {item.content}" for n, item in enumerate(items, 1)]
    lines.append(NOTE_CLOSE)
    return "\n".join(lines)


def current_item(items: Sequence[TodoItem]) -> TodoItem | None:
    return next((item for item in items if item.status == "in_progress"), None)

"""The todo list as a person sees it: `/todos`, and the toolbar's item in progress.

The items are the model's text: what reaches the terminal has its control characters written out
(`core.text.visible`); the toolbar's item is one line, so its newlines and tabs are written out too,
and it is cut to the room the toolbar has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_cli.core.text import escape_char, visible
from agent_cli.core.todos import TodoItem, current_item

if TYPE_CHECKING:
    from agent_cli.ui.command_kit import CommandKit

__all__ = ["MARKS", "todo_lines", "todos", "toolbar_item"]

MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
TOOLBAR_ITEM = 40  # characters of the item at most: the toolbar is one line shared with the context
_PREFIX = " · doing: "


def todo_lines(items: Sequence[TodoItem]) -> list[str]:
    """One entry per item, numbered: its mark and its content (safe, as `Renderer.line` shows it)."""
    return [f"{n}. {MARKS[item.status]} {visible(item.content)}" for n, item in enumerate(items, 1)]


def _one_line(text: str) -> str:
    return "".join(escape_char(c) if c in "\n\t" else c for c in visible(text))


def toolbar_item(items: Sequence[TodoItem], room: int | None = None) -> str:
    """" · doing: ITEM" for the item in progress (its activeForm when given), cut to `room` columns;
    "" when none is in progress or there is no room for it."""
    item = current_item(items)
    if item is None:
        return ""
    text = _one_line(item.active_form or item.content)
    limit = TOOLBAR_ITEM if room is None else min(TOOLBAR_ITEM, room - len(_PREFIX))
    if limit < 8:
        return ""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _PREFIX + text


def todos(kit: CommandKit, arg: str) -> None:
    """`/todos`: the model's todo list, as every request carries it."""
    items = kit.session.todos
    if not items:
        kit.renderer.info("no todo list: the model writes one with todo_write for multi-step work")
        return
    for line in todo_lines(items):
        kit.renderer.line(line)
    done = sum(1 for i in items if i.status == "completed")
    kit.renderer.info(f"{done} of {len(items)} done; every request carries the list through compaction")

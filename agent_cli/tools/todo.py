"""todo_write: the model's todo list for the session (Claude Code's TodoWrite shape).

A call replaces the whole list. The tool only checks the input and returns the new list as part of
its output (`ToolOutput.todos`), and the list's note as its result; the loop keeps the list and logs
it, and every later request carries the note (context/protocol.py). It changes nothing outside the
session, so it never asks. Bad input is an error result naming what is wrong; the list is then left
as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.core.todos import MAX_CONTENT, MAX_ITEMS, parse_todos, todo_note
from agent_cli.tools.base import Approval, CallView, ToolContext, ToolOutput

__all__ = ["TODO_WRITE", "TodoWrite"]

TODO_WRITE = "todo_write"
_SHAPE = "an array of {content, status}"


class TodoWrite:
    spec = ToolSpec(
        name=TODO_WRITE,
        description=(
            "Write the session's todo list for multi-step work: the whole list each time (it replaces "
            "the last one). Every later request carries the list word for word, through every "
            "compaction, so it is how a plan survives a long session. Use it for tasks of three or "
            "more steps: mark an item in_progress before you start it (one at a time) and completed "
            "as soon as it is done; add items you discover. Send an empty list to clear it."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "maxItems": MAX_ITEMS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "activeForm": {
                                "type": "string",
                                "description": "Optional: the item in the present tense (Running the tests).",
                            },
                        },
                        "required": ["content", "status"],
                    },
                },
            },
            "required": ["todos"],
        },
    )
    approval: Approval = "never"
    view = CallView()

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        if "todos" not in args:  # the list is left as it was
            return ToolOutput(f"Error: missing required argument 'todos' ({_SHAPE}).", True)
        try:
            items = parse_todos(args["todos"])
        except ValueError as exc:
            return ToolOutput(f"Error: {exc}; the todo list was not changed.", True)
        if not items:
            return ToolOutput("The todo list is now empty.", todos=())
        counts = {s: sum(1 for i in items if i.status == s) for s in ("completed", "in_progress", "pending")}
        told = (
            f"The todo list now has {len(items)} item{'s' if len(items) != 1 else ''} "
            f"({counts['completed']} completed, {counts['in_progress']} in progress, "
            f"{counts['pending']} pending); every request carries it. Keep it current as you work."
        )
        # The note itself is the result: the list rides in this round's results message as a tool
        # result (a text block there would make it a new user turn, and Claude's API would drop the
        # turn's thinking); context/protocol.py places it again when a layer takes it.
        return ToolOutput(f"{told}\n\n{todo_note(items)}", todos=items)

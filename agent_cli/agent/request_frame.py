"""What every request carries besides the history, as the loop keeps it between turns.

    system      the system prompt the session was built with
    pinned      the pins' section (prompt/pins.py), set by the session
    skills      the skills the model loaded (prompt/skills.py): pinned after the pins
    todos       the todo list (todo_write replaces it): its note rides in the history (context/protocol.py)
    goal_note   the goal's note (core/goals.py), carried like the todo list's

`frame(tools)` is the request's `Frame`. Thinking is bound to the whole prefix, the system
prompt included, so each change that reaches the system prompt says so (True): the loop then
strips the history's thinking. What changed is the caller's to log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_cli.context.protocol import Frame
from agent_cli.core.todos import TodoItem, todo_note
from agent_cli.prompt.skills import SkillsInUse
from agent_cli.tools.base import ToolRegistry

__all__ = ["FrameParts"]


class FrameParts:
    def __init__(self, system: str) -> None:
        self.system = system
        self.pinned = ""
        self.skills = SkillsInUse()
        self.todos: tuple[TodoItem, ...] = ()
        self.goal_note = ""

    def frame(self, tools: ToolRegistry) -> Frame:
        """The system prompt with the pins' section and the skills in use at its end, the tools, and
        the todo list's and goal's notes (carried in the history, not in the system prompt)."""
        pinned = self.pinned + self.skills.section()
        return Frame(self.system + pinned, tools.specs(), pinned, todo_note(self.todos), self.goal_note)

    def set_pinned(self, section: str) -> bool:
        """The pins' section from the next request on; whether the system prompt changed."""
        changed = section != self.pinned
        self.pinned = section
        return changed

    def restore_skills(self, in_use: Mapping[str, str]) -> bool:
        """The skills a reopened session had in use (its log's record); whether the system prompt changed."""
        restored = SkillsInUse(in_use)
        changed = restored.section() != self.skills.section()
        self.skills = restored
        return changed

    def use_skill(self, name: str, body: str) -> bool:
        """The model loaded a skill: pinned from the next request on; False when it was already."""
        return self.skills.add(name, body)

    def clear_skills(self) -> bool:
        """`/clear`: the skills the conversation loaded go with it; whether there were any."""
        if not self.skills.names:
            return False
        self.skills = SkillsInUse()
        return True

    def set_todos(self, todos: Sequence[TodoItem]) -> bool:
        """The todo list from now on; whether it differs from the one held."""
        new = tuple(todos)
        changed = new != self.todos
        self.todos = new
        return changed

    def set_goal_note(self, note: str) -> None:
        """The goal's note from the next request on ("" once it ends)."""
        self.goal_note = note

"""The skill tool: `skill(name)` returns a skill's instructions and asks the loop to keep them.

The session's skills (`prompt/skills.py` finds them, listed in the system prompt) are handed in as
name -> body. A call's result is the body (cut at `MAX_RESULT_CHARS`, saying so), and its output
carries a `SkillLoad`: the loop pins the body (the system prompt's "skills in use" section), so
it survives every clear and summary of the conversation. A name no skill has is an error result
that lists the names there are. The tool only reads what was read at start-up: it never asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools.args import require_str
from agent_cli.tools.base import Approval, CallView, SkillLoad, ToolContext, ToolOutput

__all__ = ["MAX_RESULT_CHARS", "SKILL", "SkillTool"]

SKILL = "skill"
MAX_RESULT_CHARS = 32 * 1024


class SkillTool:
    """`skill(name)` over the session's skills (name -> body)."""

    approval: Approval = "never"
    view = CallView(main="name")

    def __init__(self, skills: Mapping[str, str]) -> None:
        self._skills = dict(skills)
        self.spec = ToolSpec(
            name=SKILL,
            description=(
                "Load a skill: instructions for a kind of task, listed by name and description in the "
                "system prompt under Skills. Call it before doing a task a skill's description matches, "
                "then follow what it returns; it stays in force for the rest of the conversation."
            ),
            input_schema={
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The skill's name, as listed."}},
                "required": ["name"],
            },
        )

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        name = require_str(args, "name").strip()
        body = self._skills.get(name)
        if body is None:
            known = ", ".join(sorted(self._skills)) or "none"
            return ToolOutput(f"Error: no skill named {name[:100]!r}. The skills are: {known}.", True)
        shown = body
        if len(body) > MAX_RESULT_CHARS:
            more = len(body) - MAX_RESULT_CHARS
            shown = body[:MAX_RESULT_CHARS] + f"\n… [{more:,} more characters of this skill not shown]"
        return ToolOutput(shown, skill=SkillLoad(name, shown))

"""The remember tool: the model proposes a memory; the user approves it; it is saved for later sessions.

`remember {"text": str, "scope"?: "project" | "user"}` asks the user every time (agent/approvals.py:
no "always" rule or allow-list entry covers it; headless it is refused without --yes). Approved, it
is saved through `ToolContext.remember` (prompt/memories.py, given when the session is built): the
project's `.agent/pins.md` by default, the user's own memory file with scope "user". The result says
which. A memory is one bounded line (memories.bounded): untrusted model text widens nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools.args import optional_str, require_str
from agent_cli.tools.base import Approval, CallView, ToolContext, ToolOutput

__all__ = ["REMEMBER", "Remember"]

REMEMBER = "remember"
_NOT_WIRED = "Error: memories cannot be saved in this session (no project to save them in)."


class Remember:
    spec = ToolSpec(
        name=REMEMBER,
        description=(
            "Propose a memory for later sessions: one short fact or rule worth knowing next time "
            "(a build command, a convention, a decision). The user approves each one. By default it "
            'is saved to this project\'s pinned instructions (.agent/pins.md); scope "user" saves it '
            "to the user's own memory file, carried in every project. One line, at most 500 characters."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The memory, one line."},
                "scope": {
                    "type": "string",
                    "enum": ["project", "user"],
                    "description": 'Where to save it: "project" (default) or "user".',
                },
            },
            "required": ["text"],
        },
    )
    approval: Approval = "ask"
    view = CallView(main="text", quoted=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        text = require_str(args, "text")
        scope = optional_str(args, "scope") or "project"
        if ctx.remember is None:
            return ToolOutput(_NOT_WIRED, is_error=True)
        return ToolOutput(ctx.remember(text, scope))

"""The context tools: compact(focus?) and recall(query).

They are thin doors into the context engine, which the wiring hands over as
`ToolContext.request_compact` and `ToolContext.recall`. Without an engine (a
bare registry in a test or a script) they say so instead of failing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.providers.base import ToolSpec
from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.sandbox import optional_str, require_str

__all__ = ["Compact", "Recall"]

_NOT_WIRED = "Error: the context engine is not available in this session, so {name} cannot run."


class Compact:
    spec = ToolSpec(
        name="compact",
        description=(
            "Summarize the older part of this conversation now to free context space. The full text "
            "is saved to the session transcript first and can be fetched back with recall. Use it "
            "between subtasks; focus says what the summary must keep (files, decisions, next steps)."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "focus": {"type": "string", "description": "What the summary should concentrate on."},
            },
        },
    )

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        focus = optional_str(args, "focus")
        if ctx.request_compact is None:
            return ToolOutput(_NOT_WIRED.format(name="compact"), is_error=True)
        return ToolOutput(ctx.request_compact(focus))


class Recall:
    spec = ToolSpec(
        name="recall",
        description=(
            "Search the parts of this session that were summarized or cleared from the context "
            "(saved transcripts, old tool outputs) and return the matching passages verbatim. "
            "Use it when a summary or a cleared result mentions something you need exactly."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words, a file name, or a tool-result id."},
            },
            "required": ["query"],
        },
    )

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        query = require_str(args, "query")
        if ctx.recall is None:
            return ToolOutput(_NOT_WIRED.format(name="recall"), is_error=True)
        return ToolOutput(ctx.recall(query))

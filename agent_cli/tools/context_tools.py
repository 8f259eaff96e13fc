"""The context tools: compact(focus?) and recall(query, scope?).

compact returns the model's wish as part of its output (`ToolOutput.compact`);
the loop condenses the conversation once the round is done. recall searches
the engine's archive through `ToolContext.recall`, given when the session is
built; without it (a bare registry in a test or a script) it says so. With scope "project",
recall also searches this project's earlier sessions (`ToolContext.recall_project`: the
project's own `.transcripts/`, never another project's), each passage naming its session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools.args import optional_str, require_str
from agent_cli.tools.base import Approval, CallView, CompactRequest, ToolContext, ToolOutput

__all__ = ["SCHEDULED", "Compact", "Recall"]

SCHEDULED = "Compaction scheduled: the conversation will be condensed right after this tool round."
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
    approval: Approval = "never"
    view = CallView(main="focus", quoted=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        focus = optional_str(args, "focus")
        return ToolOutput(SCHEDULED, compact=CompactRequest(focus))


class Recall:
    spec = ToolSpec(
        name="recall",
        description=(
            "Search the parts of this session that were summarized or cleared from the context "
            "(saved transcripts, old tool outputs) and return the matching passages verbatim. "
            "Use it when a summary or a cleared result mentions something you need exactly. "
            'With scope "project" it also searches this project\'s earlier sessions.'
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words, a file name, or a tool-result id."},
                "scope": {
                    "type": "string",
                    "enum": ["session", "project"],
                    "description": 'Where: "session" (default) or "project" (earlier sessions too).',
                },
            },
            "required": ["query"],
        },
    )
    approval: Approval = "never"
    view = CallView(main="query", quoted=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        query = require_str(args, "query")
        scope = optional_str(args, "scope") or "session"
        if scope not in ("session", "project"):
            return ToolOutput(
                f'Error: scope is "session" (the default) or "project", not {scope!r}', is_error=True
            )
        if scope == "project":
            if ctx.recall_project is None:
                return ToolOutput(_NOT_WIRED.format(name="recall with scope project"), is_error=True)
            return ToolOutput(ctx.recall_project(query))
        if ctx.recall is None:
            return ToolOutput(_NOT_WIRED.format(name="recall"), is_error=True)
        answer = ctx.recall(query)
        images = ctx.recall_images(query) if ctx.recall_images is not None else []
        if not images:
            return ToolOutput(answer)
        names = ", ".join(f"{i.name} ({i.width}x{i.height} px)" for i in images)
        if not ctx.images:
            said = f"[saved image{_s(images)} {names}: the model in use does not take images]"
            return ToolOutput(f"{answer}\n\n{said}")
        head = f"[recalled image{_s(images)}: {names}, attached below]"
        return ToolOutput(f"{head}\n\n{answer}", images=tuple(images))


def _s(items: list[Any]) -> str:
    return "s" if len(items) > 1 else ""

"""tool_search(query): find deferred tools by words of their name and description, and load them.

When the extension tools' schemas would take more than a tenth of the working budget
(`DEFER_SHARE`), they are deferred (`ToolRegistry.defer`): the requests carry `tool_search` in their
place (its description says how many wait), and a search returns the full schema of the tools that
match and offers them from the next request on, as Claude Code and Codex do. `select:a,b` loads
tools by exact name. Words match a tool's name (worth more) or its description.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools.args import require_str
from agent_cli.tools.base import Approval, CallView, Tool, ToolContext, ToolOutput, ToolRegistry

__all__ = ["DEFER_SHARE", "MAX_MATCHES", "ToolSearch", "should_defer"]

DEFER_SHARE = 0.10
MAX_MATCHES = 8
_WORD = re.compile(r"[a-z0-9]+")


def should_defer(
    specs: Sequence[ToolSpec], count: Callable[[tuple[ToolSpec, ...]], int], working: int
) -> bool:
    """Whether these schemas take more than DEFER_SHARE of the working budget."""
    return bool(specs) and count(tuple(specs)) > working * DEFER_SHARE


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower().replace("_", " ")))


def _score(tool: Tool, words: set[str]) -> int:
    name = _words(tool.spec.name)
    described = _words(tool.spec.description)
    return sum(3 if w in name else 1 if w in described else 0 for w in words)


class ToolSearch:
    """Loads deferred tools of one registry on demand."""

    approval: Approval = "never"
    view = CallView(main="query", quoted=True)

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self.spec = ToolSpec(
            name="tool_search",
            description=(
                "Find tools that are available but not loaded yet (MCP server tools named "
                "mcp__<server>__<tool>), by words of their name or description, or `select:NAME,NAME` "
                "for exact names. Returns each match's full input schema; the matches can be called "
                f"from then on. {len(registry.deferred())} tools are waiting to be loaded."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to match, or select:NAME,NAME."},
                },
                "required": ["query"],
            },
        )

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        query = require_str(args, "query").strip()
        waiting = self._registry.deferred()
        if query.startswith("select:"):
            wanted = {n.strip() for n in query[len("select:") :].split(",")}
            found = [t for t in waiting if t.spec.name in wanted]
        else:
            words = _words(query)
            scored = sorted(
                ((_score(t, words), i, t) for i, t in enumerate(waiting)), key=lambda s: (-s[0], s[1])
            )
            found = [t for score, _, t in scored[:MAX_MATCHES] if score > 0]
        if not found:
            return ToolOutput(f"No tool waiting to be loaded matches {query!r} ({len(waiting)} are waiting).")
        self._registry.reveal(t.spec.name for t in found)
        schemas = [
            {
                "name": t.spec.name,
                "description": t.spec.description,
                "input_schema": dict(t.spec.input_schema),
            }
            for t in found
        ]
        return ToolOutput(
            f"Loaded {len(found)} tool(s); call them by name from now on:\n"
            + json.dumps(schemas, indent=1, ensure_ascii=False)
        )

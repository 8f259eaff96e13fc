"""The hook surface: observe or adjust the loop at fixed points.

Subclass `Hooks` and override what you need; every method is a no-op by
default. Approval has its own injected `Approver`; `on_before_tool` is an
extra veto for embedders (return a reason to deny).
"""

from __future__ import annotations

from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.core.requests import Request

__all__ = ["Hooks"]


class Hooks:
    def on_pre_request(self, request: Request) -> None:
        """Called with every request just before it is sent (summaries included: a record prepared
        ahead calls it from the thread that prepares it)."""

    def on_before_tool(self, use: ToolUse) -> str | None:
        """Return a reason to refuse this tool call; None lets it run."""
        return None

    def on_pre_tool(self, use: ToolUse) -> None:
        """Called right before an approved tool runs."""

    def on_post_tool(self, use: ToolUse, result: ToolResult) -> ToolResult:
        """May replace a tool's result before the model sees it."""
        return result

    def on_compact(self, event: CompactEvent) -> None:
        """Called once per compaction, whatever the layer."""

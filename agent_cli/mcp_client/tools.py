"""A server's tool as one of the agent's tools: `mcp__<server>__<tool>`, the server's schema, a call.

A call asks first like bash (approval "ask": `--yes`, an "always" answer or the tool's full name in
`approvals.allow` runs it without asking). The result is the text content joined, then the
structured content as JSON; the server's `is_error` makes it a tool error, and so does a server
that died, hung past its timeout or answered garbage (with a one-line warning, once per server).
"""

from __future__ import annotations

import concurrent.futures
import re
from collections.abc import Mapping
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.mcp_client.runtime import CallResult, Connection, ListedTool, McpFailure
from agent_cli.tools.base import Approval, CallView, ToolContext, ToolOutput

__all__ = ["MAX_DESCRIPTION", "McpTool", "tool_name"]

MAX_DESCRIPTION = 2000
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
_POLL = 0.1


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, in the characters and the 64 the model APIs take."""
    return f"mcp__{server}__{_NOT_NAME.sub('_', tool)}"[:64]


def _schema(listed: ListedTool) -> dict[str, Any]:
    schema = dict(listed.input_schema)
    if schema.get("type") != "object":  # both APIs take an object schema only
        schema = {"type": "object", "properties": {}}
    return schema


class McpTool:
    """One tool of one connected server."""

    approval: Approval = "ask"
    view = CallView()

    def __init__(self, server: str, listed: ListedTool, connection: Connection) -> None:
        self.server = server
        self.remote = listed.name
        description = listed.description.strip() or f"{listed.name} (from the MCP server {server})"
        if len(description) > MAX_DESCRIPTION:
            description = description[:MAX_DESCRIPTION] + "..."
        self.spec = ToolSpec(tool_name(server, listed.name), description, _schema(listed))
        self._connection = connection

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        lost = self._connection.lost
        if lost is not None:  # said once already, when it was lost
            return ToolOutput(f"Error: the MCP server {self.server!r} is not running: {lost}", True)
        future = self._connection.call(self.remote, args)
        try:
            result = self._wait(future, ctx)
        except McpFailure as exc:
            self._connection.note(f"MCP server {self.server}: {self.remote} failed: {exc}")
            return ToolOutput(f"Error: the MCP server {self.server!r} failed this call: {exc}", True)
        if result is None:
            return ToolOutput("Error: the user stopped this call before it finished", True)
        if result.is_error:
            return ToolOutput(f"Error: {result.text or 'the tool reported an error'}", True)
        return ToolOutput(result.text or "(no content)")

    def _wait(self, future: concurrent.futures.Future[CallResult], ctx: ToolContext) -> CallResult | None:
        """The call's result; None when the user cancelled it (the call is abandoned)."""
        # A little past the call's own timeout: the connection's wait says which end failed.
        deadline = self._connection.spec.timeout + 10.0
        waited = 0.0
        while True:
            try:
                return future.result(_POLL)
            except concurrent.futures.TimeoutError:
                waited += _POLL
                if ctx.cancel.is_set():
                    future.cancel()
                    return None
                if waited >= deadline:
                    future.cancel()
                    raise McpFailure(f"no answer within {self._connection.spec.timeout:g} s") from None
            except concurrent.futures.CancelledError:
                raise McpFailure("the call was cancelled") from None

"""A session's MCP servers: started as far as the user's approvals allow, their tools offered.

    start_mcp_servers(settings, env, ask)    the servers (None: none configured) and a line per problem
    offer_mcp_tools(settings, model, tools, servers)
                                             their tools in the registry, or deferred behind tool_search
    McpExtension(settings, servers)          the servers as the session's extension, connecting in the
                                             background: `join` waits for them and offers their tools

Nothing of `mcp` is imported when no server is configured (`mcp_client` imports it lazily).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_cli.agent.approvals import START_PROJECT_SERVER, Asker
from agent_cli.agent.side_events import Notice, SideEvents
from agent_cli.config.settings import Settings
from agent_cli.context.thresholds import compute_thresholds
from agent_cli.mcp_client.config import ServerSpec, server_specs
from agent_cli.session import ModelParts
from agent_cli.session_parts import Extensions
from agent_cli.store.project_approvals import ProjectApprovals, project_files_run, unpinned_note
from agent_cli.store.user_dirs import state_dir
from agent_cli.tools.base import ToolRegistry
from agent_cli.tools.confine import Confinement
from agent_cli.tools.tool_search import ToolSearch, should_defer

if TYPE_CHECKING:
    from agent_cli.mcp_client.servers import McpServers

__all__ = ["McpExtension", "offer_mcp_tools", "start_mcp_servers"]


def start_mcp_servers(
    settings: Settings,
    env: Mapping[str, str],
    ask: Asker | None,
    approvals: ProjectApprovals | None = None,
    *,
    wait: bool = True,
    sandbox: Confinement | None = None,
    side: SideEvents | None = None,
) -> tuple[McpServers | None, list[str]]:
    """The configured MCP servers, started as far as they may be (None: none is configured), and
    a line for each one skipped or failed (with `wait=False` they connect in the background and
    the failures are `McpServers.wait()`'s to say). Nothing of `mcp` is imported when none is
    configured. A failed call's line goes to `side` (the session's queue) as a `Notice`."""
    root = settings.project_root
    specs, notes = server_specs(settings.tables, root)
    if not specs:
        return None, notes
    # (the servers' machinery, asyncio's event loop among it, loads only when one is configured)
    from agent_cli.mcp_client.errlog import errlog_dir
    from agent_cli.mcp_client.servers import McpServers

    def ask_start(spec: ServerSpec) -> bool:
        assert ask is not None
        files = project_files_run([spec.command or "", *spec.args], root) if spec.url is None else []
        pinned = f" {unpinned_note(files, 'at each start')}" if files else ""
        question = (
            f"this project ({spec.where}) asks to start the MCP server {spec.name!r}: {spec.describe()}."
            f"{pinned} Start it (and remember that for this project)?"
        )
        return ask(START_PROJECT_SERVER, {"question": question, "server": spec.name}, None) in (
            "yes",
            "always",
        )

    servers, more = McpServers.start(
        specs,
        approvals=approvals or ProjectApprovals.for_user(env, root),
        ask=None if ask is None else ask_start,
        yes=settings.approvals.yes,
        state=state_dir(env),
        wait=wait,
        logs=errlog_dir(state_dir(env), root),
        sandbox=sandbox,
        say=(lambda line: None) if side is None else (lambda line: side.put(Notice(line))),
    )
    return servers, [*notes, *more]


def offer_mcp_tools(settings: Settings, model: ModelParts, tools: ToolRegistry, servers: McpServers) -> None:
    """The servers' tools, offered; or, when their schemas would take over a tenth of the working
    budget, deferred behind tool_search."""
    found = servers.tools
    working = compute_thresholds(settings.context, model.window, model.max_output).working
    if should_defer([t.spec for t in found], lambda specs: model.counter.count_frame("", specs), working):
        for tool in found:
            tools.defer(tool)
        tools.add(ToolSearch(tools))
    else:
        for tool in found:
            tools.add(tool)


class McpExtension(Extensions):
    """The session's MCP servers while they connect in the background, then their tools offered."""

    def __init__(self, settings: Settings, servers: McpServers) -> None:
        self._settings = settings
        self._servers = servers
        self._joined = False

    def connecting(self) -> list[str]:
        return [] if self._joined else self._servers.connecting()

    def join(self, model: ModelParts, tools: ToolRegistry) -> list[str]:
        if self._joined:
            return []
        lines = self._servers.wait()
        offer_mcp_tools(self._settings, model, tools, self._servers)
        self._joined = True
        return lines

    def report(self) -> list[str]:
        return self._servers.report()

    def close(self) -> None:
        self._servers.close()

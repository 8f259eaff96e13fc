"""The session's MCP servers: which may start, starting them, their tools, their state, stopping them.

    McpServers.start(specs, approvals=..., ask=..., yes=..., state=...) -> McpServers

A project's server (its `.mcp.json`, its `.agent/config.toml`) starts only when the user approved
that exact definition for the project (`store.project_approvals`, kind "mcp"): the REPL asks once
(y/n) and remembers the answer; headless runs need the approval already, or `--yes` (which approves
it for this run and remembers nothing); otherwise the server is skipped with one line saying how
to approve it. The user's own servers start without asking. All servers start at once; one that
fails to start is one line, and the session runs without it. A project's stdio server runs in the
session's sandbox when it is on (`sandbox=`: bwrap in front of its command, the policy's environment),
and so does one of the user's own whose table says `sandbox = true`.

With `wait=False` the servers connect in the background (a thread waits for them): the REPL's
prompt does not wait for a slow server. `connecting()` names the ones not settled yet, `wait()`
waits for them all and gives the lines for those that failed (each once); their tools are in
`tools` from then on.

Each server has a *state*: "starting", "connected", "failed: WHY" or "awaiting approval".
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from agent_cli.core.text import visible
from agent_cli.mcp_client.config import ServerSpec
from agent_cli.mcp_client.errlog import open_errlog
from agent_cli.mcp_client.runtime import Connection, EventLoop, ListedTool, McpFailure
from agent_cli.mcp_client.tools import McpTool, tool_name
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.tools.confine import Confinement

__all__ = ["APPROVAL_KIND", "AskStart", "McpServers", "ServerState"]

APPROVAL_KIND = "mcp"
# The REPL's question for a project server: (server, its definition as one line) -> yes.
AskStart = Callable[[ServerSpec], bool]


@dataclass(frozen=True, slots=True)
class ServerState:
    spec: ServerSpec
    state: str  # "connected", "failed: ...", "awaiting approval", "starting"
    tools: tuple[McpTool, ...] = ()


class McpServers:
    """The servers of one session (and the event loop their clients run on)."""

    def __init__(
        self, states: list[ServerState], loop: EventLoop | None, connections: list[Connection]
    ) -> None:
        self._states = states
        self._loop = loop
        self._connections = connections
        self._closed = False
        self._lock = threading.Lock()  # the states and the failures' lines: the connecting thread writes
        self._settled = threading.Event()
        self._settled.set()  # (nothing to connect until `_launch`)
        self._failures: list[str] = []

    @classmethod
    def start(
        cls,
        specs: list[ServerSpec],
        *,
        approvals: ProjectApprovals,
        ask: AskStart | None,
        yes: bool,
        state: Path,
        wait: bool = True,
        logs: Path | None = None,
        sandbox: Confinement | None = None,
        say: Callable[[str], None] = lambda line: None,
    ) -> tuple[McpServers, list[str]]:
        """Start what may start; the servers, and one line for each one skipped or failed (with
        `wait=False`, skipped: the failures are `wait()`'s to say). A stdio server's stderr goes
        to `logs` (the project's folder, errlog.errlog_dir; else `state`/mcp-logs). A project's
        stdio server runs in `sandbox` (the session's, when on). A failed call's line, once per
        distinct failure, goes to `say` (the session's side queue) as it happens."""
        notes: list[str] = []
        states: list[ServerState] = []
        allowed: list[ServerState] = []
        for spec in specs:
            entry = ServerState(spec, "starting")
            if (
                spec.project
                and not yes
                and not approvals.approved(APPROVAL_KIND, spec.name, spec.definition())
            ):
                if ask is None or not ask(spec):
                    states.append(replace(entry, state="awaiting approval"))
                    how = (
                        "approve it once in the REPL (agent), or run with --yes"
                        if ask is None
                        else "it will be asked again next time"
                    )
                    notes.append(
                        f"MCP server {spec.name} ({spec.where}: {spec.describe()}) is the project's and "
                        f"not approved; not started: {how}"
                    )
                    continue
                try:
                    approvals.approve(APPROVAL_KIND, spec.name, spec.definition())
                except OSError as exc:
                    notes.append(
                        f"MCP server {spec.name}: the approval is not remembered ({exc.strerror or exc})"
                    )
            states.append(entry)
            allowed.append(entry)
        if not allowed:
            return cls(states, None, []), notes
        loop = EventLoop()
        servers = cls(states, loop, [])
        servers._launch(allowed, logs or state / "mcp-logs", sandbox, say)
        if wait:
            notes.extend(servers.wait())
        return servers, notes

    def _launch(
        self, entries: list[ServerState], logs: Path, sandbox: Confinement | None, say: Callable[[str], None]
    ) -> None:
        """Start every server now; a thread waits for them and settles each one's state."""
        assert self._loop is not None
        started: list[tuple[ServerState, Connection, concurrent.futures.Future[list[ListedTool]]]] = []
        for entry in entries:
            errlog = open_errlog(logs, entry.spec.name)
            connection = Connection(_boxed(entry.spec, sandbox), self._loop, errlog, say)
            self._connections.append(connection)
            started.append((entry, connection, connection.start()))
        self._settled.clear()
        threading.Thread(target=self._connect, args=(started,), name="mcp-connect", daemon=True).start()

    def _connect(
        self, started: list[tuple[ServerState, Connection, concurrent.futures.Future[list[ListedTool]]]]
    ) -> None:
        try:
            deadline = time.monotonic() + max(e.spec.timeout for e, _, _ in started)
            taken: set[str] = set()
            for entry, connection, future in started:
                try:
                    listed = future.result(max(deadline - time.monotonic(), 0.1))
                except concurrent.futures.TimeoutError:
                    connection.abandon()
                    why = f"no answer within {entry.spec.timeout:g} s"
                except (McpFailure, concurrent.futures.CancelledError) as exc:
                    why = str(exc) or "stopped"
                else:
                    notes: list[str] = []
                    tools = self._tools(entry.spec.name, listed, connection, taken, notes)
                    self._settle(entry, ServerState(entry.spec, "connected", tools), notes)
                    continue
                line = f"MCP server {entry.spec.name} did not start ({why}); going on without it"
                self._settle(entry, ServerState(entry.spec, f"failed: {why}"), [line])
        finally:
            self._settled.set()

    def _settle(self, entry: ServerState, settled: ServerState, notes: list[str]) -> None:
        with self._lock:
            self._states[self._states.index(entry)] = settled
            self._failures.extend(notes)

    def connecting(self) -> list[str]:
        """The servers still starting (not connected, not failed yet)."""
        with self._lock:
            return [e.spec.name for e in self._states if e.state == "starting"]

    def wait(self, timeout: float | None = None) -> list[str]:
        """Wait (at most `timeout` seconds) until every server connected or failed; the lines about
        those that failed or lost a tool's name since last asked. Waits in short steps, so Ctrl-C
        reaches the caller."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._settled.wait(0.1):
            if deadline is not None and time.monotonic() >= deadline:
                break
        with self._lock:
            lines, self._failures = self._failures, []
        return lines

    def _tools(
        self, server: str, listed: list[ListedTool], connection: Connection, taken: set[str], notes: list[str]
    ) -> tuple[McpTool, ...]:
        tools: list[McpTool] = []
        for item in listed:
            name = tool_name(server, item.name)
            if name in taken:
                notes.append(f"MCP server {server}: tool {item.name!r} is skipped: {name} is taken")
                continue
            taken.add(name)
            tools.append(McpTool(server, item, connection))
        return tuple(tools)

    @property
    def tools(self) -> list[McpTool]:
        """The tools of the servers connected so far."""
        with self._lock:
            return [tool for entry in self._states for tool in entry.tools]

    @property
    def states(self) -> tuple[ServerState, ...]:
        with self._lock:
            return tuple(self._states)

    def report(self) -> list[str]:
        """`/mcp` and `agent mcp list`: each server, its state, its tools (every text made visible)."""
        if not self._states:
            return [
                "no MCP servers configured ([mcp.servers.NAME] in the config, or the project's .mcp.json)"
            ]
        lines: list[str] = []
        for entry in self.states:
            spec = entry.spec
            state = entry.state
            connection = next((c for c in self._connections if c.spec is spec), None)
            if state == "connected" and connection is not None and connection.lost is not None:
                state = f"failed: {connection.lost}"
            origin = "project" if spec.project else "user"
            lines.append(visible(f"{spec.name}  {state}  ({origin}: {spec.describe()})"))
            for tool in entry.tools:
                first = tool.spec.description.splitlines()[0] if tool.spec.description else ""
                lines.append(visible(f"  {tool.spec.name}  {first[:100]}"))
        return lines

    def close(self) -> None:
        """Stop every server (their processes go with them) and the event loop."""
        if self._closed:
            return
        self._closed = True
        threads = [threading.Thread(target=c.close, daemon=True) for c in self._connections]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self._loop is not None:
            self._loop.stop()


def _boxed(spec: ServerSpec, sandbox: Confinement | None) -> ServerSpec:
    """What to start for `spec`: a project's stdio server, or the user's with `sandbox = true`, under
    `sandbox` (bwrap as the command, the policy's environment over the SDK's default one), anything
    else as configured. The approval and what is shown keep the spec as written."""
    if sandbox is None or not spec.confined or spec.command is None:
        return spec
    from mcp.client.stdio import get_default_environment

    env = {**get_default_environment(), **spec.env}
    launch = sandbox.launch([spec.command, *spec.args], Path.cwd(), env)
    return replace(spec, command=launch.argv[0], args=tuple(launch.argv[1:]), env=launch.env)

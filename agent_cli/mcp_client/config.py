"""Which MCP servers a session may start: the `[mcp.servers.NAME]` tables and a project's `.mcp.json`.

A *server spec* is one server's whole definition: a subprocess (`command`, `args`, `env`) spoken to
over stdio, or a URL (`url`, `headers`) spoken to over streamable HTTP, and the seconds one call may
take (`timeout`). A spec is *project* when a file the repository ships named it (`.mcp.json`, or the
project's `.agent/config.toml`): it starts only once the user approved that exact definition.
A project's stdio server runs in the session's sandbox; the user's own runs as the user unless its
table says `sandbox = true` (`ServerSpec.confined`; a project's `sandbox = false` changes nothing).

The config tables are the user's to fix: a bad one is a one-line ConfigError naming `file:line`.
A bad `.mcp.json` is the repository's: each entry that does not make a server is skipped with a
line saying why, and the session goes on. Pure functions over parsed values; `read_mcp_json` is the
one read.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.config.raw_tables import RawTable, tables_named
from agent_cli.core.errors import ConfigError
from agent_cli.store.file_reads import UnreadableFile, read_project_file

__all__ = [
    "DEFAULT_TIMEOUT",
    "MCP_JSON",
    "ServerSpec",
    "mcp_json_specs",
    "read_mcp_json",
    "server_specs",
    "table_specs",
]

DEFAULT_TIMEOUT = 60.0
MCP_JSON = ".mcp.json"
_MCP_JSON_LIMIT = 1024 * 1024
_KEYS = ("command", "args", "env", "url", "headers", "timeout", "sandbox")
_JSON_KEYS = (*_KEYS, "type")
# Both model APIs take tool names of [a-zA-Z0-9_-] only; a server's name is part of each of its tools'.
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One MCP server as configured. `where` says where it was defined (`file:line`)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    project: bool = False
    where: str = ""
    sandbox: bool = False  # `sandbox = true`: the user's own stdio server confined as a project's is

    @property
    def confined(self) -> bool:
        """Whether it starts in the session's sandbox: a project's always, the user's when it asks."""
        return self.project or self.sandbox

    @property
    def transport(self) -> str:
        return "http" if self.url is not None else "stdio"

    def definition(self) -> dict[str, object]:
        """What an approval fingerprints: everything that decides what runs or who is called."""
        return {
            "command": self.command,
            "args": list(self.args),
            "env": dict(self.env),
            "url": self.url,
            "headers": dict(self.headers),
            "timeout": self.timeout,
        }

    def describe(self) -> str:
        """One line: what starting it runs, or where it connects."""
        if self.url is not None:
            return f"{self.url} (HTTP)"
        return " ".join([self.command or "", *self.args])


def _spec(
    name: str, body: Mapping[str, object], keys: tuple[str, ...], *, project: bool, where: str
) -> ServerSpec:
    """A spec from one entry; ValueError saying what is wrong with it."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"server name {name!r} must be 1-40 letters, digits, '_' or '-'")
    for key in body:
        if key not in keys:
            close = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else f" (known: {', '.join(keys)})"
            raise ValueError(f"unknown key {key!r}{hint}")
    kind = body.get("type")
    if kind is not None and kind not in ("stdio", "http", "streamable-http"):
        raise ValueError(f"type must be stdio or http (got {kind!r})")
    command, url = body.get("command"), body.get("url")
    if command is not None and url is not None:
        raise ValueError("give either command (a subprocess) or url (an HTTP server), not both")
    if command is None and url is None:
        raise ValueError("needs command (a subprocess) or url (an HTTP server)")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ValueError("command must be a non-empty string")
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ValueError("url must be an http:// or https:// URL")
    args = body.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("args must be a list of strings")
    env, headers = _strings(body, "env"), _strings(body, "headers")
    if command is not None and headers:
        raise ValueError("headers go with url; a command takes env")
    if url is not None and (env or args):
        raise ValueError("env and args go with command; a url takes headers")
    timeout = body.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 86400:
        raise ValueError("timeout must be a number of seconds above 0")
    sandbox = body.get("sandbox", False)
    if not isinstance(sandbox, bool):
        raise ValueError("sandbox must be true or false (true: start it in the sandbox)")
    if sandbox and url is not None:
        raise ValueError("sandbox goes with command (a subprocess); a url server runs elsewhere")
    return ServerSpec(
        name,
        command=command if isinstance(command, str) else None,
        args=tuple(args),
        env=env,
        url=url if isinstance(url, str) else None,
        headers=headers,
        timeout=float(timeout),
        project=project,
        where=where,
        sandbox=sandbox,
    )


def _strings(body: Mapping[str, object], key: str) -> dict[str, str]:
    value = body.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{key} must be a table of strings")
    return {str(k): v for k, v in value.items()}


def table_specs(tables: tuple[RawTable, ...]) -> dict[str, ServerSpec]:
    """The servers of the `[mcp]` tables, later files winning by name; ConfigError for a bad one."""
    specs: dict[str, ServerSpec] = {}
    for table in tables_named(tables, "mcp"):
        for key in table.body:
            if key != "servers":
                raise ConfigError(
                    f"{table.where(key)}: unknown key mcp.{key} (servers go in [mcp.servers.NAME])"
                )
        servers = table.body.get("servers", {})
        if not isinstance(servers, Mapping):
            raise ConfigError(f"{table.where('servers')}: mcp.servers must be a table of [mcp.servers.NAME]")
        for name, body in servers.items():
            where = table.where(f"servers.{name}")
            if not isinstance(body, Mapping):
                raise ConfigError(f"{where}: mcp.servers.{name} must be a table")
            try:
                specs[name] = _spec(name, body, _KEYS, project=table.project, where=where)
            except ValueError as exc:
                raise ConfigError(f"{where}: mcp.servers.{name}: {exc}") from None
    return specs


def mcp_json_specs(document: object, where: str) -> tuple[dict[str, ServerSpec], list[str]]:
    """The servers a `.mcp.json` names (Claude Code's format), and a line for each entry skipped."""
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        return {}, [f'{where}: no "mcpServers" object; its servers are not started']
    specs: dict[str, ServerSpec] = {}
    skipped: list[str] = []
    for name, body in servers.items():
        try:
            if not isinstance(body, dict):
                raise ValueError("must be an object")
            specs[name] = _spec(name, body, _JSON_KEYS, project=True, where=where)
        except ValueError as exc:
            skipped.append(f"{where}: MCP server {name!r} is not started: {exc}")
    return specs, skipped


def read_mcp_json(root: Path) -> tuple[dict[str, ServerSpec], list[str]]:
    """The project's `.mcp.json` servers (none if there is no such file), and lines about what not."""
    path = root / MCP_JSON
    if not path.exists() and not path.is_symlink():
        return {}, []
    try:
        read = read_project_file(root, path, limit=_MCP_JSON_LIMIT)
    except UnreadableFile as exc:
        return {}, [f"{MCP_JSON} {exc}; its MCP servers are not started"]
    if read.more:
        return {}, [f"{MCP_JSON} is over 1 MiB; its MCP servers are not started"]
    try:
        document = json.loads(read.data)
    except ValueError as exc:
        return {}, [f"{MCP_JSON} is not valid JSON ({exc}); its MCP servers are not started"]
    return mcp_json_specs(document, MCP_JSON)


def server_specs(tables: tuple[RawTable, ...], root: Path) -> tuple[list[ServerSpec], list[str]]:
    """Every configured server: the project's `.mcp.json` first, the config tables over it by name."""
    specs, notes = read_mcp_json(root)
    specs.update(table_specs(tables))
    return list(specs.values()), notes

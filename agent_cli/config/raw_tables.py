"""Config tables whose shape is not a flat key = value: `[mcp.servers.NAME]`, `[[hooks.EVENT]]`.

`load.py` validates the flat sections against the schema; a table named in `RAW_TABLES` is kept
as it was parsed, with the file it came from, whether that file came with the project, and its
key lines, so the feature that owns it (the MCP client, the hooks) validates it and can blame
`file:line` in a one-line ConfigError of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.config.key_lines import key_place

__all__ = ["RAW_TABLES", "RawTable", "tables_named"]

RAW_TABLES: tuple[str, ...] = ("mcp", "hooks")


@dataclass(frozen=True, slots=True)
class RawTable:
    """One raw table from one config file, as tomllib parsed it."""

    section: str  # "mcp", "hooks"
    body: Mapping[str, object]
    path: Path
    project: bool = False  # came with the repository: what it runs needs the user's approval
    lines: Mapping[str, int] = field(default_factory=dict)

    def where(self, key: str) -> str:
        """`path:line` of a dotted key under this table ("servers.notes.command")."""
        return key_place(self.path, self.lines, f"{self.section}.{key}" if key else self.section)


def tables_named(tables: tuple[RawTable, ...], section: str) -> tuple[RawTable, ...]:
    """The raw tables for one section, in precedence order (later files win)."""
    return tuple(t for t in tables if t.section == section)

"""The `[[hooks.EVENT]]` tables of the config files, as typed hook definitions.

    [[hooks.PreToolUse]]
    matcher = "bash|write_file"      # a regex the whole tool name must match; omitted: every tool
    command = "./hooks/check.sh"
    timeout = 30                     # seconds; 60 when omitted
    sandbox = true                   # run this (user's) hook in the sandbox; a project's always is

A *hook* is one such entry: an event, a command for `bash -c`, an optional matcher and a timeout.
The matcher is matched against what the event is about: the tool's name (PreToolUse,
PostToolUse), the trigger (PreCompact, PostCompact: "auto" or "manual"), the source (SessionStart:
"startup" or "resume"); other events ignore it. `load_hooks` validates every table and raises one
ConfigError naming `file:line` for the first thing wrong; hooks keep the order of the files (the
user's, then the project's, then `--config`) and of the entries in each.

Where a hook runs: a project's hook (once approved) in the session's sandbox; the user's own (the
user's config, `--config`) as the user, unless it says `sandbox = true` (`HookSpec.confined`). A
project's `sandbox = false` changes nothing: it cannot take its hook out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast, get_args

from agent_cli.config.raw_tables import RawTable, tables_named
from agent_cli.config.schema import closest
from agent_cli.core.errors import ConfigError
from agent_cli.store.file_reads import UnreadableFile, read_user_file

__all__ = ["DEFAULT_TIMEOUT", "EVENTS", "Dialect", "HookEventName", "HookSpec", "load_hooks"]

HookEventName: TypeAlias = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SessionEnd",
]
EVENTS: tuple[str, ...] = get_args(HookEventName)
# Whose conventions a hook follows: ours (`[[hooks.EVENT]]`: `event` and our tool names on stdin,
# a regex on the whole name) or Claude Code's (its settings files: its tool names and input).
Dialect: TypeAlias = Literal["agent", "claude"]
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
_CONFIG_BYTES = 256 * 1024  # as much as the config's loader reads of a file
_KEYS = ("matcher", "command", "timeout", "sandbox")
_EVERY = ("", "*")  # Claude Code's word for "every tool", as an empty matcher
_NAMES = re.compile(r"[A-Za-z0-9_|]+")  # a Claude Code matcher of names: exact, not a regex
_UNMATCHED = frozenset({"UserPromptSubmit", "Stop", "SessionEnd"})  # events with nothing to match


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook as configured."""

    event: HookEventName
    command: str
    matcher: str = ""  # "" (or "*"): everything
    timeout: float = DEFAULT_TIMEOUT
    project: bool = False  # from the project's own `.agent/config.toml`: runs only once approved
    where: str = ""  # `file:line` of its table, for messages
    dialect: Dialect = "agent"
    sandbox: bool = False  # `sandbox = true`: the user's own hook confined as a project's is

    @property
    def confined(self) -> bool:
        """Whether it runs in the session's sandbox: a project's always, the user's when it asks."""
        return self.project or self.sandbox

    def matches(self, subject: str) -> bool:
        """Whether this hook runs for `subject` (a tool name in the hook's own dialect, a trigger,
        a source). Claude Code's matchers: names joined by `|` match exactly, anything else is a
        regex searched for in the name."""
        if self.matcher in _EVERY:
            return True
        if self.dialect == "claude":
            if self.event in _UNMATCHED:  # Claude Code ignores a matcher on these events
                return True
            if _NAMES.fullmatch(self.matcher):
                return subject in self.matcher.split("|")
            return re.search(self.matcher, subject) is not None
        return re.fullmatch(self.matcher, subject) is not None

    def definition(self) -> dict[str, object]:
        """Everything that decides what runs: what an approval's fingerprint covers (a Claude
        Code hook's file too, so moving it between files asks again)."""
        shape: dict[str, object] = {
            "event": self.event,
            "matcher": self.matcher,
            "command": self.command,
            "timeout": self.timeout,
        }
        if self.dialect == "claude":
            shape.update(dialect=self.dialect, file=self.where.split(":", 1)[0])
        return shape


def load_hooks(tables: tuple[RawTable, ...]) -> tuple[HookSpec, ...]:
    """Every hook of the `[hooks]` tables, in order. Raises ConfigError for the first bad one."""
    found: list[HookSpec] = []
    for table in tables_named(tables, "hooks"):
        for event, entries in table.body.items():
            if event not in EVENTS:
                hint = closest(event, EVENTS)
                guess = f"; did you mean {hint}?" if hint else f" (events: {', '.join(EVENTS)})"
                raise ConfigError(f"{table.where(event)}: unknown hook event hooks.{event}{guess}")
            listed = [entries] if isinstance(entries, Mapping) else entries
            if not isinstance(listed, list):
                raise ConfigError(f"{table.where(event)}: hooks.{event} must be a [[hooks.{event}]] table")
            for n, entry in enumerate(listed, start=1):
                found.append(_spec(table, event, n, entry))
    return tuple(found)


def _spec(table: RawTable, event: str, n: int, entry: object) -> HookSpec:
    where = _entry_place(table, event, n)
    name = f"hooks.{event}"
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: each {name} entry must be a table with a command")
    for key in entry:
        if key not in _KEYS:
            hint = closest(str(key), _KEYS)
            guess = f"; did you mean {hint}?" if hint else f" (keys: {', '.join(_KEYS)})"
            raise ConfigError(f"{where}: unknown key {name}.{key}{guess}")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f'{where}: {name} needs a command (command = "./hooks/check.sh")')
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        raise ConfigError(f"{where}: {name}.matcher must be a string (a regex on the tool name)")
    if matcher not in _EVERY:
        try:
            re.compile(matcher)
        except re.error as exc:
            raise ConfigError(f"{where}: {name}.matcher {matcher!r} is not a valid regex: {exc}") from None
    timeout = _timeout(entry.get("timeout", DEFAULT_TIMEOUT))
    if timeout is None:
        raise ConfigError(
            f"{where}: {name}.timeout must be a number of seconds above 0, at most {MAX_TIMEOUT:g}"
        )
    sandbox = entry.get("sandbox", False)
    if not isinstance(sandbox, bool):
        raise ConfigError(f"{where}: {name}.sandbox must be true or false (true: run it in the sandbox)")
    return HookSpec(
        cast(HookEventName, event), command, matcher, timeout, table.project, where, sandbox=sandbox
    )


def _timeout(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    return seconds if 0 < seconds <= MAX_TIMEOUT else None


def _entry_place(table: RawTable, event: str, n: int) -> str:
    """`file:line` of the n-th `[[hooks.EVENT]]` of a file (the first one's, if the file cannot be
    read again)."""
    first = table.where(event)
    if n == 1:
        return first
    try:
        data = read_user_file(Path(table.path), limit=_CONFIG_BYTES, timeout=0.5).data
    except UnreadableFile:  # a pipe read once already, gone meanwhile: the first one's place
        return first
    lines = data.decode("utf-8", errors="replace").splitlines()
    header = re.compile(rf"^\s*\[\[\s*hooks\s*\.\s*[\"']?{re.escape(event)}[\"']?\s*\]\]")
    seen = 0
    for number, line in enumerate(lines, start=1):
        if header.match(line):
            seen += 1
            if seen == n:
                return f"{table.path}:{number}"
    return first

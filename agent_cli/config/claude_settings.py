"""Claude Code's settings files, read: what a Claude Code user brings along, as typed values.

    ~/.claude/settings.json         the user's ($CLAUDE_CONFIG_DIR/settings.json when that is set):
                                    trusted like the user's own config
    .claude/settings.json           the project's, shipped with the repository
    .claude/settings.local.json     the project's too (Claude Code keeps it out of git, but a
                                    repository can ship one): untrusted like every project file

From each file two keys are read: `hooks` (Claude Code's shape, `{"PreToolUse": [{"matcher":
"Bash", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}`) as `ClaudeHook`s,
and `permissions.allow` / `deny` / `ask` as `PermissionRule`s (`Bash(git diff:*)`,
`Read(./secrets/**)`, `mcp__notes`). What they mean is decided elsewhere (hooks_user, agent's
claude_rules); this module only reads. Every other key is listed in `SettingsFile.unsupported`,
so the session names it once at start instead of ignoring it silently; `document` keeps the whole
object for readers of the keys another feature owns (they pass those keys as `read_too`).

A project file is read only if it is a regular file inside the project; the user's may be any
file the user points at. A file that is not JSON, or an entry that is malformed, is a `problem`:
the caller makes the user's a ConfigError (their guard must not vanish unsaid) and the project's
a notice (a repository must not be able to stop the agent from starting).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias, cast

from agent_cli.store.file_reads import UnreadableFile, read_project_file, read_user_file
from agent_cli.store.user_dirs import home_dir

__all__ = [
    "DEFAULT_TIMEOUT",
    "PROJECT_FILES",
    "ClaudeHook",
    "ClaudeSettings",
    "PermissionRule",
    "RuleKind",
    "SettingsFile",
    "parse_settings",
    "read_claude_settings",
    "user_settings_path",
]

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
MAX_BYTES = 256 * 1024
PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json")
RuleKind: TypeAlias = Literal["allow", "deny", "ask"]
RULE_KINDS: tuple[RuleKind, ...] = ("deny", "ask", "allow")  # the order Claude Code weighs them in
_RULE = re.compile(r"([A-Za-z0-9_*\-]+)(?:\((.*)\))?", re.DOTALL)
_EVERY = ("", "*")
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


@dataclass(frozen=True, slots=True)
class ClaudeHook:
    """One command hook as a Claude Code settings file writes it."""

    event: str  # Claude Code's event name (PreToolUse ...)
    command: str
    matcher: str = ""  # Claude Code's: a name, names joined by |, or a regex; "" or "*": all
    timeout: float = DEFAULT_TIMEOUT
    project: bool = False
    where: str = ""  # `file: hooks.PreToolUse[0].hooks[0]`


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One `allow`, `deny` or `ask` rule: `Tool` or `Tool(specifier)`."""

    kind: RuleKind
    tool: str  # as written: Bash, Read, Edit, mcp__notes__search
    specifier: str | None  # inside the parentheses; None for the bare tool
    text: str  # the rule as written
    source: str  # the file it came from, as shown
    project: bool = False


@dataclass(frozen=True, slots=True)
class SettingsFile:
    path: Path
    project: bool
    document: Mapping[str, object]
    hooks: tuple[ClaudeHook, ...] = ()
    rules: tuple[PermissionRule, ...] = ()
    unsupported: tuple[str, ...] = ()  # keys (dotted) agent-cli does not act on
    problems: tuple[str, ...] = ()  # what could not be read, one line each
    name: str = ""  # how the file is named to the user

    @property
    def shown(self) -> str:
        return self.name or str(self.path)


@dataclass(frozen=True, slots=True)
class ClaudeSettings:
    """The files found, the user's first."""

    files: tuple[SettingsFile, ...] = ()

    @property
    def hooks(self) -> tuple[ClaudeHook, ...]:
        return tuple(h for f in self.files for h in f.hooks)

    @property
    def rules(self) -> tuple[PermissionRule, ...]:
        return tuple(r for f in self.files for r in f.rules)

    def unsupported_line(self) -> str | None:
        """The one start-up line naming every key agent-cli does not read, with its file."""
        parts = [f"{', '.join(f.unsupported)} ({f.shown})" for f in self.files if f.unsupported]
        if not parts:
            return None
        return "Claude Code settings agent-cli does not support, not applied: " + "; ".join(parts)


def user_settings_path(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps the user's settings: `$CLAUDE_CONFIG_DIR` or `~/.claude`."""
    configured = env.get("CLAUDE_CONFIG_DIR", "")
    base = Path(configured) if configured and Path(configured).is_absolute() else home_dir(env) / ".claude"
    return base / "settings.json"


def read_claude_settings(
    root: Path,
    env: Mapping[str, str],
    *,
    hook_events: Collection[str],
    read_too: Collection[str] = (),
    user: bool = True,
) -> ClaudeSettings:
    """The user's file (unless `user` is False: `--config` names the only config) and the
    project's two, those that exist. `hook_events`: the events agent-cli runs hooks on (others are
    unsupported); `read_too`: top-level keys another feature reads from `document`."""
    found: list[SettingsFile] = []
    if user:
        path = user_settings_path(env)
        if path.exists():
            try:
                text = read_user_file(path, limit=MAX_BYTES, timeout=0.5).data
            except UnreadableFile as exc:
                found.append(SettingsFile(path, False, {}, problems=(f"{path}: {exc}",)))
            else:
                found.append(parse_settings(text, path, hook_events=hook_events, read_too=read_too))
    for name in PROJECT_FILES:
        path = root / name
        if not (path.exists() or path.is_symlink()):
            continue
        try:
            data = read_project_file(root, path, limit=MAX_BYTES).data
        except UnreadableFile as exc:
            found.append(SettingsFile(path, True, {}, problems=(f"{name}: not read: {exc}",), name=name))
            continue
        found.append(
            parse_settings(data, path, project=True, shown=name, hook_events=hook_events, read_too=read_too)
        )
    return ClaudeSettings(tuple(found))


def parse_settings(
    data: bytes,
    path: Path,
    *,
    hook_events: Collection[str],
    project: bool = False,
    shown: str = "",
    read_too: Collection[str] = (),
) -> SettingsFile:
    """One file's bytes as a `SettingsFile` (pure). `shown`: how the file is named to the user."""
    name = shown or str(path)
    try:
        document = json.loads(data.decode("utf-8", "replace") or "{}")
    except ValueError as exc:
        return SettingsFile(
            path, project, {}, problems=(f"{name}: not valid JSON ({exc})",), name=name
        )
    if not isinstance(document, dict):
        return SettingsFile(path, project, {}, problems=(f"{name}: not a JSON object",), name=name)
    reader = _Reader(name, project, hook_events)
    for key, value in document.items():
        if key == "hooks":
            reader.hooks(value)
        elif key == "permissions":
            reader.permissions(value)
        elif key != "$schema" and key not in read_too:
            reader.unsupported.append(key)
    return SettingsFile(
        path,
        project,
        document,
        tuple(reader.found_hooks),
        tuple(reader.rules),
        tuple(reader.unsupported),
        tuple(reader.problems),
        name,
    )


class _Reader:
    """What one file holds, gathered key by key; a malformed entry is a problem, the rest is read."""

    def __init__(self, name: str, project: bool, events: Collection[str]) -> None:
        self.name = name
        self.project = project
        self.events = events
        self.found_hooks: list[ClaudeHook] = []
        self.rules: list[PermissionRule] = []
        self.unsupported: list[str] = []
        self.problems: list[str] = []

    def problem(self, where: str, what: str) -> None:
        self.problems.append(f"{self.name}: {where}: {what}")

    def hooks(self, value: object) -> None:
        if not isinstance(value, dict):
            self.problem("hooks", 'must be an object of events, {"PreToolUse": [...]}')
            return
        for event, groups in value.items():
            if event not in self.events:
                self.unsupported.append(f"hooks.{event}")
                continue
            if not isinstance(groups, list):
                self.problem(f"hooks.{event}", "must be a list of {matcher, hooks} objects")
                continue
            for g, group in enumerate(groups):
                self._group(event, g, group)

    def _group(self, event: str, g: int, group: object) -> None:
        where = f"hooks.{event}[{g}]"
        if not isinstance(group, dict):
            self.problem(where, "must be an object with hooks (and a matcher)")
            return
        for key in group:
            if key not in ("matcher", "hooks"):
                self.unsupported.append(f"{where}.{key}")
        matcher = group.get("matcher", "")
        if not isinstance(matcher, str):
            self.problem(f"{where}.matcher", "must be a string")
            return
        if matcher not in _EVERY and not _SIMPLE_MATCHER.fullmatch(matcher):
            try:
                re.compile(matcher)
            except re.error as exc:
                self.problem(f"{where}.matcher", f"{matcher!r} is not a valid regex: {exc}")
                return
        commands = group.get("hooks")
        if not isinstance(commands, list):
            self.problem(f"{where}.hooks", "must be a list of commands")
            return
        for h, entry in enumerate(commands):
            self._command(event, matcher, f"{where}.hooks[{h}]", entry)

    def _command(self, event: str, matcher: str, where: str, entry: object) -> None:
        if not isinstance(entry, dict):
            self.problem(where, 'must be an object: {"type": "command", "command": "..."}')
            return
        kind = entry.get("type", "command")
        if kind != "command":
            self.unsupported.append(f"{where}.type={kind}")
            return
        for key in entry:
            if key not in ("type", "command", "timeout"):
                self.unsupported.append(f"{where}.{key}")
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            self.problem(where, "needs a command")
            return
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 < timeout <= MAX_TIMEOUT
        ):
            self.problem(f"{where}.timeout", f"must be a number of seconds above 0, at most {MAX_TIMEOUT:g}")
            return
        hook = ClaudeHook(event, command, matcher, float(timeout), self.project, f"{self.name}: {where}")
        self.found_hooks.append(hook)

    def permissions(self, value: object) -> None:
        if not isinstance(value, dict):
            self.problem("permissions", "must be an object with allow, deny, ask")
            return
        for key, rules in value.items():
            if key not in RULE_KINDS:
                self.unsupported.append(f"permissions.{key}")
                continue
            if not isinstance(rules, list):
                self.problem(f"permissions.{key}", "must be a list of rules")
                continue
            for n, text in enumerate(rules):
                match = _RULE.fullmatch(text.strip()) if isinstance(text, str) else None
                if match is None:
                    self.problem(f"permissions.{key}[{n}]", f"{text!r} is not a rule like Bash(git diff:*)")
                    continue
                tool, spec = match.group(1), match.group(2)
                kind = cast(RuleKind, key)
                self.rules.append(PermissionRule(kind, tool, spec, text.strip(), self.name, self.project))

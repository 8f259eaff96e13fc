"""Where Markdown commands live, which file a name means, and reading them safely.

A *command folder* holds `NAME.md` files; `/NAME` is the file, and a file in a subfolder is named
by its path, segments joined with `:` (`frontend/test.md` is `/frontend:test`, shown as
"project:frontend"). Its *bare* name (`/test`) also works while no other command has that name or
base name. The folders, in *precedence* order (the first to define a name has it):

    .agent/commands                      project (agent-cli's own)
    .claude/commands                     project (Claude Code's, so its users' commands work as they are)
    $XDG_CONFIG_HOME/agent-cli/commands  user
    ~/.claude/commands                   user (Claude Code's)

A project's command wins over a user's of the same name, as in Claude Code; a built-in command's
name (or alias) wins over every file. Each file passed over that way is named in a *notice*, so
the user knows which file a name does not mean.

A project's files came with the repository: a project folder is read only if its real path is
inside the project, and a file only if it is a regular file inside it (`store.file_reads`).
Folder links inside a project folder are not followed. The user's own folders are trusted (links
followed, to a bounded depth). Either way a file is at most `MAX_COMMAND_BYTES` and UTF-8 text;
one that is not is *refused* with the reason, and the next folder's file of that name (if any) is
used instead: a repository's broken file never hides the user's own command.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from agent_cli.core.text import clean, escape_char
from agent_cli.prompt.command_text import CommandText, parse_command_text
from agent_cli.store.file_reads import UnreadableFile, describe_size, read_project_file, read_user_file
from agent_cli.store.user_dirs import config_dir, home_dir

__all__ = [
    "MAX_COMMAND_BYTES",
    "Catalog",
    "CommandDir",
    "CommandFiles",
    "CustomCommand",
    "Notice",
    "Refused",
    "Scope",
    "command_dirs",
]

Scope: TypeAlias = Literal["project", "user"]
MAX_COMMAND_BYTES = 64 * 1024
MAX_DEPTH = 4  # path segments under a folder, the file's own included: a/b/c/d.md
MAX_FILES = 1000  # per folder
_SEGMENT = re.compile(r"[^\W_][\w.-]*")


@dataclass(frozen=True, slots=True)
class CommandDir:
    path: Path
    scope: Scope
    shown: str  # how the folder is named to the user


def _plain(text: str) -> str:
    """A path as one line of text: every character that does not show as itself written out (a file
    name may hold a newline or a bidi override; a notice naming it must not draw a second line)."""
    return "".join(c if c.isprintable() else escape_char(c) for c in clean(text))


def _shown(path: Path, home: Path) -> str:
    try:
        return _plain(f"~/{path.relative_to(home)}")
    except ValueError:
        return _plain(str(path))


def command_dirs(project_root: Path, env: Mapping[str, str]) -> tuple[CommandDir, ...]:
    """The command folders for this project and user, in precedence order."""
    home = home_dir(env)
    user = config_dir(env) / "commands"
    return (
        CommandDir(project_root / ".agent" / "commands", "project", ".agent/commands"),
        CommandDir(project_root / ".claude" / "commands", "project", ".claude/commands"),
        CommandDir(user, "user", _shown(user, home)),
        CommandDir(home / ".claude" / "commands", "user", "~/.claude/commands"),
    )


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str  # "frontend:test"
    scope: Scope
    shown_path: str  # ".claude/commands/frontend/test.md"
    text: CommandText

    @property
    def base(self) -> str:
        return self.name.rpartition(":")[2]

    @property
    def label(self) -> str:
        """Where it comes from: "project", "user", "project:frontend"."""
        namespace = self.name.rpartition(":")[0]
        return f"{self.scope}:{namespace}" if namespace else self.scope


@dataclass(frozen=True, slots=True)
class Refused:
    name: str
    shown_path: str
    reason: str  # a phrase after the file's name: "leads outside the project ..."


@dataclass(frozen=True, slots=True)
class Notice:
    """For the user: a file passed over or not read, and why; `name` is the command it concerns."""

    text: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Catalog:
    commands: tuple[CustomCommand, ...] = ()  # one per name, by name
    refused: tuple[Refused, ...] = ()  # names no readable file defines
    notices: tuple[Notice, ...] = ()

    def find(self, name: str) -> CustomCommand | Refused | tuple[CustomCommand, ...] | None:
        """What `/name` means: a command, a file that was refused, the commands a bare name could
        mean (more than one), or None."""
        name = name.lower()
        for command in self.commands:
            if command.name == name:
                return command
        for refused in self.refused:
            if refused.name == name:
                return refused
        by_base = tuple(c for c in self.commands if c.base == name)
        if len(by_base) == 1:
            return by_base[0]
        return by_base or None

    def names(self) -> list[str]:
        return [c.name for c in self.commands]


@dataclass(frozen=True, slots=True)
class _File:
    name: str
    path: Path
    shown: str
    folder: CommandDir


class CommandFiles:
    """The command folders of one session, rescanned on demand; a file is read again only when it
    changed (its inode, size or mtime), so a scan per keystroke costs a listing and a stat a file."""

    def __init__(self, project_root: Path, dirs: tuple[CommandDir, ...], reserved: Collection[str]) -> None:
        self.project_root = project_root
        self.dirs = dirs
        self.reserved = frozenset(n.lower() for n in reserved)
        self._read: dict[Path, tuple[tuple[int, ...], CommandText | str]] = {}
        self._last: tuple[float, Catalog] | None = None

    def catalog(self, max_age: float = 0.0) -> Catalog:
        """The commands as the folders hold them now (or at most `max_age` seconds ago)."""
        now = time.monotonic()
        if self._last is not None and now - self._last[0] <= max_age:
            return self._last[1]
        catalog = self._scan()
        self._last = (now, catalog)
        return catalog

    def _scan(self) -> Catalog:
        notices: list[Notice] = []
        candidates: dict[str, list[_File]] = {}
        for folder in self.dirs:
            for found in self._list(folder, notices):
                if found.name in self.reserved:
                    notices.append(
                        Notice(f"/{found.name} is a built-in command; {found.shown} is not used", found.name)
                    )
                    continue
                candidates.setdefault(found.name, []).append(found)
        commands: list[CustomCommand] = []
        refused: list[Refused] = []
        for name, files in sorted(candidates.items()):
            winner: CustomCommand | None = None
            winner_path = Path()
            first_refused: Refused | None = None
            for found in files:
                if winner is not None:
                    if not _same_file(winner_path, found.path):  # one folder linked to another: no news
                        notices.append(
                            Notice(f"/{name} is {winner.shown_path}; {found.shown} is not used", name)
                        )
                    continue
                text = self._text(found)
                if isinstance(text, str):
                    notices.append(Notice(f"{found.shown} was not read: it {text}", name))
                    first_refused = first_refused or Refused(name, found.shown, text)
                    continue
                winner, winner_path = CustomCommand(name, found.folder.scope, found.shown, text), found.path
                commands.append(winner)
            if winner is None and first_refused is not None:
                refused.append(first_refused)
        return Catalog(tuple(commands), tuple(refused), tuple(notices))

    def _list(self, folder: CommandDir, notices: list[Notice]) -> list[_File]:
        """The `.md` files under `folder` with their command names, sorted; none when it is missing."""
        project = folder.scope == "project"
        try:
            if not folder.path.is_dir():
                return []
            if project:
                real = folder.path.resolve(strict=True)
                if not real.is_relative_to(self.project_root.resolve(strict=True)):
                    where = f"{folder.shown} leads outside the project (to {_plain(str(real))})"
                    notices.append(Notice(f"{where}; its commands are not read"))
                    return []
        except (OSError, RuntimeError):
            return []
        found: list[_File] = []
        for top, subdirs, files in os.walk(folder.path, followlinks=not project):
            rel = Path(top).relative_to(folder.path)
            depth = len(rel.parts) + 1
            subdirs[:] = sorted(d for d in subdirs if not d.startswith(".")) if depth < MAX_DEPTH else []
            for file_name in sorted(files):
                if file_name.startswith(".") or not file_name.endswith(".md"):
                    continue
                parts = [*rel.parts, file_name[: -len(".md")]]
                shown = _plain(f"{folder.shown}/{'/'.join((*rel.parts, file_name))}")
                if not all(_SEGMENT.fullmatch(p) for p in parts):
                    rule = "a command's name is letters, digits, '-', '_' and '.'"
                    notices.append(Notice(f"{shown} is not used: {rule}"))
                    continue
                if len(found) >= MAX_FILES:
                    many = f"{folder.shown} holds more than {MAX_FILES} commands"
                    notices.append(Notice(f"{many}; the rest are not read"))
                    return found
                found.append(_File(":".join(parts).lower(), Path(top) / file_name, shown, folder))
        return found

    def _text(self, found: _File) -> CommandText | str:
        """The file's parsed text, or why it was not read."""
        try:
            st = os.stat(found.path)
        except OSError as exc:
            return f"cannot be read: {exc.strerror or exc}"
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
        cached = self._read.get(found.path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        result = self._read_file(found, st.st_mode)
        self._read[found.path] = (stamp, result)
        return result

    def _read_file(self, found: _File, mode: int) -> CommandText | str:
        try:
            if found.folder.scope == "project":
                read = read_project_file(self.project_root, found.path, limit=MAX_COMMAND_BYTES)
            elif not stat.S_ISREG(mode):
                return "is not a regular file; only regular files are read"
            else:
                read = read_user_file(found.path, limit=MAX_COMMAND_BYTES)
        except UnreadableFile as exc:
            return str(exc)
        if read.more:
            return f"is larger than {describe_size(MAX_COMMAND_BYTES)}, the limit for a command"
        if b"\x00" in read.data:
            return "is not text (it holds NUL bytes)"
        try:
            return parse_command_text(read.data.decode("utf-8-sig"))
        except UnicodeDecodeError:
            return "is not UTF-8 text"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False

"""What the user has approved a project's own files to run: its MCP servers and its hooks.

A cloned repository can ship `.mcp.json` and `.agent/config.toml` naming commands; none of them
runs until the user approves it once for that project. An approval is kept per user, outside the
project (a repository cannot ship its own approvals):

    <state dir>/project-approvals.json    0600
    {"version": 1, "projects": {"/abs/project": {"mcp:notes": "<sha256 of the definition>", ...}}}

An approval names what it approved by a fingerprint of its whole definition (command, arguments,
environment, URL, headers, matcher, timeout), so a `git pull` that changes the command asks again.
The file is rewritten whole (temporary file, fsync, rename) so a crash or a full disk leaves the
previous approvals as they were; a file that cannot be read counts as approving nothing.

What a command runs from the project's own files (`./hooks/check.sh`, `python3 server.py`) is not
part of the fingerprint: the approval covers the command, and the file runs as it is each time.
`project_files_run` names such files, so the question says so. (Pinning their digests too was
weighed and left out: it would pin the one file named, not what it imports or sources, and a hook
reads its file at each event, long after the check at start.)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from agent_cli.core.text import visible_exact
from agent_cli.store.private_write import write_private
from agent_cli.store.user_dirs import state_dir

__all__ = [
    "APPROVALS_FILE",
    "ProjectApprovals",
    "fingerprint",
    "project_files_run",
    "shell_words",
    "unpinned_note",
]

APPROVALS_FILE = "project-approvals.json"
# `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`: the variable a hook is run with, naming the root.
_PROJECT_VARIABLE = re.compile(r"^\$(?:\{(?:CLAUDE|AGENT)_PROJECT_DIR\}|(?:CLAUDE|AGENT)_PROJECT_DIR\b)")
_MAX_BYTES = 4 * 1024 * 1024


def fingerprint(definition: object) -> str:
    """A stable digest of a JSON-able definition (key order does not matter)."""
    text = json.dumps(definition, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def shell_words(command: str) -> list[str]:
    """A hook's command line as words, near enough to find the files it names (not to run it)."""
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote: the plain words will do for naming files
        return command.split()


def project_files_run(words: Iterable[str], root: Path) -> list[str]:
    """The words (or the value of a `--option=value` word) that name a regular file inside `root`,
    taken relative to it as a command run there takes them: what runs as it is each time."""
    base = root.resolve()
    found: list[str] = []
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        value = _PROJECT_VARIABLE.sub(lambda _: str(root), value)  # as the hook's environment sets it
        if not value or value.startswith("-") or "\0" in value:
            continue
        try:
            path = (base / Path(value).expanduser()).resolve()
            inside = path.is_relative_to(base) and path != base and path.is_file()
        except (OSError, RuntimeError, ValueError):
            continue
        if inside and value not in found:
            found.append(value)
    return found


def unpinned_note(files: list[str], when: str) -> str:
    """The sentence a question adds for `files` a command runs from the project (`when`: 'at each
    start', 'each time it runs')."""
    named = ", ".join(visible_exact(f) for f in files)
    one = len(files) == 1
    return (
        f"It runs {named}, {'a file' if one else 'files'} in this project: the approval covers the "
        f"command, not {'the file' if one else 'the files'}, which {'runs' if one else 'run'} as "
        f"{'it is' if one else 'they are'} {when}."
    )


class ProjectApprovals:
    """The user's approvals for one project's runnable files (`kind`: "mcp", "hook")."""

    def __init__(self, path: Path, project: Path) -> None:
        self.path = path
        self.project = str(project.resolve())

    @classmethod
    def for_user(cls, env: Mapping[str, str], project: Path) -> ProjectApprovals:
        return cls(state_dir(env) / APPROVALS_FILE, project)

    def approved(self, kind: str, name: str, definition: object) -> bool:
        """Whether this exact definition was approved for this project."""
        entry = self._read().get(self.project, {})
        return isinstance(entry, dict) and entry.get(f"{kind}:{name}") == fingerprint(definition)

    def approve(self, kind: str, name: str, definition: object) -> None:
        """Remember the approval; OSError if the state dir cannot be written (the caller says so)."""
        projects = self._read()
        entry = projects.get(self.project)
        entry = dict(entry) if isinstance(entry, dict) else {}
        entry[f"{kind}:{name}"] = fingerprint(definition)
        projects[self.project] = entry
        self._write({"version": 1, "projects": projects})

    def revoke(self, kind: str, name: str) -> None:
        projects = self._read()
        entry = projects.get(self.project)
        if isinstance(entry, dict) and entry.pop(f"{kind}:{name}", None) is not None:
            self._write({"version": 1, "projects": projects})

    def _read(self) -> dict[str, object]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return {}
        try:  # only a regular file: a FIFO in its place must not hang start-up
            data = os.read(fd, _MAX_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        except OSError:
            return {}
        finally:
            os.close(fd)
        try:
            document = json.loads(data)
        except ValueError:
            return {}
        projects = document.get("projects") if isinstance(document, dict) else None
        return dict(projects) if isinstance(projects, dict) else {}

    def _write(self, document: Mapping[str, object]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(self.path, (json.dumps(document, indent=1, sort_keys=True) + "\n").encode())

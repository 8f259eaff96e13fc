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
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from agent_cli.store.private_write import write_private
from agent_cli.store.user_dirs import state_dir

__all__ = ["APPROVALS_FILE", "ProjectApprovals", "fingerprint"]

APPROVALS_FILE = "project-approvals.json"
_MAX_BYTES = 4 * 1024 * 1024


def fingerprint(definition: object) -> str:
    """A stable digest of a JSON-able definition (key order does not matter)."""
    text = json.dumps(definition, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


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

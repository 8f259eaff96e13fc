"""What a tool call did to the project's files, as the session log records it.

A `Touch` is one act that changed files: a tool call (write_file, edit_file, a bash command) or a
rewind putting files back. It lists, for every path it changed, how that path was *before*
(a `Change`: absent, a folder, or a file whose content is in the snapshot store under its
digest), and every path it changed that cannot be put back (a `Lost`, with why: outside the
project, over the size limit, a link). Only the state before is kept: to return a file to how it
was at some moment, the first change after that moment says it all.

Touches are written to the session log as state records (`files` for a tool call, `rewind` for a
rewind, whose data holds a touch too) and read back with `Touch.from_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["FILES_TOPIC", "REWIND_TOPIC", "Change", "Lost", "Touch", "UndoPlan", "Was"]

FILES_TOPIC = "files"
REWIND_TOPIC = "rewind"

Was: TypeAlias = Literal["absent", "dir", "file"]


@dataclass(frozen=True, slots=True)
class Change:
    """A path as it was before a change: `digest` names a file's content in the snapshot store."""

    path: str
    was: Was
    digest: str = ""
    mode: int = 0o644

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "was": self.was}
        if self.was == "file":
            out.update(digest=self.digest, mode=self.mode)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Change:
        was = data["was"]
        if was not in ("absent", "dir", "file"):
            raise ValueError(f"a change of an unknown kind {was!r}")
        return cls(str(data["path"]), was, str(data.get("digest") or ""), int(data.get("mode") or 0o644))


@dataclass(frozen=True, slots=True)
class Lost:
    """A path that changed and cannot be put back, and why ("outside the project", ...)."""

    path: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "why": self.why}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Lost:
        return cls(str(data["path"]), str(data["why"]))


@dataclass(frozen=True, slots=True)
class Touch:
    """One act's changes. `command` is bash's command line; `note` says what was not watched
    (a tree over the entry limit), for the user."""

    tool: str
    changes: tuple[Change, ...] = ()
    lost: tuple[Lost, ...] = ()
    command: str = ""
    note: str = ""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this act changed, restorable or not, sorted."""
        return tuple(sorted({c.path for c in self.changes} | {lost.path for lost in self.lost}))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "changes": [c.to_json() for c in self.changes]}
        if self.lost:
            out["lost"] = [lost.to_json() for lost in self.lost]
        if self.command:
            out["command"] = self.command
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Touch:
        """Raises ValueError (or KeyError, TypeError) for data that is not a touch."""
        return cls(
            str(data["tool"]),
            tuple(Change.from_json(c) for c in data.get("changes") or ()),
            tuple(Lost.from_json(lost) for lost in data.get("lost") or ()),
            str(data.get("command") or ""),
            str(data.get("note") or ""),
        )


@dataclass(frozen=True, slots=True)
class UndoPlan:
    """Each path changed since a prompt as it was then, and what changed that cannot be put back."""

    changes: tuple[Change, ...] = ()
    lost: tuple[Lost, ...] = ()
    notes: tuple[str, ...] = ()  # what was not watched (a scan cut at its limit), said once each

"""Putting files back as an undo plan says they were: the file half of `/rewind`.

    restore(root, store, plan) -> Restored

In order: what did not exist is removed, deepest first (a folder only when it is empty: one that
holds something the agent did not make is left, and said); folders that were there are made again
(a file made in a folder's place is moved out of the way); files are written back from the snapshot
store (through a temporary file and a rename, as every write of a file here is, with the mode they
had). Each path is snapshotted before it is changed, so the rewind's own `Touch` can be undone
by a later rewind like any tool call.

A path from the log is used only if it stays inside the project once its folders are resolved (a
link swapped in for a folder since is not followed out) and is not in the session store. What
cannot be put back is never skipped in silence: the plan's lost paths and every failure here are
in `Restored.unrestored`, each with why.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_cli.agent.file_changes import Change, Lost, Touch, UndoPlan
from agent_cli.agent.file_watch import MAX_SNAPSHOT_BYTES, read_state
from agent_cli.store.layout import TRANSCRIPTS_DIR
from agent_cli.store.redact import REDACTED
from agent_cli.store.snapshots import SnapshotStore
from agent_cli.tools.base import ToolError
from agent_cli.tools.replace import replace_file

__all__ = ["Restored", "restore"]

FOLDER_IN_USE = "a folder that holds other files is there now; left in place"
UNSAFE_PATH = "not a path a rewind writes (outside the project, in the session store, or redacted)"


@dataclass(frozen=True, slots=True)
class Restored:
    """What a rewind did to the files: paths written back, removed and made again; what it could
    not put back and why; and its own touch (how each path it changed was before)."""

    touch: Touch
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    made: tuple[str, ...] = ()
    unrestored: tuple[Lost, ...] = ()
    notes: tuple[str, ...] = ()  # what was not watched (the plan's notes)

    @property
    def count(self) -> int:
        return len(self.written) + len(self.removed) + len(self.made)


def _depth(change: Change) -> int:
    return change.path.count("/")


class _Restorer:
    def __init__(self, root: Path, store: SnapshotStore) -> None:
        self.root = root.resolve()
        self.store = store
        self.done: dict[str, list[str]] = {"written": [], "removed": [], "made": []}
        self.before: list[Change] = []  # how each path this rewind changed was: its own touch
        self.unkept: list[Lost] = []  # paths it changed whose state before could not be kept
        self.lost: list[Lost] = []  # paths it could not put back

    def run(self, plan: UndoPlan) -> Restored:
        # What was not there goes first (deepest first), so a folder made where a file was, or a
        # file where a folder was, is out of the way of what comes back.
        absent = sorted((c for c in plan.changes if c.was == "absent"), key=_depth, reverse=True)
        dirs = sorted((c for c in plan.changes if c.was == "dir"), key=_depth)
        files = [c for c in plan.changes if c.was == "file"]
        for change in (*absent, *dirs, *files):
            self._one(change)
        return Restored(
            Touch("rewind", tuple(self.before), tuple(self.unkept)),
            tuple(self.done["written"]),
            tuple(self.done["removed"]),
            tuple(self.done["made"]),
            (*plan.lost, *self.lost),
            plan.notes,
        )

    def _one(self, change: Change) -> None:
        path = _inside(self.root, change.path)
        if path is None:
            self.lost.append(Lost(change.path, UNSAFE_PATH))
            return
        now = read_state(path, self.store, MAX_SNAPSHOT_BYTES)
        if isinstance(now, Change) and (now.was, now.digest) == (change.was, change.digest):
            return  # as it was already
        try:
            if change.was == "file":
                self._write(path, change, now)
            elif change.was == "dir":
                self._make(path, change, now)
            else:
                self._remove(path, change, now)
        except (OSError, ToolError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.lost.append(Lost(change.path, f"could not be put back: {why}"))

    def _write(self, path: Path, change: Change, now: Change | str) -> None:
        data = self.store.get(change.digest)
        if isinstance(now, Change) and now.was == "dir":  # a folder made where the file was
            if not self._take_folder(path, change, now):
                return
        else:
            self._note(change.path, now)
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, data, change.path)
        os.chmod(path, change.mode)  # (a new file: the rename put a regular file there)
        self.done["written"].append(change.path)

    def _make(self, path: Path, change: Change, now: Change | str) -> None:
        self._note(change.path, now)
        if not (isinstance(now, Change) and now.was == "absent"):
            path.unlink()  # a file or link made where the folder was (kept in the rewind's touch)
        path.mkdir(parents=True, exist_ok=True)
        self.done["made"].append(change.path)

    def _take_folder(self, path: Path, change: Change, now: Change | str) -> bool:
        """Remove the folder at `path` if it is empty (noted first); else it is named as in use."""
        if not self._empty(path):
            self.lost.append(Lost(change.path, FOLDER_IN_USE))
            return False
        self._note(change.path, now)
        path.rmdir()
        return True

    def _remove(self, path: Path, change: Change, now: Change | str) -> None:
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode):
            if not self._take_folder(path, change, now):
                return
        else:
            self._note(change.path, now)
            path.unlink()
        self.done["removed"].append(change.path)

    @staticmethod
    def _empty(path: Path) -> bool:
        with os.scandir(path) as listing:
            return not any(listing)

    def _note(self, rel: str, now: Change | str) -> None:
        """Keep how `rel` is now in the rewind's own touch (so a later rewind can undo this one)."""
        if isinstance(now, Change):
            self.before.append(Change(rel, now.was, now.digest, now.mode))
        else:
            self.unkept.append(Lost(rel, now))


def _inside(root: Path, rel: str) -> Path | None:
    """`root/rel` if `rel` is a plain relative path that stays in the project once its folders are
    resolved (the last part is not: a link there is itself removed or replaced, not followed)."""
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or any(p in ("..", ".") for p in parts):
        return None
    if any(p.casefold() == TRANSCRIPTS_DIR for p in parts) or REDACTED in rel:
        return None  # (a name the log holds redacted is not the file's name)
    parent = root.joinpath(*parts[:-1]).resolve()
    return parent / parts[-1] if parent.is_relative_to(root) else None


def restore(root: Path, store: SnapshotStore, plan: UndoPlan) -> Restored:
    """Put every path of `plan` back as it was (see the module's docstring)."""
    return _Restorer(root, store).run(plan)

"""The file watch: what each tool call changes in the project, recorded so `/rewind` can undo it.

    with watch.around(use, effect, ctx): <the tool runs>

The tool runner wraps every call in `around`; the tool's `effect` (tools.base.FileEffect) says
what to watch, and the tools themselves know nothing of it:

- path (write_file, edit_file): the file the `path` argument names is snapshotted before the call;
  if the call changed it, a `Touch` records how it was.
- tree (bash): the project's tree is scanned before the call (tree_scan.py) and every file in it
  is kept in the snapshot store (only the ones changed since the last scan are read again: the
  watch remembers each file's key and digest); after the call (finished, failed or interrupted)
  it is scanned again, and what was created, changed or deleted is recorded. A bash call is
  recorded even when it changed nothing, so `/rewind` can list the commands run.

What cannot be put back is recorded as `Lost`, with why: a file outside the project, a file over
the size limit or past the total kept for one scan, a link or special file that changed, a
snapshot that could not be written. A scan cut at the entry limit is said in the touch's note.
Each touch goes to the session log as a `files` state record (see file_changes.py).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from agent_cli.agent.file_changes import FILES_TOPIC, Change, Lost, Touch
from agent_cli.agent.tree_scan import DEFAULT_LIMITS, Tree, TreeDiff, TreeLimits, compare, scan
from agent_cli.core.errors import ConfigError
from agent_cli.core.messages import ToolUse
from agent_cli.core.text import clean
from agent_cli.store.snapshots import HoldsSecret, SnapshotStore, digest_of
from agent_cli.tools.base import FileEffect, ToolContext, ToolError
from agent_cli.tools.sandbox import resolve_path

__all__ = ["FileWatch", "StateLog", "read_state"]

MAX_SNAPSHOT_BYTES = 16 << 20  # a file write_file or edit_file replaces (edit_file reads up to 10 MiB)
OUTSIDE = "outside the project"
NOT_UTF8 = "its name is not UTF-8, which the session log cannot hold as it is"


class StateLog(Protocol):
    """Where touches are recorded (the session log)."""

    def log_state(self, topic: str, data: Mapping[str, Any]) -> None: ...


def read_state(path: Path, store: SnapshotStore, limit: int) -> Change | str:
    """How `path` is now, its content kept in `store`: a Change, or why it cannot be kept."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return Change("", "absent")
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return Change("", "dir")
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > limit:
        return f"over the size limit ({_mib(limit)} per file)"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            return f"over the size limit ({_mib(limit)} per file)"
        return Change("", "file", store.put(data), stat.S_IMODE(info.st_mode))
    except HoldsSecret as exc:
        return str(exc)
    except OSError as exc:
        return f"could not be snapshotted ({exc.strerror or exc})"
    except ConfigError as exc:  # the store's folder is not a private folder (a link, another's)
        return f"could not be snapshotted ({exc})"


def _content_now(path: Path) -> str | None:
    """The digest of a regular file's content now; None if it is not one (or cannot be read). Never
    opens anything else: a FIFO nobody writes would hold the call for ever."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            return digest_of(f.read())
    except OSError:
        return None


class FileWatch:
    def __init__(
        self, root: Path, store: SnapshotStore, log: StateLog, limits: TreeLimits = DEFAULT_LIMITS
    ) -> None:
        self._root = root.resolve()
        self._store = store
        self._log = log
        self._limits = limits
        self._known: dict[str, tuple[tuple[int, ...], str]] = {}  # path -> (key, digest) kept

    def follow(self, store: SnapshotStore, log: StateLog) -> None:
        """Record into another session from now on (/resume)."""
        self._store, self._log = store, log
        self._known.clear()  # its snapshots are in the other session's folder

    def record(self, touch: Touch) -> None:
        self._log.log_state(FILES_TOPIC, touch.to_json())

    @contextlib.contextmanager
    def around(self, use: ToolUse, effect: FileEffect, ctx: ToolContext) -> Iterator[None]:
        if effect == "path":
            yield from self._around_path(use, ctx)
        elif effect == "tree":
            yield from self._around_tree(use)
        else:
            yield

    # ---- write_file, edit_file ---------------------------------------------------------------

    def _around_path(self, use: ToolUse, ctx: ToolContext) -> Iterator[None]:
        raw = use.input.get("path")
        try:
            path = resolve_path(ctx, raw) if isinstance(raw, str) else None
        except ToolError:  # the tool refuses it too
            path = None
        if path is None:
            yield
            return
        rel = self._relative(path)
        # Outside the project nothing is kept: it is only seen whether the call changed the file.
        was = read_state(path, self._store, MAX_SNAPSHOT_BYTES) if rel is not None else OUTSIDE
        seen = _content_now(path) if isinstance(was, str) else None
        try:
            yield
        finally:
            now = _content_now(path)
            if isinstance(was, str):
                if now != seen:
                    self.record(Touch(use.name, lost=(Lost(rel or str(path), was),)))
            elif now != (was.digest if was.was == "file" else None):
                self.record(Touch(use.name, changes=(Change(rel or "", was.was, was.digest, was.mode),)))

    def _relative(self, path: Path) -> str | None:
        return path.relative_to(self._root).as_posix() if path.is_relative_to(self._root) else None

    # ---- bash ------------------------------------------------------------------------------------

    def _around_tree(self, use: ToolUse) -> Iterator[None]:
        before = scan(self._root, self._limits)
        kept, unkept = self._keep(before)
        try:
            yield
        finally:
            after = scan(self._root, self._limits)
            command = use.input.get("command")
            self.record(
                self._touch(use.name, str(command or ""), compare(before, after), before, kept, unkept)
            )

    def _keep(self, tree: Tree) -> tuple[dict[str, str], dict[str, str]]:
        """Every file of `tree` in the store, as far as the limits go: (path -> digest, path -> why
        not kept). A file whose key is unchanged since the last scan is not read again."""
        kept: dict[str, str] = {}
        unkept: dict[str, str] = {}
        limits = self._limits
        budget = limits.max_kept_bytes
        for path, entry in tree.entries.items():
            if entry.kind != "file":
                continue
            known = self._known.get(path)
            if known is not None and known[0] == entry.key:
                kept[path] = known[1]
                continue
            if entry.size > limits.max_file_bytes:
                unkept[path] = f"over the size limit ({_mib(limits.max_file_bytes)} per file)"
                continue
            if entry.size > budget:
                unkept[path] = f"past the {_mib(limits.max_kept_bytes)} kept before one command"
                continue
            state = read_state(self._root / path, self._store, limits.max_file_bytes)
            if isinstance(state, str):
                unkept[path] = state
            elif state.was == "file":
                kept[path] = state.digest
                self._known[path] = (entry.key, state.digest)
                budget -= entry.size
        return kept, unkept

    def _touch(
        self,
        tool: str,
        command: str,
        diff: TreeDiff,
        before: Tree,
        kept: dict[str, str],
        unkept: dict[str, str],
    ) -> Touch:
        changes: list[Change] = []
        lost: list[Lost] = []
        for path in diff.created:
            if not _utf8(path):
                lost.append(Lost(clean(path), NOT_UTF8))
            else:
                changes.append(Change(path, "absent"))
        for path in (*diff.changed, *diff.deleted):
            entry = before.entries[path]
            if not _utf8(path):  # the log keeps text: the name would come back as another
                lost.append(Lost(clean(path), NOT_UTF8))
            elif entry.kind == "dir":
                changes.append(Change(path, "dir"))
            elif path in kept:
                if path in diff.changed and _content_now(self._root / path) == kept[path]:
                    continue  # touched, not changed (or only its mode)
                changes.append(Change(path, "file", kept[path], entry.mode))
            else:
                why = unkept.get(path) or (
                    "a symbolic link" if entry.kind == "link" else "not a regular file"
                )
                lost.append(Lost(path, why))
        for path in diff.changed:
            self._known.pop(path, None)
        note = (
            f"the project has more than {self._limits.max_entries:,} files and folders: "
            "what the command changed beyond them was not seen"
            if diff.cut
            else ""
        )
        return Touch(tool, _sorted(changes), tuple(sorted(lost, key=lambda x: x.path)), command, note)


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes of the name, kept as surrogates
        return False
    return True


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def _sorted(changes: Sequence[Change]) -> tuple[Change, ...]:
    return tuple(sorted(changes, key=lambda c: c.path))

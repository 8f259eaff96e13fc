"""What the session changed in the project's files, as unified diffs, and `git diff` run safely: `/diff`.

    session_plan(records)            each path the session changed, as it was before its first change
    file_diff(path, before, after)   the unified diff of one path (pure; None when it is as it was)
    session_diff(root, store, recs)  every path's diff, its state before read from the snapshot store
                                     and its state now from the disk
    git_diff(root, env)              `git diff` of the repository around `root`, when git runs nothing
                                     of the repository's (`git_trust`), else the reason it was not run

A path's state *before the session* is the first change any touch recorded for it (file_changes:
only the state before an act is kept, so the first act says how the session found it). What a path
holds now is read only inside the project, only when it is a regular file (not a link) under
`MAX_BYTES`. Lines are returned as they are: the shell that shows them makes them visible.

git is run as the approval check runs it: `--no-pager diff --no-ext-diff --no-textconv --no-color`
with `-c core.fsmonitor=false`, no terminal prompt, a timeout, and only once `repository_reason`
says the repository's config and hooks name no program (a `diff.external`, a textconv or clean
filter, an fsmonitor hook would run one).
"""

from __future__ import annotations

import difflib
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_cli.agent.file_changes import Change, Lost
from agent_cli.agent.git_trust import repository_reason
from agent_cli.agent.rewind import touch_of
from agent_cli.store.log_records import LogRecord
from agent_cli.store.snapshots import SnapshotStore

__all__ = [
    "MAX_BYTES",
    "FileDiff",
    "GitDiff",
    "SessionDiff",
    "file_diff",
    "git_diff",
    "session_diff",
    "session_plan",
]

MAX_BYTES = 2_000_000  # a larger file is named, not diffed
GIT_TIMEOUT = 20.0  # seconds git diff may take
GIT_MAX_BYTES = 4_000_000  # of git's output, kept


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One path's change: the diff's lines, or (binary, too large, kept nowhere) a note alone."""

    path: str
    lines: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class SessionDiff:
    files: tuple[FileDiff, ...] = ()
    lost: tuple[Lost, ...] = ()  # changed, but the state before was not kept (outside, a link, ...)


@dataclass(frozen=True, slots=True)
class GitDiff:
    """`git diff`'s text; `repository` False outside one; `refused` says why git was not run."""

    repository: bool
    text: str = ""
    refused: str = ""


def session_plan(records: Sequence[LogRecord]) -> tuple[tuple[Change, ...], tuple[Lost, ...]]:
    """Every path the session's tools (and rewinds) changed, as the first act found it, by path."""
    first: dict[str, Change | Lost] = {}
    for record in records:
        touch = touch_of(record)
        if touch is not None:
            each: list[Change | Lost] = [*touch.changes, *touch.lost]
            for change in each:
                first.setdefault(change.path, change)
    ordered = [first[p] for p in sorted(first)]
    return (
        tuple(c for c in ordered if isinstance(c, Change)),
        tuple(c for c in ordered if isinstance(c, Lost)),
    )


def file_diff(path: str, before: bytes | None, after: bytes | None) -> FileDiff | None:
    """The diff from `before` to `after` (None: absent); None when nothing differs."""
    if before == after:
        return None
    if b"\0" in (before or b"")[:8192] or b"\0" in (after or b"")[:8192]:
        what = "created" if before is None else "deleted" if after is None else "changed"
        return FileDiff(path, note=f"binary file {what}")
    old = (before or b"").decode("utf-8", "replace").splitlines()
    new = (after or b"").decode("utf-8", "replace").splitlines()
    source = "/dev/null" if before is None else f"a/{path}"
    target = "/dev/null" if after is None else f"b/{path}"
    lines = tuple(difflib.unified_diff(old, new, fromfile=source, tofile=target, lineterm="", n=3))
    if not lines:  # only the line ends differ
        return FileDiff(path, note="only line endings changed")
    return FileDiff(path, lines)


def session_diff(root: Path, store: SnapshotStore, records: Sequence[LogRecord]) -> SessionDiff:
    """What the session changed, path by path, from how it found each path to how it is now."""
    changes, lost = session_plan(records)
    base = root.resolve()
    found: list[FileDiff] = []
    for change in changes:
        before = _before(store, change)
        now = _now(base, change.path)
        if isinstance(before, str) or isinstance(now, str):
            note = before if isinstance(before, str) else now
            found.append(FileDiff(change.path, note=str(note)))
            continue
        one = file_diff(change.path, before, now)
        if one is not None:
            found.append(one)
    return SessionDiff(tuple(found), lost)


def _before(store: SnapshotStore, change: Change) -> bytes | str | None:
    """The path's bytes before the session, None when there was no file, or a note."""
    if change.was != "file":
        return None  # absent, or a folder: shown as no file
    try:
        data = store.get(change.digest)
    except (OSError, ValueError):
        return "its content before the session was not kept"
    return data if len(data) <= MAX_BYTES else "too large to diff"


def _now(base: Path, rel: str) -> bytes | str | None:
    """The path's bytes now, None when there is no file, or a note (outside, a link, too large)."""
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or ".." in parts:
        return "not a path inside the project"
    path = base.joinpath(*parts)
    try:
        if not path.parent.resolve().is_relative_to(base):
            return "not a path inside the project"
        if path.is_symlink():
            return "now a symbolic link: not followed"
        if not path.exists() or path.is_dir():
            return None
        if not path.is_file():
            return "now not a regular file"
        if path.stat().st_size > MAX_BYTES:
            return "too large to diff"
        return path.read_bytes()
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"


def git_diff(root: Path, env: Mapping[str, str] | None = None) -> GitDiff:
    """`git diff` (the work tree against the index) around `root`, see the module's docstring."""
    inside = _git(root, env, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != b"true":
        return GitDiff(repository=False)
    reason = repository_reason(root, "diff", env)
    if reason is not None:
        return GitDiff(True, refused=reason)
    done = _git(
        root, env, "-c", "core.fsmonitor=false", "diff", "--no-ext-diff", "--no-textconv", "--no-color"
    )
    if done is None:
        return GitDiff(True, refused="git diff did not answer in time")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return GitDiff(True, refused=f"git diff failed: {said[0][:200] if said else done.returncode}")
    return GitDiff(True, text=done.stdout[:GIT_MAX_BYTES].decode("utf-8", "replace"))


def _git(root: Path, env: Mapping[str, str] | None, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    base = dict(os.environ if env is None else env)
    base.update(GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    base.pop("GIT_EXTERNAL_DIFF", None)
    try:
        return subprocess.run(
            ["git", "--no-pager", *args],
            cwd=root,
            env=base,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None

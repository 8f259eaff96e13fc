"""The project's tree as a value, and what changed between two of them: how bash's changes are found.

    scan(root, limits) -> Tree          every folder, file and link under the project, by path
    compare(before, after) -> TreeDiff  what was created, changed or deleted between two scans

A *path* is relative to the project root, '/'-separated. An *entry* is what a scan saw at a path:
its kind and, for a file or a link, a *key* (size, modification and change times, inode) that
changes whenever its content may have: `ctime` cannot be set back by `touch -d`, so a command that
rewrites a file and restores its mtime is still seen. Folders compare by existence only (their
times change whenever a file in them does).

The folders nobody wants searched are skipped, as the search tools skip them (`SKIP_DIRS`: .git,
.transcripts, node_modules, .venv, __pycache__): a command's build output there is not tracked.
A scan stops at `limits.max_entries`; a Tree says so (`cut`), and so does every diff of it, so
the user is told that changes beyond the limit were not seen rather than nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from agent_cli.tools.search import SKIP_DIRS

__all__ = ["DEFAULT_LIMITS", "Entry", "EntryKind", "Tree", "TreeDiff", "TreeLimits", "compare", "scan"]

EntryKind: TypeAlias = Literal["file", "dir", "link", "other"]


@dataclass(frozen=True, slots=True)
class TreeLimits:
    """How much of the project is watched around a command, and how much of it is kept."""

    max_entries: int = 10_000  # folders, files and links a scan lists
    max_file_bytes: int = 1 << 20  # a larger file's content is not kept: its changes are named instead
    max_kept_bytes: int = 64 << 20  # contents kept for one scan, in all


DEFAULT_LIMITS = TreeLimits()


@dataclass(frozen=True, slots=True)
class Entry:
    kind: EntryKind
    key: tuple[int, ...] = ()  # (size, mtime_ns, ctime_ns, inode) for a file or a link
    mode: int = 0

    @property
    def size(self) -> int:
        return self.key[0] if self.key else 0


@dataclass(frozen=True, slots=True)
class Tree:
    entries: Mapping[str, Entry]
    cut: bool = False  # the scan stopped at the entry limit


@dataclass(frozen=True, slots=True)
class TreeDiff:
    """Paths in sorted order. `cut`: either scan stopped at its limit, so changes may be missing."""

    created: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    cut: bool = False

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.deleted)


def scan(root: Path, limits: TreeLimits = DEFAULT_LIMITS) -> Tree:
    """Every entry under `root` (links not followed, SKIP_DIRS skipped), up to `limits.max_entries`."""
    entries: dict[str, Entry] = {}
    folders = [""]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(root / folder if folder else root) as listing:
                found = sorted(listing, key=lambda e: e.name)
        except OSError:  # vanished meanwhile, or not readable: nothing in it can be seen
            continue
        for item in found:
            if len(entries) >= limits.max_entries:
                return Tree(entries, cut=True)
            path = f"{folder}/{item.name}" if folder else item.name
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                continue
            entry = _entry(info)
            if entry.kind == "dir":
                if item.name in SKIP_DIRS:
                    continue
                folders.append(path)
            entries[path] = entry
    return Tree(entries)


def _entry(info: os.stat_result) -> Entry:
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return Entry("dir")
    key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    kind: EntryKind = "file" if stat.S_ISREG(mode) else "link" if stat.S_ISLNK(mode) else "other"
    return Entry(kind, key, stat.S_IMODE(mode))


def compare(before: Tree, after: Tree) -> TreeDiff:
    """What a command did to the tree: paths that appeared, changed (kind or key) or went away."""
    old, new = before.entries, after.entries
    created = sorted(p for p in new if p not in old)
    deleted = sorted(p for p in old if p not in new)
    changed = sorted(
        p
        for p in new
        if p in old and (old[p].kind != new[p].kind or (old[p].kind != "dir" and old[p].key != new[p].key))
    )
    return TreeDiff(tuple(created), tuple(changed), tuple(deleted), before.cut or after.cut)

"""The snapshot store and the tree diff that /rewind stands on: content by digest, private on disk;
the project's tree scanned without following links, the skipped folders left out, cut at a limit;
and what changed between two scans, table-driven."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.file_changes import Change, Lost, Touch
from agent_cli.agent.file_watch import FileWatch
from agent_cli.agent.tree_scan import Entry, Tree, TreeDiff, TreeLimits, compare, scan
from agent_cli.core.messages import ToolUse
from agent_cli.store.snapshots import SnapshotStore, digest_of
from agent_cli.tools.base import ToolContext

# ---- the store -------------------------------------------------------------------------------


def test_a_content_is_kept_once_under_its_digest(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "session")
    (tmp_path / "session").mkdir(mode=0o700)
    first = store.put(b"hello\n")
    again = store.put(b"hello\n")
    other = store.put(b"")
    assert first == again == digest_of(b"hello\n") and other != first
    assert sorted(p.name for p in store.dir.iterdir()) == sorted([first, other])  # no temporary left
    assert store.get(first) == b"hello\n" and store.get(other) == b""
    assert store.has(first) and not store.has("0" * 64) and not store.has("../session.jsonl")


def test_the_store_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = SnapshotStore(tmp_path)
        digest = store.put(b"secret-ish")
    finally:
        os.umask(old)
    assert store.dir.stat().st_mode & 0o777 == 0o700
    assert (store.dir / digest).stat().st_mode & 0o777 == 0o600


def test_a_name_that_is_not_a_digest_or_a_damaged_blob_is_refused(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    digest = store.put(b"original")
    with pytest.raises(ValueError, match="not a snapshot digest"):
        store.get("../../etc/passwd")
    (store.dir / digest).write_bytes(b"tampered")
    with pytest.raises(ValueError, match="damaged"):
        store.get(digest)
    with pytest.raises(FileNotFoundError):
        store.get("a" * 64)


def test_a_symlink_planted_as_the_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    session = tmp_path / "session"
    session.mkdir()
    (session / "snapshots").symlink_to(elsewhere)
    with pytest.raises(Exception, match="symbolic link"):
        SnapshotStore(session).put(b"data")
    assert list(elsewhere.iterdir()) == []


def test_a_touch_reads_back_as_written() -> None:
    touch = Touch(
        "bash",
        (Change("a.txt", "file", "f" * 64, 0o755), Change("d", "dir"), Change("new.txt", "absent")),
        (Lost("big.bin", "over the size limit"),),
        "rm a.txt",
        "a note",
    )
    assert Touch.from_json(touch.to_json()) == touch
    assert touch.paths == ("a.txt", "big.bin", "d", "new.txt")
    with pytest.raises(ValueError):
        Change.from_json({"path": "x", "was": "deleted"})


# ---- the tree --------------------------------------------------------------------------------


def test_a_scan_lists_folders_files_and_links_and_skips_what_search_skips(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "src")  # not followed
    for skipped in (".git", ".transcripts", "node_modules", "src/__pycache__", ".venv"):
        (tmp_path / skipped).mkdir(parents=True, exist_ok=True)
        (tmp_path / skipped / "inside").write_text("x")
    tree = scan(tmp_path)
    assert sorted(tree.entries) == ["link", "src", "src/app.py"]
    assert [tree.entries[p].kind for p in ("link", "src", "src/app.py")] == ["link", "dir", "file"]
    assert not tree.cut


def test_a_scan_stops_at_its_limit_and_says_so(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"f{i}").write_text("x")
    tree = scan(tmp_path, TreeLimits(max_entries=3))
    assert len(tree.entries) == 3 and tree.cut
    assert compare(tree, scan(tmp_path)).cut


def test_a_rewrite_that_keeps_size_and_mtime_is_still_seen(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("aaaa")
    before = scan(tmp_path)
    info = path.stat()
    path.write_text("bbbb")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # what `touch -r` would leave
    assert compare(before, scan(tmp_path)).changed == ("f",)


def _tree(**entries: Entry) -> Tree:
    return Tree({k.replace("__", "/"): v for k, v in entries.items()})


FILE = Entry("file", (4, 1, 1, 10), 0o644)
EDITED = Entry("file", (5, 2, 2, 10), 0o644)
DIR = Entry("dir")
LINK = Entry("link", (3, 1, 1, 11))


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (_tree(a=FILE), _tree(a=FILE), TreeDiff()),
        (_tree(), _tree(a=FILE), TreeDiff(created=("a",))),
        (_tree(a=FILE), _tree(), TreeDiff(deleted=("a",))),
        (_tree(a=FILE), _tree(a=EDITED), TreeDiff(changed=("a",))),
        (_tree(a=FILE), _tree(a=DIR), TreeDiff(changed=("a",))),  # a file became a folder
        (_tree(a=FILE), _tree(a=LINK), TreeDiff(changed=("a",))),
        (_tree(d=DIR), _tree(d=DIR), TreeDiff()),  # folders compare by existence only
        (_tree(d=DIR, d__x=FILE), _tree(), TreeDiff(deleted=("d", "d/x"))),
        (_tree(b=FILE, a=FILE), _tree(c=FILE, a=EDITED), TreeDiff(("c",), ("a",), ("b",))),
        (Tree({}, cut=True), Tree({}), TreeDiff(cut=True)),
    ],
)
def test_compare(before: Tree, after: Tree, expected: TreeDiff) -> None:
    assert compare(before, after) == expected
    assert bool(compare(before, after)) == bool(expected.created or expected.changed or expected.deleted)


# ---- the watch around a command ---------------------------------------------------------------


class CountingStore(SnapshotStore):
    """A real store that counts what it was given to keep."""

    def __init__(self, session_dir: Path) -> None:
        super().__init__(session_dir)
        self.puts = 0

    def put(self, data: bytes) -> str:
        self.puts += 1
        return super().put(data)


class StateList:
    def __init__(self) -> None:
        self.touches: list[Touch] = []

    def log_state(self, topic: str, data: Mapping[str, Any]) -> None:
        self.touches.append(Touch.from_json(data))


def _bash(watch: FileWatch, root: Path, command: str) -> None:
    with watch.around(ToolUse("toolu_1", "bash", {"command": command}), "tree", ToolContext(root=root)):
        subprocess.run(command, shell=True, cwd=root, check=True)


def test_the_watch_reads_a_file_again_only_when_it_changed_and_keeps_within_its_budget(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a").write_text("12345678")
    (root / "b").write_text("abcdefgh")
    (root / "big").write_text("x" * 40)
    store, log = CountingStore(tmp_path / "session"), StateList()
    watch = FileWatch(root, store, log, TreeLimits(max_entries=100, max_file_bytes=32, max_kept_bytes=12))
    _bash(watch, root, "rm b big")  # a is kept; b is past the 12 bytes kept for one command; big too big
    assert store.puts == 1
    touch = log.touches[-1]
    assert touch.command == "rm b big" and touch.changes == ()
    assert {lost.path: lost.why for lost in touch.lost} == {
        "b": "past the 1.14441e-05 MiB kept before one command",
        "big": "over the size limit (3.05176e-05 MiB per file)",
    }
    _bash(watch, root, "true")
    assert store.puts == 1 and log.touches[-1] == Touch("bash", command="true")  # a is not read again
    (root / "a").write_text("changed!")
    _bash(watch, root, "true")
    assert store.puts == 2  # its key changed: read again

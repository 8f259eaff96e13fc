"""What the file tools must not do: destroy a file when the disk fills, hang on a FIFO, touch the
session store, or write outside the project through a hard link. Real files, a real full disk
(a 2 MiB tmpfs, where mounting is permitted), real FIFOs and sockets.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.registry import default_tools

REGISTRY = default_tools()


def run(ctx: ToolContext, name: str, **args: Any) -> ToolOutput:
    return REGISTRY.run(name, args, ctx)


def run_or_hang(ctx: ToolContext, name: str, fifo: Path, **args: Any) -> ToolOutput:
    """The call in a thread; if it is still blocked after 30 s (opening the FIFO waits for a reader),
    open the other end so the thread can end, and fail."""
    box: list[ToolOutput] = []
    worker = threading.Thread(target=lambda: box.append(run(ctx, name, **args)), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        worker.join(30)
        os.close(fd)
        pytest.fail(f"{name} on a FIFO was still blocked after 30 s")
    return box[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- a full disk ---------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted afterwards; skipped where mounting is not permitted."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path, leave: int) -> None:
    """Fill the filesystem of `folder` until about `leave` bytes are free."""
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    with open(folder / "filler", "wb") as f:
        f.write(b"\0" * max(0, free - leave))


BIG = "".join(f"line {n:05d} of the original file, which must survive a full disk\n" for n in range(8000))


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_full_disk_leaves_the_original_whole(small_disk: Path, tool: str) -> None:
    original = small_disk / "notes.txt"
    original.write_text(BIG)
    original.chmod(0o640)
    fill(small_disk, leave=64 * 1024)
    ctx = ToolContext(root=small_disk)
    grown = BIG.replace("must survive", "must survive " + "x" * 40)  # ~320 KB more than there is room for
    if tool == "write_file":
        out = run(ctx, "write_file", path="notes.txt", content=grown)
    else:
        more = {"old_string": "must survive", "new_string": "must survive " + "x" * 40, "replace_all": True}
        out = run(ctx, "edit_file", path="notes.txt", **more)
    assert out.is_error
    assert out.content.startswith("Error: disk full: could not write ")
    assert out.content.endswith("bytes to notes.txt; notes.txt is unchanged")
    assert original.read_text() == BIG
    assert stat.S_IMODE(original.stat().st_mode) == 0o640
    assert leftovers(small_disk) == []


def test_a_full_disk_for_a_new_file_leaves_nothing(small_disk: Path) -> None:
    fill(small_disk, leave=16 * 1024)
    out = run(ToolContext(root=small_disk), "write_file", path="new.txt", content="y" * 100_000)
    assert out.content == "Error: disk full: could not write 100000 bytes to new.txt; new.txt was not created"
    assert not (small_disk / "new.txt").exists()
    assert leftovers(small_disk) == []


# --- what a replaced file keeps ------------------------------------------------------------------


def test_a_replaced_file_keeps_mode_and_owner(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("#!/bin/sh\necho 1\n")
    target.chmod(0o750)
    if os.geteuid() == 0:
        os.chown(target, 65534, 65534)
    before = target.stat()
    ctx = ToolContext(root=tmp_path)
    edited = run(ctx, "edit_file", path="run.sh", old_string="echo 1", new_string="echo 2")
    assert not edited.is_error
    # Replaced, not rewritten in place (the new file exists before the old one goes: a new inode).
    assert target.stat().st_ino != before.st_ino
    assert not run(ctx, "write_file", path="run.sh", content="#!/bin/sh\necho 3\n").is_error
    after = target.stat()
    assert stat.S_IMODE(after.st_mode) == 0o750
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert target.read_text() == "#!/bin/sh\necho 3\n"


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert not run(ToolContext(root=tmp_path), "write_file", path="fresh.txt", content="x").is_error
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o640


def test_a_symlink_in_the_project_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    ctx = ToolContext(root=tmp_path)
    assert not run(ctx, "write_file", path="alias.txt", content="new\n").is_error
    assert not run(ctx, "edit_file", path="alias.txt", old_string="new", new_string="newer").is_error
    assert (tmp_path / "alias.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "newer\n"


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_hard_link_out_of_the_project_does_not_write_outside(tmp_path: Path, tool: str) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE original\n")
    root = tmp_path / "proj"
    root.mkdir()
    os.link(outside, root / "inside.txt")  # what `ln /outside/file inside` in bash makes
    args = {"content": "changed\n"}
    if tool == "edit_file":
        args = {"old_string": "original", "new_string": "changed"}
    out = run(ToolContext(root=root), tool, path="inside.txt", **args)
    assert not out.is_error, out.content
    assert outside.read_text() == "OUTSIDE original\n"
    assert "changed" in (root / "inside.txt").read_text()
    assert (root / "inside.txt").stat().st_nlink == 1


# --- FIFOs, sockets ------------------------------------------------------------------------------


def test_write_file_on_a_fifo_returns_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = run_or_hang(ToolContext(root=tmp_path), "write_file", fifo, path="pipe", content="x")
    said = "Error: pipe is a FIFO (named pipe); the file tools write regular files only"
    assert out == ToolOutput(said, True)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.parametrize(
    ("tool", "extra"), [("read_file", {}), ("edit_file", {"old_string": "a", "new_string": "b"})]
)
def test_the_other_file_tools_refuse_a_fifo_at_once(tmp_path: Path, tool: str, extra: dict[str, str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = run_or_hang(ToolContext(root=tmp_path), tool, fifo, path="pipe", **extra)
    assert out.is_error and "pipe is a FIFO (named pipe)" in out.content


def test_a_socket_is_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        out = run(ToolContext(root=tmp_path), "write_file", path="sock", content="x")
    assert out == ToolOutput("Error: sock is a socket; the file tools write regular files only", True)


# --- the session store ---------------------------------------------------------------------------

LOG = '{"kind": "message", "role": "user", "text": "the real words"}\n'


@pytest.fixture
def store(tmp_path: Path) -> ToolContext:
    root = tmp_path / "proj"
    log = root / ".transcripts" / "20261201-090000-abcdef" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(LOG)
    (root / "src").mkdir()
    (root / "notes").symlink_to(".transcripts")
    return ToolContext(root=root)


STORE_PATHS = [
    ".transcripts/20261201-090000-abcdef/session.jsonl",
    "./.transcripts/20261201-090000-abcdef/session.jsonl",
    "src/../.transcripts/20261201-090000-abcdef/session.jsonl",
    "notes/20261201-090000-abcdef/session.jsonl",
    ".TRANSCRIPTS/20261201-090000-abcdef/session.jsonl",
    ".transcripts/20261201-090000-abcdef/forged.jsonl",
    "{root}/.transcripts/20261201-090000-abcdef/session.jsonl",
]


@pytest.mark.parametrize("path", STORE_PATHS)
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
def test_the_session_store_is_off_limits(store: ToolContext, tool: str, path: str) -> None:
    args = {"content": "forged\n", "old_string": "the real words", "new_string": "forged words"}
    out = run(store, tool, path=path.replace("{root}", str(store.root)), **args)
    assert out.is_error
    assert "is in the session store (.transcripts/)" in out.content
    assert "Use recall" in out.content
    log = store.root / ".transcripts" / "20261201-090000-abcdef"
    assert (log / "session.jsonl").read_text() == LOG
    assert sorted(p.name for p in log.iterdir()) == ["session.jsonl"]


def test_the_session_store_is_off_limits_even_when_outside_paths_are_allowed(store: ToolContext) -> None:
    store.allow_outside_root = True
    out = run(store, "write_file", path=".transcripts/x/session.jsonl", content="forged")
    assert out.is_error and "session store" in out.content


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("grep", {"pattern": "real words", "path": ".transcripts"}),
        ("grep", {"pattern": "real words", "path": "notes"}),
        ("glob", {"pattern": ".transcripts/*"}),
        ("glob", {"pattern": "notes/**"}),
    ],
)
def test_the_search_tools_do_not_look_into_the_store(
    store: ToolContext, tool: str, args: dict[str, str]
) -> None:
    out = run(store, tool, **args)
    assert out.is_error and "session store" in out.content
    assert "real words" not in out.content


def test_a_hard_link_into_the_store_is_replaced_not_written_through(store: ToolContext) -> None:
    log = store.root / ".transcripts" / "20261201-090000-abcdef" / "session.jsonl"
    os.link(log, store.root / "copy.jsonl")
    out = run(store, "edit_file", path="copy.jsonl", old_string="the real words", new_string="forged words")
    assert not out.is_error
    assert log.read_text() == LOG


def test_grep_names_a_fifo_and_does_not_wait_on_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "a.txt").write_text("needle\n")
    ctx = ToolContext(root=tmp_path)
    out = run_or_hang(ctx, "grep", fifo, pattern="needle", path="pipe")
    assert out == ToolOutput("Error: pipe is a FIFO (named pipe); grep searches text files only", True)
    assert run_or_hang(ctx, "grep", fifo, pattern="needle").content == "a.txt:1:needle"


CHILD_WRITE = """
import sys
from pathlib import Path
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools
out = default_tools().run("write_file", {"path": "ro.txt", "content": "new"}, ToolContext(Path(sys.argv[1])))
print(out.content)
"""


def test_a_read_only_file_is_not_replaced() -> None:
    """The rename could replace a file the user may not write (the folder is theirs): refused, as an
    in-place write was. Run as an unprivileged user, since root may write anything."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    # Not under pytest's own folders (root's, 0700) nor a TMPDIR the user cannot enter: in /tmp.
    folder = Path(tempfile.mkdtemp(prefix="agent-ro-", dir="/tmp"))
    try:
        (folder / "ro.txt").write_text("old\n")
        (folder / "ro.txt").chmod(0o444)
        for path in (folder, folder / "ro.txt"):
            os.chown(path, 65534, 65534)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-B", "-c"]
        # An environment of its own, run from its folder: nothing an earlier test left in this worker
        # (a HOME, a working directory, a variable) that the unprivileged user may not read reaches it.
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            "HOME": str(folder),
            "LC_ALL": "C.UTF-8",
        }
        proc = subprocess.run(
            [*cmd, CHILD_WRITE, str(folder)], capture_output=True, text=True, env=env, cwd=folder, timeout=120
        )
        if proc.returncode != 0 and "setpriv" in proc.stderr:
            pytest.skip(f"setpriv: {proc.stderr.strip()}")
        said = "Error: permission denied: ro.txt is read-only for this user; ro.txt is unchanged"
        assert proc.stdout.strip() == said, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
        assert (folder / "ro.txt").read_text() == "old\n"
    finally:
        shutil.rmtree(folder)

"""A disk that fills mid-session: one line, a log that still parses, nothing acknowledged lost.

On a real full disk: a small tmpfs mounted for the test (root only; skipped, saying why, where
mount is not permitted). "Freeing space" is removing the filler file the test put there.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.core.errors import DiskFullError
from agent_cli.core.messages import Message, TextBlock
from agent_cli.store.log_records import MessageRecord, read_log
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import load_session
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env, run_agent


def mount_small_disk(where: Path, size: str) -> None:
    """Mount a tmpfs of `size` at `where`, or skip the test with the reason."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("a small disk needs mount, which needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    mount_small_disk(where, "256k")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(path: Path, leave: int = 0) -> None:
    """Write zeros to `path` until the disk is full, then give back `leave` bytes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass  # full
    finally:
        os.close(fd)
    if leave:
        os.truncate(path, max(0, path.stat().st_size - leave))


def _message(i: int) -> Message:
    return Message(role="user", content=(TextBlock(f"record {i}: " + "words of a long prompt " * 120),))


def _lines_parse(path: Path) -> bool:
    data = path.read_bytes()
    _, skipped = read_log(path)
    return skipped == 0 and (not data or data.endswith(b"\n"))


def test_a_write_on_a_full_disk_is_undone_and_said_in_one_line(small_disk: Path) -> None:
    project = small_disk / "project"
    project.mkdir()
    log = SessionLog.create(project, redactor=Redactor(), meta={"model": "m"})
    fill(small_disk / "filler", leave=24 * 1024)  # room for a few records
    acknowledged = []
    with pytest.raises(DiskFullError) as raised:
        for i in range(1000):
            message = _message(i)
            log.log_message(message)
            acknowledged.append(message.id)
    said = str(raised.value)
    assert "\n" not in said and said.startswith("the disk is full: the session log ")
    assert f"free space, then `agent --resume {log.id}`" in said
    assert acknowledged, "the disk filled before any record: the test's filler is too large"
    assert _lines_parse(log.path), "a torn line was left in the log"
    rids = [r.rid for r in read_log(log.path)[0] if isinstance(r, MessageRecord)]
    assert rids == acknowledged  # every acknowledged record, whole, and nothing else
    with pytest.raises(DiskFullError):  # no later record leaves a hole in the log
        log.log_message(_message(-1))
    log.close()

    (small_disk / "filler").unlink()  # space is freed: the session goes on
    with SessionLog.open(project, log.id, redactor=Redactor()) as again:
        again.log_message(_message(9999))
    assert _lines_parse(log.path)
    loaded = load_session(project, log.id)
    assert [m.id for m in loaded.messages][: len(acknowledged)] == acknowledged
    assert len(loaded.messages) == len(acknowledged) + 1


def test_a_session_that_cannot_start_leaves_nothing_behind(small_disk: Path) -> None:
    project = small_disk / "project"
    project.mkdir()
    fill(small_disk / "filler")
    with pytest.raises(DiskFullError) as raised:
        SessionLog.create(project, redactor=Redactor(), meta={"model": "m" * 10_000})
    said = str(raised.value)
    assert said.startswith("the disk is full: no session log can be started in ")
    assert said.endswith("free space and run agent again")
    sessions = [p for p in (project / ".transcripts").iterdir() if p.is_dir()]
    assert sessions == []


@pytest.mark.e2e
def test_agent_on_a_disk_that_fills_mid_session(tmp_path: Path) -> None:
    """`agent -p` whose own command fills the project's disk: exit 1 with one line naming the
    session; the log parses; once the space is freed, `--resume` goes on with what was said."""
    project = tmp_path / "project"
    mount_small_disk(project, "2m")
    try:
        with FakeModelServer() as server:
            command = "head -c 3M /dev/zero > big.bin; echo filled"
            fill_it = ToolCallSpec("bash", {"command": command}, id="toolu_fill")
            server.queue(Reply("Filling the disk.", tool_calls=[fill_it]))
            server.default = Reply("DONE")
            env = agent_env(tmp_path / "home", server)
            first = run_agent(["-p", "PROMPT-BEFORE-THE-DISK-FILLED", "--yes"], project, env)
        assert first.returncode == 1, first.stderr
        said = first.stderr.strip().splitlines()
        assert len(said) == 1 and said[0].startswith("agent: the disk is full: the session log "), said
        assert "Traceback" not in first.stderr and "internal error" not in first.stderr
        (log,) = (project / ".transcripts").glob("*/session.jsonl")
        session_id = log.parent.name
        assert f"`agent --resume {session_id}`" in said[0]
        assert _lines_parse(log)

        (project / "big.bin").unlink()
        with FakeModelServer() as server:
            server.default = Reply("RESUMED-FINE")
            env = agent_env(tmp_path / "home", server)
            second = run_agent(["--resume", session_id, "-p", "go on"], project, env)
            sent = json.dumps([q.body for q in server.requests])
        assert second.returncode == 0, second.stderr
        assert "RESUMED-FINE" in second.stdout
        assert "PROMPT-BEFORE-THE-DISK-FILLED" in sent and "toolu_fill" in sent
        assert _lines_parse(log)
    finally:
        subprocess.run(["umount", "-l", str(project)], check=False)


def test_an_archive_file_the_disk_cannot_hold_is_not_left_half_written(small_disk: Path) -> None:
    """A cut tool output that does not fit: the write fails, and no stub stays for recall to find."""
    from agent_cli.store.archive import Archive

    archive = Archive(small_disk / "session")
    fill(small_disk / "filler", leave=16 * 1024)
    with pytest.raises(OSError):
        archive.write_output("toolu_big", "line of output\n" * 40_000)
    assert archive.files() == []
    assert not list((small_disk / "session").glob("output-*"))


def test_a_full_disk_before_the_first_session_is_said_as_such_and_leaves_no_empty_gitignore(
    small_disk: Path,
) -> None:
    from agent_cli.store.layout import ensure_transcripts_dir

    fill(small_disk / "filler")
    with pytest.raises(DiskFullError, match="the disk is full: no session log can be started"):
        ensure_transcripts_dir(small_disk)
    assert not (small_disk / ".transcripts" / ".gitignore").exists()

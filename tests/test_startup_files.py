"""What start-up reads that is not the config: `.agent/pins.md` (a project file) and the user's own
state files (the session key, the project approvals, the input history).

`.agent/pins.md` is read as `AGENTS.md` is: a regular file inside the project, capped; a link to
`/dev/zero`, a FIFO or 23 MB is not read, and one line says so. A FIFO in place of a state file
must not hang start-up either. The helpers read in a thread joined with a generous bound, so a
hang fails the test instead of hanging the suite; the end-to-end runs have a generous timeout.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from agent_cli.core.errors import CommandError
from agent_cli.prompt.pins import MAX_PINS_BYTES, PROJECT_PINS, PinBoard, read_project_pins
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.store.signing import KEY_FILE, SessionSigner
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.reliability.harness import agent, env_for, project_in

T = TypeVar("T")
HUGE = 23_000_000


def _within(call: Callable[[], T], seconds: float = 60.0) -> T:
    """`call()`, which must return: a hang fails the test (the thread is left blocked in a FIFO)."""
    box: list[T] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"did not return within {seconds:g} s (blocked?)"
    return box[0]


def _plant(project: Path, how: str) -> None:
    path = project / PROJECT_PINS
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "fifo":
        os.mkfifo(path)
    else:
        line = b"- PIN-FROM-THE-FILE " + b"x" * 100 + b"\n"
        path.write_bytes(line * (HUGE // len(line)))


REFUSED = {"dev-zero": "leads outside the project", "fifo": "is a FIFO", "huge": "is larger than 64 KiB"}


@pytest.mark.parametrize("how", sorted(REFUSED))
def test_pins_md_that_is_not_a_small_file_inside_is_not_read(tmp_path: Path, how: str) -> None:
    _plant(tmp_path, how)
    found = _within(lambda: read_project_pins(tmp_path))  # before: /dev/zero grew without end, FIFO hung
    assert found.pins == [] and found.notice is not None
    assert found.notice.startswith(".agent/pins.md was not read: it ") and REFUSED[how] in found.notice
    board = _within(lambda: PinBoard(tmp_path, ["own"]))
    assert [p.text for p in board.pins] == ["own"] and board.notice == found.notice


def test_a_project_pin_is_not_saved_over_a_file_that_was_refused(tmp_path: Path) -> None:
    _plant(tmp_path, "huge")
    before = (tmp_path / PROJECT_PINS).stat().st_size
    board = PinBoard(tmp_path)
    with pytest.raises(CommandError, match="was not read: it is larger than"):
        board.add("a new rule", project=True)
    assert (tmp_path / PROJECT_PINS).stat().st_size == before and board.pins == ()


def test_pins_md_at_the_cap_is_read(tmp_path: Path) -> None:
    line = "- rule " + "y" * 90 + "\n"
    text = "# Pins\n" + line * ((MAX_PINS_BYTES - 7) // len(line))
    (tmp_path / ".agent").mkdir()
    (tmp_path / PROJECT_PINS).write_text(text)
    found = read_project_pins(tmp_path)
    assert found.notice is None and len(found.pins) == text.count("- rule")


def test_the_session_key_as_a_fifo_leaves_sessions_unsigned_without_hanging(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "agent-cli").mkdir(parents=True)
    os.mkfifo(state / "agent-cli" / KEY_FILE)
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(state)}
    signer = _within(lambda: SessionSigner.for_user(env))  # before: blocked in open() for ever
    assert signer.new_signature("s", tmp_path) is None and "not a regular file" in signer.problem


def test_the_approvals_file_as_a_fifo_reads_as_none(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "approvals.json")
    approvals = ProjectApprovals(tmp_path / "approvals.json", tmp_path)
    assert _within(lambda: approvals.approved("mcp", "x", {"command": "x"})) is False


def test_the_input_history_as_a_fifo_is_kept_in_memory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prompt_toolkit.history import InMemoryHistory

    from agent_cli.ui.prompt_input import input_history

    (tmp_path / "agent-cli").mkdir()
    os.mkfifo(tmp_path / "agent-cli" / "history")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert isinstance(_within(lambda: input_history(lambda s: s)), InMemoryHistory)


# ---- end to end: `agent -p` starts, finishes, and says what it refused in one line -------------


def _run(where: Path, project: Path) -> tuple[str, list[str]]:
    with FakeModelServer() as server:
        server.default = Reply("DONE")
        proc = agent(("-p", "hi"), project, env_for(where, server), timeout=300)
        sent = [str(q.body) for q in server.requests]
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0 and "Traceback" not in err, err[-400:]
    assert sent, "nothing was sent"
    return err, sent


@pytest.mark.parametrize("how", sorted(REFUSED))
def test_agent_starts_with_a_hostile_pins_md_and_says_so_once(tmp_path: Path, how: str) -> None:
    project = project_in(tmp_path, "")
    _plant(project, how)
    err, sent = _run(tmp_path, project)
    said = [line for line in err.splitlines() if "pins.md" in line]
    assert len(said) == 1 and REFUSED[how] in said[0], err
    assert not any("PIN-FROM-THE-FILE" in body for body in sent)


def test_agent_starts_with_the_session_key_a_fifo_and_says_so_once(tmp_path: Path) -> None:
    project = project_in(tmp_path, "")
    key = tmp_path / "home" / ".state" / "agent-cli" / KEY_FILE
    key.parent.mkdir(parents=True)
    os.mkfifo(key)
    err, _ = _run(tmp_path, project)
    said = [line for line in err.splitlines() if "session key" in line]
    assert len(said) == 1 and "not a regular file" in said[0], err

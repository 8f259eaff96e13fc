"""Unexpected errors become one line for the user and a private traceback log."""

from __future__ import annotations

import errno
import stat
from pathlib import Path

from agent_cli.store.crash_log import internal_error
from tests.e2e import agent_env, run_agent


def test_internal_error_is_one_line_and_the_traceback_is_logged_privately(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    try:
        raise ValueError("something broke\nsecond line sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
    except ValueError as exc:
        line = internal_error(exc, env)
    assert "\n" not in line and line.startswith("internal error: ValueError: something broke")
    log = tmp_path / "state" / "agent-cli" / "crash.log"
    assert str(log) in line
    text = log.read_text()
    assert "Traceback" in text and "abcdefghijklmnopqrstuvwxyz0123456789" not in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_an_unwritable_transcripts_dir_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".transcripts").write_text("a file where the directory should be")
    env = agent_env(tmp_path / "home")
    env["ANTHROPIC_API_KEY"] = "sk-ant-test-key-000000"
    r = run_agent(["-p", "hi"], project, env, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("agent: cannot open the session log") and len(r.stderr.splitlines()) == 1


def test_a_full_disk_is_never_called_an_internal_error(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    line = internal_error(OSError(errno.ENOSPC, "No space left on device", "/p/.transcripts/s/out.txt"), env)
    assert line == "the disk is full: cannot write /p/.transcripts/s/out.txt; free space and try again"
    quota = internal_error(OSError(errno.EDQUOT, "Disk quota exceeded"), env)
    assert quota == "the disk quota is used up; free space and try again"

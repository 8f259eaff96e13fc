"""Unexpected errors become one line for the user and a private traceback log."""

from __future__ import annotations

import errno
import stat
from pathlib import Path

import pytest

from agent_cli.core.requests import ToolSpec
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


class _Broken:
    """A tool with a bug: its run raises something no tool should."""

    spec = ToolSpec(name="broken", description="fails", input_schema={"type": "object", "properties": {}})
    approval = "never"

    def run(self, args: object, ctx: object) -> object:
        return {}["no such key in a tool's own table"]


def test_a_tools_crash_is_an_error_result_and_its_traceback_reaches_the_crash_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.tools.base import ToolContext, ToolRegistry

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    registry = ToolRegistry([_Broken()])  # type: ignore[list-item]
    out = registry.run("broken", {}, ToolContext(root=tmp_path))
    assert out.is_error and out.content.startswith("Error: broken failed: KeyError:")
    assert "its traceback is in the crash log" in out.content
    log = tmp_path / "state" / "agent-cli" / "crash.log"
    text = log.read_text()  # before: no crash log at all, the traceback was lost
    assert "Traceback" in text and "in run" in text and "no such key in a tool's own table" in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600

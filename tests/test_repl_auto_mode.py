"""Auto mode in the REPL on a real terminal (tmux on a private socket, against the fake model
server): Shift+Tab three times reaches auto mode and the toolbar says so; with the sandbox on, a
command writing in the project then runs without a question; with the sandbox off, the toolbar and
one line say that auto mode asks, and the command is asked. A command the sandbox refused, run
again by the model, is asked with `[o]`, and the user's `o` runs it outside."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from agent_cli.sandbox.probe import find_bwrap, probe
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_cmd, agent_env
from tests.screen import Screen, have_tmux, python_path_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not have_tmux(), reason="tmux drives the terminal"),
]
VERDICT = probe(find_bwrap(os.environ.get("PATH")))
SHIFT_TAB = "\x1b[Z"


def _to_auto(screen: Screen) -> None:
    for label in ("accept edits", "plan mode", "auto mode"):
        screen.send(SHIFT_TAB)
        assert screen.wait_for(f"{label}"), screen.text()


@pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")
def test_shift_tab_reaches_auto_and_a_project_command_runs_unasked(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake_server.queue(
        Reply("Making it.", tool_calls=[ToolCallSpec("bash", {"command": "echo in > made.txt"})]),
        Reply("Made it."),
    )
    env = python_path_env(agent_env(tmp_path / "home", fake_server))
    with Screen(agent_cmd("--sandbox", "workspace-write"), cwd=project, env=env, width=120) as screen:
        assert screen.wait_for("compact"), screen.text()
        _to_auto(screen)
        assert screen.wait_for("⏵⏵ auto mode (shift+tab)"), screen.text()
        screen.send("make the file", "Enter")
        assert screen.wait_for("Made it."), screen.text()
        shown = screen.text()
        screen.send("/exit", "Enter")
        screen.wait_exit()
    assert "[y]es" not in shown, "auto mode in the sandbox: no question for a project command"
    assert (project / "made.txt").read_text() == "in\n"


def test_auto_without_a_sandbox_says_so_once_and_asks(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake_server.queue(
        Reply("Making it.", tool_calls=[ToolCallSpec("bash", {"command": "echo in > made.txt"})]),
        Reply("Not made."),
    )
    env = python_path_env(agent_env(tmp_path / "home", fake_server))
    with Screen(agent_cmd("--sandbox", "off"), cwd=project, env=env, width=120) as screen:
        assert screen.wait_for("compact"), screen.text()
        _to_auto(screen)
        assert screen.wait_for("auto mode: no sandbox, so it asks"), screen.text()
        assert screen.wait_for("auto mode runs commands unasked only inside the sandbox"), screen.text()
        screen.send("make the file", "Enter")
        assert screen.wait_for("[y]es"), screen.text()
        screen.send("c")
        assert screen.wait_for("Not made."), screen.text()
        shown = screen.text()
        screen.send("/exit", "Enter")
        screen.wait_exit()
    assert shown.count("auto mode runs commands unasked") == 1
    assert not (project / "made.txt").exists()


@pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")
def test_a_refused_command_run_again_is_asked_and_only_the_users_o_runs_it_outside(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    outside = Path(tempfile.mkdtemp(prefix="agent-outside-", dir="/var/tmp"))  # not the sandbox's /tmp
    escape = f"echo x > {outside}/escaped.txt"
    try:
        fake_server.queue(
            Reply("Writing.", tool_calls=[ToolCallSpec("bash", {"command": escape})]),
            Reply("Again.", tool_calls=[ToolCallSpec("bash", {"command": escape})]),
            Reply("Wrote it."),
        )
        env = python_path_env(agent_env(tmp_path / "home", fake_server))
        cmd = agent_cmd("--sandbox", "workspace-write", "--permission-mode", "auto")
        with Screen(cmd, cwd=project, env=env, width=120) as screen:
            assert screen.wait_for("auto mode (shift+tab)"), screen.text()
            screen.send("write it outside", "Enter")
            assert screen.wait_for("[o] approve outside the sandbox"), screen.text()
            shown = screen.text()
            assert not (outside / "escaped.txt").exists(), "the first run was refused by the sandbox"
            screen.send("o")
            assert screen.wait_for("Wrote it."), screen.text()
            screen.send("/exit", "Enter")
            screen.wait_exit()
        assert "the sandbox refused this command before" in shown
        assert (outside / "escaped.txt").read_text() == "x\n", "the user's [o]: run outside"
    finally:
        shutil.rmtree(outside, ignore_errors=True)

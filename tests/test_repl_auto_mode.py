"""Auto mode in the REPL on a real terminal (tmux on a private socket, against the fake model
server): Shift+Tab three times reaches auto mode and the toolbar says so; with the sandbox on, a
command writing in the project then runs without a question; with the sandbox off, the toolbar and
one line say that auto mode asks, and the command is asked."""

from __future__ import annotations

import os
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

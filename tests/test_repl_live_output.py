"""A command's output live in the REPL, through a pseudo-terminal against the fake model server:
while bash runs, its last lines and the seconds so far are on the screen; after it, one line says
how it ended (`exit 0 · 2.4s · 36 B`); `/last` and Ctrl+O print its whole output; Ctrl-C during
a live command still kills it and ends the turn."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env
from tests.reliability.procs import expect, new_tag, processes, spawn_repl, wait_for

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

SIX_LINES = "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.4; done"
ELAPSED = re.compile(r"bash for i in 1 2 3 4 5 6.* · (\d+\.\d)s")


def start(tmp_path: Path, server: FakeModelServer) -> Any:
    project = tmp_path / "project"
    project.mkdir()
    env = agent_env(tmp_path / "home", server)
    env.pop("NO_COLOR", None)  # the real terminal path: Live, spinner
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    expect(child, "auto-compact at ")
    return child


def test_a_command_s_output_shows_live_then_its_end_line_and_last_prints_it_all(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(
        Reply("Counting.", tool_calls=[ToolCallSpec("bash", {"command": SIX_LINES})]),
        Reply("Counted to six."),
    )
    child = start(tmp_path, fake_server)
    try:
        child.send("count to six\r")
        expect(child, r"allow\? \[y\]es")
        child.send("y")
        before = expect(child, "line2")
        seen = expect(child, ELAPSED)  # the spinner counts the seconds, the command still running
        assert "exit 0" not in before + seen, "the end line came before the command ended"
        assert float(child.match.group(1)) < 2.4, "the figure was drawn while the command ran"
        live = expect(child, r"exit 0 · \d+\.\ds · 36 B")
        assert "line5" in live, "its lines kept showing as they came"
        expect(child, "Counted to six")

        child.send("/last\r")
        shown = expect(child, r"\[exit code 0\]")
        assert all(f"line{i}" in shown.split("/last", 1)[-1] for i in range(1, 7))
        expect(child, "auto-compact at ")

        child.send("\x0f")  # Ctrl+O at the prompt
        shown = expect(child, r"\[exit code 0\]")
        assert all(f"line{i}" in shown for i in range(1, 7))
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_ctrl_c_during_a_live_command_kills_it_and_ends_the_turn(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    tag = new_tag()
    command = f'echo started; sleep {tag}; echo fin""ished'  # the screen shows "finished" only if it ran
    fake_server.queue(Reply("Waiting.", tool_calls=[ToolCallSpec("bash", {"command": command})]))
    child = start(tmp_path, fake_server)
    try:
        child.send("wait a while\r")
        expect(child, r"allow\? \[y\]es")
        child.send("y")
        expect(child, "started")
        expect(child, r"sleep \d+.* · \d+\.\ds")  # the live view is up: the command runs
        assert processes("sleep", tag), "the command is running"
        child.send("\x03")
        after = expect(child, "interrupted by the user")
        assert re.search(r"cancelled · \d+\.\ds · 8 B", after), after
        assert wait_for(lambda: not processes("sleep", tag), 60), "the command outlived its cancel"
        child.send("/last\r")
        shown = expect(child, "the rest was not kept")
        assert "started" in shown and "finished" not in shown
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)

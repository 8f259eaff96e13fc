"""A project's hooks in the REPL, through a pseudo-terminal: asked for once, then run at start and exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.e2e import agent_env
from tests.reliability.procs import ANSI, expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER = {"default": Reply("Hello from the model.")}


def test_project_hooks_are_asked_for_once_then_run_at_start_and_exit(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    marker = tmp_path / "marker"
    (project / ".agent" / "config.toml").write_text(
        f'[[hooks.SessionStart]]\ncommand = "echo started >> {marker}; echo START-CONTEXT"\n\n'
        f'[[hooks.SessionEnd]]\ncommand = "echo ended >> {marker}"\n'
    )
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    try:
        expect(child, "Run them in this project")
        question = ANSI.sub("", child.before)
        assert f"echo started >> {marker}; echo START-CONTEXT" in question.replace("\r\n", "")
        assert not marker.exists(), "nothing runs before the answer"
        child.send("y")
        expect(child, "auto-compact at ")
        child.send("hi\r")
        expect(child, "Hello from the model")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert marker.read_text() == "started\nended\n"
    first = fake_server.requests[0].body["messages"][0]["content"]
    assert [b["text"] for b in first] == ["hi", "START-CONTEXT"]

    again = spawn_repl(project, env)
    try:
        expect(again, "auto-compact at ")
        assert "Run them" not in ANSI.sub("", again.before), "approved once for this project"
        again.send("/exit\r")
        again.expect(pexpect.EOF)
    finally:
        again.close(force=True)
    assert marker.read_text() == "started\nended\nstarted\nended\n"

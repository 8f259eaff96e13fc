"""Approval modes as a Claude Code user switches them, through a pseudo-terminal against the fake
server: Shift+Tab once is accept edits (shown in the toolbar; a write runs without a question),
twice is plan (a command is refused without a question, and the refusal reaches the model), three
times auto, four times is back to asking. Headless, `--permission-mode plan` says so in the init
event and refuses a write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.modes import PLAN_REFUSAL
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import MODELS, agent_env, run_agent, stream_events, tool_results
from tests.reliability.procs import expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER: dict[str, Any] = {}
SHIFT_TAB = "\x1b[Z"


def test_shift_tab_cycles_accept_edits_plan_and_ask(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake_server.queue(
        Reply("Writing.", tool_calls=[ToolCallSpec("write_file", {"path": "notes.txt", "content": "hi\n"})]),
        Reply("Written."),
        Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": "touch by-bash"})]),
        Reply("Here is my plan instead."),
        Reply("Running again.", tool_calls=[ToolCallSpec("bash", {"command": "touch by-bash"})]),
        Reply("never sent"),
    )
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    try:
        expect(child, "auto-compact at ")
        child.send(SHIFT_TAB)
        expect(child, "accept edits")
        child.send("write the notes\r")
        shown = expect(child, "Written")
        assert "[y]es" not in shown, "accept edits: no question for a write"
        assert (project / "notes.txt").read_text() == "hi\n"
        child.send(SHIFT_TAB)
        expect(child, "plan mode")
        child.send("make a file with bash\r")
        shown = expect(child, "Here is my plan instead")
        assert "[y]es" not in shown, "plan: refused without a question"
        child.send(SHIFT_TAB)
        expect(child, "auto mode")
        child.send(SHIFT_TAB)
        child.send("now run it\r")
        expect(child, r"\[y\]es")  # back to asking
        child.send("n")
        expect(child, "what should it do instead")
        child.send("\r")
        expect(child, "stopped the turn")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (project / "by-bash").exists()
    refused = [content for content, error in tool_results(fake_server.requests).values() if error]
    assert any(PLAN_REFUSAL in content for content in refused), "the model read why"


def test_headless_plan_mode_says_so_and_refuses_a_write(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with FakeModelServer() as server:
        server.queue(
            Reply("Writing.", tool_calls=[ToolCallSpec("write_file", {"path": "a.txt", "content": "x"})]),
            Reply("A plan, then."),
        )
        args = ["-p", "write a.txt", "--model", MODELS["anthropic"], "--output-format", "stream-json"]
        done = run_agent([*args, "--permission-mode", "plan"], project, agent_env(tmp_path / "home", server))
        results = tool_results(server.requests)
    assert done.returncode == 0, done.stderr
    events = stream_events(done.stdout)
    assert events[0]["permission_mode"] == "plan"
    assert events[-1]["permission_denials"][0]["tool_name"] == "write_file"
    assert not (project / "a.txt").exists()
    assert any(PLAN_REFUSAL in content for content, _ in results.values())

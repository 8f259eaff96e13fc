"""A sub-agent in the REPL, through a pseudo-terminal against the fake model server: the child's
command is asked as the session's own are, its progress is one line under the task call (what it
runs, its tokens), Esc stops it (its command killed) and the parent's turn, the session goes on,
and /cost shows the child's spend."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from tests.e2e import agent_env
from tests.reliability.procs import expect, new_tag, processes, spawn_repl, wait_for

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e


def first_user(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    return first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)


def test_a_childs_progress_line_esc_stops_it_and_cost_shows_it(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    tag = f"4{new_tag()}.5"

    def answer(request: RecordedRequest) -> Reply:
        if "REPL-CHILD" in first_user(request):
            return Reply("Waiting.", tool_calls=[ToolCallSpec("bash", {"command": f"sleep {tag}"})])
        if len(request.body["messages"]) == 1:
            task = {"description": "scan the tree", "prompt": "REPL-CHILD wait for me"}
            return Reply("Delegating.", tool_calls=[ToolCallSpec("task", task)])
        return Reply("Parent still here.")

    fake_server.responder = answer
    project = tmp_path / "project"
    project.mkdir()
    env = agent_env(tmp_path / "home", fake_server)
    env.pop("NO_COLOR", None)  # the real terminal path: Live, spinner and the tail under it
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    try:
        expect(child, "auto-compact at ")
        child.send("delegate it\r")
        expect(child, r"\[y\]es")  # the child's command is asked, as the session's are
        child.send("y")
        assert wait_for(lambda: processes("sleep", tag), 60), "the child's command runs"
        seen = expect(child, r"tokens") + "tokens"  # its one progress line
        assert re.search(rf"scan the tree · bash sleep {tag} · [\d,]+ tokens", seen), seen[-600:]
        child.send("\x1b")
        expect(child, "interrupted")
        assert wait_for(lambda: not processes("sleep", tag), 60), "Esc killed the child's command"
        child.send("are you there?\r")
        expect(child, "Parent still here")
        child.send("/cost\r")
        expect(child, "of which, sub-agents:")
        expect(child, "task1 scan the tree")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    kinds = ["child" if "REPL-CHILD" in first_user(r) else "parent" for r in fake_server.requests]
    assert kinds == ["parent", "child", "parent"], "the stopped child asked nothing more"

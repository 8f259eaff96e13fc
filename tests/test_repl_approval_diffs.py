"""Approvals as a Claude Code user expects them, through a pseudo-terminal against the fake server:
an edit's question shows the coloured diff against the file as it is (a long one cut, `v` shows all
of it), the approved edit's diff is shown again after it, and "no" stops the turn and asks what to
do instead (Enter alone: the turn stops; words go to the model as the call's error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env
from tests.reliability.procs import expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

OLD = "".join(f"old line {i:02d}\n" for i in range(30))
NEW = "".join(f"new line {i:02d}\n" for i in range(30))
FAKE_SERVER: dict[str, Any] = {}


def start(tmp_path: Path, server: FakeModelServer) -> tuple[Any, Path]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "big.txt").write_text("head\n" + OLD + "tail\n")
    env = agent_env(tmp_path / "home", server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    expect(child, "auto-compact at ")
    return child, project


def test_an_edit_shows_its_diff_before_and_after_and_yes_applies_it(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    edit = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    fake_server.queue(
        Reply("Fixing.", tool_calls=[ToolCallSpec("edit_file", edit)]), Reply("Fixed the sign.")
    )
    child, project = start(tmp_path, fake_server)
    try:
        child.send("fix add\r")
        question = expect(child, r"\[y\]es")
        assert (
            "-    return a - b" in question and "+    return a + b" in question and "+1 -1 lines" in question
        )
        assert "more diff lines" not in question, "a short diff is shown whole"
        child.send("y")
        after = expect(child, "Fixed the sign")
        assert after.count("+    return a + b") >= 1, "the diff again, after the edit"
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_a_long_diff_is_cut_v_shows_it_all_and_no_stops_the_turn(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    edit = {"path": "big.txt", "old_string": OLD, "new_string": NEW}
    fake_server.queue(Reply("Rewriting.", tool_calls=[ToolCallSpec("edit_file", edit)]), Reply("never sent"))
    child, project = start(tmp_path, fake_server)
    try:
        child.send("rewrite big.txt\r")
        shown = expect(child, r"\[v\]iew diff")
        assert "more diff lines: v shows all" in shown and "+new line 29" not in shown
        child.send("v")
        expect(child, r"\+new line 29")
        expect(child, r"\[y\]es")
        child.send("n")
        expect(child, "what should it do instead")
        child.send("\r")
        expect(child, "stopped the turn")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (project / "big.txt").read_text() == "head\n" + OLD + "tail\n"
    assert len([r for r in fake_server.requests if r.api != "models"]) == 1, "no request after the refusal"

"""Keys as a Claude Code user presses them, in the REPL through a pseudo-terminal against the fake
server: Esc cancels a running turn (its command killed, the session kept), after an approval too;
what is typed during a turn is the next input line's text; a backslash then Enter adds a line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, Stall, ToolCallSpec
from tests.e2e import agent_env
from tests.e2e import user_texts as texts
from tests.reliability.procs import expect, new_tag, processes, spawn_repl, wait_for

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER: dict[str, Any] = {}


def start(tmp_path: Path, server: FakeModelServer) -> Any:
    project = tmp_path / "project"
    project.mkdir()
    env = agent_env(tmp_path / "home", server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    expect(child, "auto-compact at ")
    return child


def test_esc_cancels_a_running_command_and_the_session_goes_on(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    tag = f"3{new_tag()}.5"
    fake_server.queue(
        Reply("Waiting.", tool_calls=[ToolCallSpec("bash", {"command": f"sleep {tag}"})]),
        Reply("Still here."),
    )
    child = start(tmp_path, fake_server)
    try:
        child.send("wait a while\r")
        expect(child, r"\[y\]es")
        child.send("y")
        assert wait_for(lambda: processes("sleep", tag), 60), "the command runs"
        child.send("typed ahead")
        child.send("\x1b")
        expect(child, "interrupted")
        assert wait_for(lambda: not processes("sleep", tag), 60), "Esc killed the command"
        expect(child, "typed ahead")  # the next input line starts with what was typed meanwhile
        child.send("\x15are you there?\r")  # Ctrl-U clears it; a new message
        expect(child, "Still here")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert len(fake_server.requests) == 2, "the cancelled turn asked nothing more of the model"
    last = texts(fake_server.requests[-1])
    assert last[-1] == "are you there?" and "wait a while" in last, "the session was kept"


def test_a_backslash_then_enter_adds_a_line(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.queue(Reply("Two lines."))
    child = start(tmp_path, fake_server)
    try:
        child.send("first line \\")
        child.send("\r")
        child.send("second line\r")
        expect(child, "Two lines")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert texts(fake_server.requests[0])[-1] == "first line \nsecond line"


def test_esc_at_the_question_cancels_the_turn_and_nothing_runs(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(
        Reply("Removing.", tool_calls=[ToolCallSpec("bash", {"command": "touch made-by-the-model"})]),
        Reply("Fine."),
    )
    child = start(tmp_path, fake_server)
    try:
        child.send("make a file\r")
        expect(child, r"\[y\]es")
        child.send("\x1b")
        expect(child, "interrupted")
        child.send("hello\r")
        expect(child, "Fine")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (tmp_path / "project" / "made-by-the-model").exists(), "Esc is no yes"
    assert len(fake_server.requests) == 2


def test_esc_cancels_a_reply_that_stopped_arriving(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.queue(Stall(seconds=60), Reply("Back again."))
    child = start(tmp_path, fake_server)
    try:
        child.send("tell me a story\r")
        assert wait_for(lambda: len(fake_server.requests) == 1, 60)
        child.send("\x1b")
        expect(child, "interrupted")
        child.send("again\r")
        expect(child, "Back again")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert texts(fake_server.requests[-1])[-1] == "again"


def test_esc_stops_a_bang_command(tmp_path: Path, fake_server: FakeModelServer) -> None:
    tag = f"4{new_tag()}.5"
    child = start(tmp_path, fake_server)
    try:
        child.send(f"!sleep {tag}\r")
        assert wait_for(lambda: processes("sleep", tag), 60), "the command runs"
        child.send("\x1b")
        expect(child, "interrupted")
        assert wait_for(lambda: not processes("sleep", tag), 60), "Esc killed it"
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert fake_server.requests == []


def test_esc_then_a_slash_command_runs_the_command(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """Esc then `/` at once is Meta-/ to prompt_toolkit (complete): the `/` was swallowed and `/cost`
    went to the model as `cost`, a paid request. Esc then `/` types `/`, however fast."""
    fake_server.queue(Reply("Should not be asked."))
    child = start(tmp_path, fake_server)
    try:
        child.send("\x1b/cost\r")  # in one write: as fast as keys can come
        expect(child, "no requests yet in this session")
        child.send("\x1b")
        child.send("/cost\r")
        expect(child, "no requests yet in this session")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert fake_server.requests == [], "the command ran here; nothing went to the model"

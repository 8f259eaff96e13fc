"""The lists to choose from, through a pseudo-terminal against the fake server, as a user drives them:
`/model` with no name lists the model table with the current model marked, and Down then Enter
switches (the next request names the new model); Esc leaves the list and changes nothing. `/resume`
with no id lists the project's sessions (first prompt, date, size, model), and choosing one resumes
it (its messages are in the next request)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.core.messages import Message
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from agent_cli.ui.reports import model_choices
from tests.e2e import agent_env, user_texts
from tests.reliability.procs import expect

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER: dict[str, Any] = {}
DOWN, ESC = "\x1b[B", "\x1b"
MODEL = "claude-sonnet-5-5"


def spawn(project: Path, env: dict[str, str]) -> Any:
    return pexpect.spawn(
        sys.executable,
        ["-c", "from agent_cli.cli import main; main()", "--model", MODEL],
        cwd=str(project),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=90,
    )


def test_model_list_switches_with_down_and_enter_and_esc_leaves_it(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    names = model_choices("anthropic", MODEL)
    after = names[names.index(MODEL) + 1]
    project = tmp_path / "project"
    project.mkdir()
    fake_server.queue(Reply("Hello from the next model."))
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    child = spawn(project, env)
    try:
        expect(child, "auto-compact at ")
        child.send("/model\r")
        expect(child, f"  {after} ")
        child.send(ESC)
        expect(child, f"model unchanged: {MODEL}")
        child.send("/model\r")
        shown = expect(child, f"  {after} ")
        assert f"* {MODEL} " in shown
        child.send(DOWN)
        child.send("\r")
        expect(child, f"model: {after} ")
        child.send("hello\r")
        expect(child, "Hello from the next model")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert [r.body["model"] for r in fake_server.requests] == [after]


def test_resume_list_resumes_the_session_chosen(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with SessionLog.create(project, redactor=Redactor([]), meta={"model": "claude-opus-4-1"}) as other:
        other.log_message(Message.user("the older question"))
        other.log_message(Message.assistant("the older answer"))
    fake_server.queue(Reply("First answer."), Reply("Welcome back."))
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    child = spawn(project, env)
    try:
        expect(child, "auto-compact at ")
        child.send("a new question\r")
        expect(child, "First answer")
        child.send("/resume\r")
        shown = expect(child, "the older question")
        assert "resume which session" in shown and "a new question" in shown
        child.send(DOWN)  # this session is first (newest); the older one under it
        child.send("\r")
        expect(child, r"\[y\]es")  # a log this agent did not write: asked first
        child.send("y")
        expect(child, f"resumed session {other.id}: 2 messages in context")
        child.send("go on\r")
        expect(child, "Welcome back")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert user_texts(fake_server.requests[-1])[-1] == "go on"
    assert "the older question" in user_texts(fake_server.requests[-1])

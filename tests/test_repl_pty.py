"""The REPL through a pseudo-terminal, as a user drives it: `agent` against the fake model server.

Sends a message and sees the answer, pastes two lines as one message, runs
/compact and sees the panel and the span file under .transcripts/<session>/,
runs /context and sees percentages, tries Ctrl-C at an empty prompt, and
leaves with /exit. Ctrl-C while waiting for the model and while a tool runs
cancels the turn, and the next turn works.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec, last_user_text
from tests.e2e import agent_env

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

SUMMARY = "## Goal and requests\nAnswer the question about the number.\n## Work state\nDone: answered 42."
CPR_REQUEST = re.compile(re.escape("\x1b[6n"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


RELEASE = threading.Event()  # a slow answer waits for this (or gives up after a while)


def respond(request: RecordedRequest) -> Reply:
    last = last_user_text(request)
    if "Stop here and write no tool calls" in last:
        return Reply(SUMMARY)
    # An interrupted prompt stays in the conversation: the next one is sent after it.
    if last.endswith("take your time"):
        RELEASE.wait(120)  # the model keeps the user waiting; Ctrl-C comes first
        return Reply("too late")
    if last.endswith("run the sleeper"):
        return Reply("Sleeping.", tool_calls=[ToolCallSpec("bash", {"command": "sleep 30"})])
    if last.endswith("think it through"):
        call = ToolCallSpec("read_file", {"path": "app.py"})
        return Reply("", tool_calls=[call], thinking="I will look at app.py before answering.")
    if _answers_read_of_app(request):
        return Reply("It prints a greeting.", thinking="app.py only prints hi, nothing else to check.")
    return Reply("The answer is **42**.\n\nAsk me anything else.")


def _answers_read_of_app(request: RecordedRequest) -> bool:
    """The request answers the read_file call on app.py (the last message is its result)."""
    messages = request.body.get("messages") or []
    if len(messages) < 2 or not isinstance(messages[-1].get("content"), list):
        return False
    answered = any(b.get("type") == "tool_result" for b in messages[-1]["content"])
    called = messages[-2].get("content")
    reads_app = isinstance(called, list) and any(
        b.get("type") == "tool_use" and b.get("input") == {"path": "app.py"} for b in called
    )
    return answered and reads_app


FAKE_SERVER = {"responder": respond}  # the conftest fixture's server


@pytest.fixture(autouse=True)
def release() -> Iterator[None]:
    """A slow answer waits for its test's Ctrl-C, and no longer than the test."""
    RELEASE.clear()
    yield
    RELEASE.set()


def spawn(tmp_path: Path, fake_server: FakeModelServer) -> tuple[pexpect.spawn, Path]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    env = agent_env(tmp_path / "home", fake_server)
    env.pop("NO_COLOR", None)  # the real terminal path: Markdown, Live, spinner
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from agent_cli.cli import main; main()"],
        cwd=str(project),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=90,
    )
    return child, project


def expect(child: pexpect.spawn, pattern: object) -> None:
    """`child.expect(pattern)`, answering the cursor-position requests a real terminal would answer.

    prompt_toolkit asks where the cursor is (ESC [6n) before it draws the
    bottom toolbar; without an answer there is no toolbar.
    """
    while child.expect([CPR_REQUEST, pattern]) == 0:
        child.send("\x1b[1;1R")


def test_a_session_through_the_terminal(tmp_path: Path, fake_server: FakeModelServer) -> None:
    child, project = spawn(tmp_path, fake_server)
    try:
        expect(child, "auto-compact at ")  # the toolbar: the prompt is on the screen
        child.send("what is the answer?\r")
        expect(child, "Ask me anything else")
        assert "The answer is" in ANSI.sub("", child.before)
        expect(child, r"context [0-9,]+ / [0-9,]+ \(\d+%\)")  # the toolbar now counts the conversation

        # A bracketed paste of two lines is one message; it does not send on its newline.
        child.send("\x1b[200~first pasted line\nsecond pasted line\x1b[201~")
        child.send("\r")
        expect(child, "Ask me anything else")
        assert last_user_text(fake_server.requests[-1]) == "first pasted line\nsecond pasted line"

        child.send("/compact the number\r")
        expect(child, "context compacted")
        expect(child, "/record reads the record")
        child.send("/record\r")
        expect(child, "Answer the question about the number")  # the record: /record shows it
        spans = list((project / ".transcripts").glob("*/span-*.jsonl"))
        assert len(spans) == 1 and spans[0].stat().st_size > 0

        child.send("/context\r")
        expect(child, "auto-compaction fires at")
        table = ANSI.sub("", child.before)
        for row in ("system prompt", "tool specs", "condensed records", "messages", "free", "used"):
            assert re.search(rf"{row}\s+[\d,]+\s+\d+\.\d%", table), row

        child.send("\x03")  # Ctrl-C at an empty prompt: a hint, not an exit
        expect(child, "Ctrl-C again")
        child.send("/exit\r")
        expect(child, "resume with: agent --resume")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    history = tmp_path / "home" / ".state" / "agent-cli" / "history"
    assert "what is the answer?" in history.read_text()
    assert history.stat().st_mode & 0o077 == 0


def test_escape_enter_adds_a_line_and_ctrl_d_leaves(tmp_path: Path, fake_server: FakeModelServer) -> None:
    child, _ = spawn(tmp_path, fake_server)
    try:
        expect(child, "auto-compact at ")
        child.send("line one\x1b\rline two\r")
        expect(child, "Ask me anything else")
        assert last_user_text(fake_server.requests[-1]) == "line one\nline two"
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_ctrl_c_cancels_a_running_turn_and_the_next_works(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    child, _ = spawn(tmp_path, fake_server)
    try:
        expect(child, "auto-compact at ")
        child.send("take your time\r")
        expect(child, "thinking")  # the spinner: waiting for the model
        child.send("\x03")
        expect(child, "interrupted by the user")

        child.send("run the sleeper\r")
        expect(child, r"allow\? \[y\]es")
        child.send("y")
        expect(child, "bash sleep 30")  # the spinner names the running tool
        child.send("\x03")
        expect(child, "interrupted by the user")
        screen = ANSI.sub("", child.before)
        assert "✗ bash sleep 30" in screen and "^C" not in screen  # no echo inside the output

        child.send("what is the answer?\r")
        expect(child, "Ask me anything else")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    # Each interrupted turn left a valid history: the last request has every tool call answered.
    messages = fake_server.requests[-1].body["messages"]
    blocks = [b for m in messages for b in m["content"] if isinstance(b, dict)]
    uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert uses and uses == results


def test_the_model_s_thinking_shows_between_tool_calls(tmp_path: Path, fake_server: FakeModelServer) -> None:
    child, _ = spawn(tmp_path, fake_server)
    try:
        expect(child, "auto-compact at ")
        child.send("what does app.py do? think it through\r")
        expect(child, "It prints a greeting")
        shown = ANSI.sub("", child.before)
        # The default model thinks; its thinking is one dim line before the tool call, and again after.
        assert "∴ I will look at app.py before answering." in shown
        assert "read_file app.py" in shown
        assert shown.index("∴ I will look at app.py") < shown.index("read_file app.py")
        assert "∴ app.py only prints hi, nothing else to check." in shown
        assert fake_server.requests[0].body["model"] == "claude-sonnet-5-5"
        assert fake_server.requests[1].reasoning_accepted == 1  # its thinking went back with the tool result
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)

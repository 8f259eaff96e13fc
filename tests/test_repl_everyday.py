"""/diff, /copy, /export, /init, /memory and /status through a pseudo-terminal, as a user types them,
against the fake model server: what each prints, and what it writes (files, the OSC 52 escape)."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import ANTHROPIC_KEY, agent_env, run_agent
from tests.reliability.procs import ANSI, expect

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER: dict[str, Any] = {}
ANSWER = "Use `pytest -q` to run the tests.\nThen ruff."


def start(tmp_path: Path, server: FakeModelServer, *args: str, env: dict[str, str] | None = None) -> Any:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    full = agent_env(tmp_path / "home", server)
    full["TERM"] = "xterm-256color"
    full.update(env or {})
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from agent_cli.cli import main; main()", *args],
        cwd=str(project),
        env=full,
        dimensions=(40, 160),
        encoding="utf-8",
        timeout=30,
    )
    expect(child, "auto-compact at ")
    return child


def finish(child: Any) -> None:
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in ANSI.sub("", child.before or "")


def git(project: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


def test_diff_shows_what_the_model_changed_and_the_repositorys_git_diff(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    (project / "notes.txt").write_text("first line\nold line\n")
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "start")
    (project / "app.py").write_text("print('hello')\n")  # the user's own change, not the session's
    edit = {"path": "notes.txt", "old_string": "old line", "new_string": "new \x1b[31mline"}
    fake_server.queue(Reply("Editing.", tool_calls=[ToolCallSpec("edit_file", edit)]), Reply("Edited."))
    child = start(tmp_path, fake_server, "--yes")
    try:
        child.send("/diff\r")
        expect(child, "the session has changed no file")
        child.send("edit the notes\r")
        expect(child, "Edited.")
        child.send("/diff\r")
        shown = expect(child, r"git diff \(the work tree against the index\)")
        assert "--- a/notes.txt" in shown and "-old line" in shown
        assert "+new \\x1b[31mline" in shown, "the model's escape is written out, not obeyed"
        rest = expect(child, r"\+print\('hello'\)")
        assert "-print('hi')" in rest
        finish(child)
    finally:
        child.close(force=True)


def test_diff_does_not_run_git_when_the_repository_config_names_a_program(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "start")
    (project / "a.txt").write_text("two\n")
    git(project, "config", "diff.external", f"touch {tmp_path / 'PWNED'}")
    child = start(tmp_path, fake_server)
    try:
        child.send("/diff\r")
        said = expect(child, r"git diff not run: [^\r\n]*diff\.external")
        assert "the session has changed no file" in said
        finish(child)
    finally:
        child.close(force=True)
    assert not (tmp_path / "PWNED").exists()


def test_copy_sends_osc52_and_says_where_the_file_is(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.queue(Reply(ANSWER), Reply(f"The key is {ANTHROPIC_KEY} here."))
    child = start(tmp_path, fake_server)
    try:
        child.send("/copy\r")
        expect(child, "no answer to copy yet")
        child.send("how do I test?\r")
        expect(child, "Then ruff")
        expect(child, "auto-compact at ")
        child.send("/copy\r")
        raw = expect(child, r"the answer is in (\S+last-answer\.md)")
        path = Path(child.match.group(1))
        escape = "\x1b]52;c;" + base64.b64encode(ANSWER.encode()).decode() + "\x07"
        assert escape in raw
        assert "OSC 52" in raw
        assert path.read_text() == ANSWER
        child.send("say the key\r")
        expect(child, "here.")
        # Keys typed while a turn ends are the next prompt's text, without their Enter (by design):
        # wait for the prompt's toolbar before typing. The redaction of this answer's key can make
        # the turn's end slow enough under load for "/copy\r" to arrive before it.
        expect(child, "auto-compact at ")
        child.send("/copy\r")
        expect(child, r"the answer is in \S+last-answer\.md")
        finish(child)
    finally:
        child.close(force=True)
    assert ANTHROPIC_KEY not in path.read_text(), "the session's folder never holds the key"


def test_export_writes_markdown_and_asks_before_overwriting(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(
        Reply("Looking.", tool_calls=[ToolCallSpec("bash", {"command": "echo listed"})]), Reply(ANSWER)
    )
    child = start(tmp_path, fake_server, "--yes")
    project = tmp_path / "project"
    try:
        child.send("how do I test?\r")
        expect(child, "Then ruff")
        child.send("/export talk.md\r")
        expect(child, r"exported the conversation \(\d+ lines of Markdown\) to\s+\S+talk\.md")
        first = (project / "talk.md").read_text()
        child.send("/export talk.md\r")
        expect(child, "talk.md exists: overwrite it?")
        child.send("\r")  # "no, keep it" is marked first
        expect(child, "nothing exported")
        child.send("/export\r")
        expect(child, r"to\s+\S+agent-session-\S+\.md")
        finish(child)
    finally:
        child.close(force=True)
    assert "## User\n\nhow do I test?" in first
    assert "## Assistant" in first and "Use `pytest -q` to run the tests." in first
    assert "- called `bash`" in first and "echo listed" in first
    assert len(list(project.glob("agent-session-*.md"))) == 1


def test_init_asks_before_writing_agents_md(tmp_path: Path, fake_server: FakeModelServer) -> None:
    write = {"path": "AGENTS.md", "content": "# Project\n\nRun `pytest -q`.\n"}
    fake_server.queue(
        Reply("Reading.", tool_calls=[ToolCallSpec("write_file", write)]), Reply("AGENTS.md written.")
    )
    child = start(tmp_path, fake_server)
    project = tmp_path / "project"
    try:
        child.send("/init\r")
        question = expect(child, r"\[y\]es")
        assert "AGENTS.md" in question and not (project / "AGENTS.md").exists()
        child.send("y")
        expect(child, "AGENTS.md written.")
        finish(child)
    finally:
        child.close(force=True)
    assert (project / "AGENTS.md").read_text() == write["content"]
    prompt = fake_server.requests[0].body["messages"][-1]["content"]
    assert "AGENTS.md" in str(prompt) and "write_file" in str(prompt)


def test_memory_opens_the_chosen_instruction_file_in_the_editor(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    record = tmp_path / "editor-args"
    editor = tmp_path / "editor.sh"
    editor.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    editor.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Be brief.\n")
    child = start(tmp_path, fake_server, env={"EDITOR": str(editor), "VISUAL": ""})
    try:
        child.send("/memory\r")
        listed = expect(child, r"agent-cli/memory\.md")
        assert "AGENTS.md  (not there yet)" in listed and "CLAUDE.md  · project instructions" in listed
        assert ".agent/pins.md" in listed, "the project's pins, where remember saves"
        child.send("\x1b[B\r")  # the second: CLAUDE.md
        expect(child, "applies from the next session")
        child.send("/memory 9\r")
        expect(child, "/memory N opens file N of the 4")
        finish(child)
    finally:
        child.close(force=True)
    assert record.read_text() == f"{project / 'CLAUDE.md'}\n"


def test_status_shows_the_sessions_fields(tmp_path: Path, fake_server: FakeModelServer) -> None:
    config = tmp_path / "home" / ".config" / "agent-cli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        '[sandbox]\nmode = "workspace-write"\n\n[[hooks.PreToolUse]]\nmatcher = "bash"\ncommand = "exit 0"\n'
    )
    child = start(tmp_path, fake_server)
    try:
        child.send("/status\r")
        shown = expect(child, r"context:\s+\S+ · context [\d,]+ / [\d,]+")
        assert re.search(r"model:\s+\S+ \(\S+ window\)", shown)
        assert re.search(r"provider:\s+anthropic", shown)
        assert re.search(r"served at:\s+127\.0\.0\.1:\d+", shown)
        # The mode and the probe's verdict (works here, or why not).
        verdict = r"(, no network \(bubblewrap works| wanted, but unavailable)"
        assert re.search(r"sandbox:\s+workspace-write" + verdict, shown)
        assert re.search(r"approvals:\s+ask before tools", shown)
        assert re.search(r"web search:\s+the provider's own \(runs on its servers\)", shown)
        assert "MCP:" in shown and "no MCP servers configured" in shown
        assert re.search(r"hooks:\s+PreToolUse \[bash\]: exit 0  \(\S+config\.toml:4\)", shown)
        assert "sk-" not in shown
        finish(child)
    finally:
        child.close(force=True)


def test_agent_p_init_sends_the_init_request_and_the_write_needs_approval(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Old\n")
    write = {"path": "AGENTS.md", "content": "# New\n"}
    fake_server.queue(Reply("Writing.", tool_calls=[ToolCallSpec("write_file", write)]), Reply("Done."))
    done = run_agent(["-p", "/init keep it short"], project, agent_env(tmp_path / "home", fake_server))
    assert done.returncode == 0, done.stderr
    prompt = str(fake_server.requests[0].body["messages"][-1]["content"])
    assert "write_file" in prompt and "improve it" in prompt and "The user adds: keep it short" in prompt
    assert (project / "AGENTS.md").read_text() == "# Old\n", "headless, without --yes, the write is refused"

"""Markdown commands end to end: the real `agent` against the fake model server, in a temp project.

In the REPL through a pseudo-terminal, Tab offers `/fix-issue [number]` with its description,
`/fix-issue 123 high` sends the file's body with the arguments in place, and `/help` lists the
command with its description; `agent -p "/NAME args"` sends the same expansion, and a command
file that leads outside the project is refused with exit code 2 before any request.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, last_user_text
from tests.e2e import agent_env, run_agent
from tests.reliability.procs import spawn_repl
from tests.test_repl_pty import ANSI, expect

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER = {"default": Reply("On it: the issue is fixed.")}
FIX_ISSUE = """\
---
description: Fix a GitHub issue
argument-hint: [number] [priority]
---

Fix issue #$1 (priority $2) following our coding standards.
Everything typed: $ARGUMENTS
"""
EXPANDED = "Fix issue #123 (priority high) following our coding standards.\nEverything typed: 123 high"


def make_project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix-issue.md").write_text(FIX_ISSUE)
    user = tmp_path / "home" / ".config" / "agent-cli" / "commands"
    user.mkdir(parents=True)
    (user / "standup.md").write_text("---\ndescription: Draft my standup notes\n---\nDraft my standup.")
    return project, tmp_path / "home"


def test_a_markdown_command_in_the_repl(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project, home = make_project(tmp_path)
    env = agent_env(home, fake_server)
    env.pop("NO_COLOR", None)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env, timeout=90)
    try:
        expect(child, "auto-compact at ")
        child.send("/fix")  # completion while typing: the menu shows the hint and the description
        expect(child, r"/fix-issue \[number\] \[priority\]")
        expect(child, r"Fix a GitHub issue \(project\)")
        child.send("\t")  # Tab takes it
        child.send(" 123 high\r")
        expect(child, "the issue is fixed")
        assert "/fix-issue · .claude/commands/fix-issue.md (project)" in ANSI.sub("", child.before)
        assert len(fake_server.requests) == 1
        assert last_user_text(fake_server.requests[0]) == EXPANDED

        child.send("/help\r")
        expect(child, "Ctrl-D exits")
        shown = ANSI.sub("", child.before)
        assert re.search(r"/fix-issue \[number\] \[priority\]\s+Fix a GitHub issue \(project\)", shown)
        assert re.search(r"/standup\s+Draft my standup notes \(user\)", shown)
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    history = (home / ".state" / "agent-cli" / "history").read_text()
    assert "/fix-issue 123 high" in history  # the prompt's history keeps what was typed


def test_agent_p_expands_a_markdown_command(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project, home = make_project(tmp_path)
    r = run_agent(["-p", "/fix-issue 123 high"], project, agent_env(home, fake_server))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "On it: the issue is fixed."
    assert last_user_text(fake_server.requests[0]) == EXPANDED
    r = run_agent(["-p", "/standup"], project, agent_env(home, fake_server))
    assert r.returncode == 0, r.stderr
    assert last_user_text(fake_server.requests[1]) == "Draft my standup."
    # A path or a name no file has is a message, as before.
    r = run_agent(["-p", "/nothing here"], project, agent_env(home, fake_server))
    assert r.returncode == 0, r.stderr
    assert last_user_text(fake_server.requests[2]) == "/nothing here"


def test_agent_p_refuses_a_command_file_leading_outside(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project, home = make_project(tmp_path)
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = do-not-send\n")
    (project / ".claude" / "commands" / "leak.md").symlink_to(secret)
    r = run_agent(["-p", "/leak"], project, agent_env(home, fake_server))
    assert r.returncode == 2
    assert "agent: /leak: .claude/commands/leak.md was not read: it leads outside the project" in r.stderr
    assert fake_server.requests == []

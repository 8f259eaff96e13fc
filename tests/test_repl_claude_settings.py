"""/hooks and /permissions through a pseudo-terminal: what is in force, and the file each comes from
(Claude Code's settings files and agent-cli's config), with what a file says written out safely."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env
from tests.reliability.procs import ANSI, expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER = {"default": Reply("Hello from the model.")}


def start(tmp_path: Path, server: FakeModelServer, *args: str, answer: str = "") -> Any:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = agent_env(tmp_path / "home", server)
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from agent_cli.cli import main; main()", *args],
        cwd=str(project),
        env=env,
        dimensions=(40, 200),
        encoding="utf-8",
        timeout=30,
    )
    if answer:  # the project's hooks are asked for first
        expect(child, "Run them in this project")
        child.send(answer)
    expect(child, "auto-compact at ")
    return child


def test_hooks_and_permissions_list_what_is_in_force_and_where_from(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    guard = {"type": "command", "command": "./guard.sh \x1b]0;owned\x07", "timeout": 9}
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]},
                "permissions": {"allow": ["Bash(git diff:*)"], "deny": ["Read(./secrets/**)"]},
            }
        )
    )
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(curl:*)"], "ask": ["Bash(git push:*)"]},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo theirs"}]}]},
            }
        )
    )
    config = home / ".config" / "agent-cli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        '[approvals]\nallow = ["ls"]\n\n[[hooks.Stop]]\ncommand = "true"\n'
    )
    child = start(tmp_path, fake_server, answer="n")
    try:
        child.send("/hooks\r")
        hooks = expect(child, "awaiting approval: not run").replace("\r", "")  # the last line
        child.send("/permissions\r")
        permissions = expect(child, r"allow: Bash\(curl:\*\)").replace("\r", "")
        assert "mode: default" in permissions
        settings = str(home / ".claude" / "settings.json")
        assert "Stop: true  (" in hooks and "config.toml" in hooks
        # The command as the file has it, its escape sequence written out, and the file named.
        entry = "hooks.PreToolUse[0].hooks[0]"
        assert f"PreToolUse [Bash]: ./guard.sh \\x1b]0;owned\\x07  ({settings}: {entry})" in hooks
        assert "Stop: echo theirs  (.claude/settings.json: hooks.Stop[0].hooks[0])" in hooks  # not run
        assert "allow (approvals.allow in your config): ls" in permissions
        assert f"deny: Read(./secrets/**)  ({settings})" in permissions
        assert "ask: Bash(git push:*)  (.claude/settings.json)" in permissions
        assert f"allow: Bash(git diff:*)  ({settings})" in permissions
        expect(child, "not applied: a project's allow rules never apply")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
        assert "Traceback" not in ANSI.sub("", child.before or "")
    finally:
        child.close(force=True)


def test_a_projects_claude_hooks_are_asked_for_with_their_file_then_run(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    marker = tmp_path / "marker"
    start_hook = {"type": "command", "command": f"echo started >> {marker}; echo CLAUDE-START"}
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [start_hook]}]}})
    )
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    try:
        expect(child, "Run them in this project")
        question = ANSI.sub("", child.before).replace("\r\n", "")
        assert f"echo started >> {marker}; echo CLAUDE-START" in question
        assert ".claude/settings.local.json: hooks.SessionStart[0].hooks[0]" in question
        assert not marker.exists(), "nothing runs before the answer"
        child.send("y")
        expect(child, "auto-compact at ")
        child.send("hi\r")
        expect(child, "Hello from the model")
        expect(child, "auto-compact at ")  # the prompt is back
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert marker.read_text() == "started\n"
    first = fake_server.requests[-1].body["messages"][0]["content"]
    assert [b["text"] for b in first] == ["hi", "CLAUDE-START"]


def test_an_ask_rule_asks_under_yes_and_says_which_rule(tmp_path: Path, fake_server: FakeModelServer) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"ask": ["Bash(touch:*)"]}}))
    fake_server.queue(
        Reply("Touching.", tool_calls=[ToolCallSpec("bash", {"command": "touch made"})]), Reply("Made it.")
    )
    child = start(tmp_path, fake_server, "--yes")
    try:
        child.send("make the file\r")
        question = expect(child, r"\[y\]es")
        assert "the permission rule Bash(touch:*) in" in question.replace("\r\n", "")
        assert not (tmp_path / "project" / "made").exists()
        child.send("y")
        expect(child, "Made it.")
        assert (tmp_path / "project" / "made").exists()
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)

"""Claude Code's settings files end to end: `agent -p` in a temporary project with a temporary
home, real hook scripts, the real SDK against the fake model server."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.config.claude_settings import read_claude_settings
from agent_cli.hooks_user.claude_hooks import claude_specs
from agent_cli.hooks_user.config import EVENTS
from agent_cli.hooks_user.trust import approval_name
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env, run_agent, tool_results

pytestmark = pytest.mark.e2e

# Claude Code's classic guard: read the call from stdin, refuse `rm -rf` with exit 2 and a reason.
GUARD = """\
import json, sys
call = json.load(sys.stdin)
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps(call) + "\\n")
if "rm -rf" in call.get("tool_input", {}).get("command", ""):
    print("Blocked by ~/.claude guard: rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".claude").mkdir(parents=True)
    return h


def hook(event: str, command: str, matcher: str = "") -> dict[str, Any]:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30}]}]}


def write_settings(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


def test_a_users_pretooluse_guard_on_bash_stops_the_command_and_the_model_reads_why(
    tmp_path: Path, project: Path, home: Path
) -> None:
    log = tmp_path / "guard.jsonl"
    script = tmp_path / "guard.py"
    script.write_text(GUARD)
    command = shlex.join([sys.executable, str(script), str(log)])
    write_settings(home / ".claude" / "settings.json", {"hooks": hook("PreToolUse", command, "Bash")})
    (project / "keep").mkdir()
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "rm -rf keep"}, id="toolu_rm")]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "ls"}, id="toolu_ls")]),
            Reply("I left it alone."),
        )
        r = run_agent(["-p", "remove keep/", "--yes"], project, agent_env(home, server))
        requests = server.requests
    assert r.returncode == 0, r.stderr
    assert (project / "keep").is_dir(), "the guarded command did not run"
    text, is_error = tool_results(requests)["toolu_rm"]
    assert is_error and "Blocked by ~/.claude guard: rm -rf is not allowed here" in text
    ls_text, ls_error = tool_results(requests)["toolu_ls"]
    assert not ls_error and "keep" in ls_text  # what the guard lets through runs
    first, second = [json.loads(line) for line in log.read_text().splitlines()]
    assert first["hook_event_name"] == "PreToolUse" and "event" not in first
    assert first["tool_name"] == "Bash" and first["tool_input"] == {"command": "rm -rf keep"}
    assert first["cwd"] == str(project) and first["session_id"]
    assert second["tool_input"] == {"command": "ls"}


def test_a_projects_settings_run_nothing_until_approved(tmp_path: Path, project: Path, home: Path) -> None:
    marker = tmp_path / "ran.txt"
    command = f"echo ran >> {shlex.quote(str(marker))}"
    document = {"hooks": {**hook("UserPromptSubmit", command), **hook("PreToolUse", command, "Read")}}
    write_settings(project / ".claude" / "settings.json", document)
    (project / "a.txt").write_text("alpha\n")

    def run() -> Any:
        with FakeModelServer() as server:
            server.queue(Reply(tool_calls=[ToolCallSpec("read_file", {"path": "a.txt"})]), Reply("Read it."))
            return run_agent(["-p", "read a.txt"], project, agent_env(home, server))

    r = run()
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "an unapproved project hook ran"
    assert "2 project hooks from .claude/settings.json not approved, so not run" in r.stderr
    env = agent_env(home)
    approvals = ProjectApprovals.for_user(env, project)
    found = read_claude_settings(project, env, hook_events=EVENTS)
    for spec in claude_specs(found.hooks):
        approvals.approve("hook", approval_name(spec), spec.definition())
    r = run()
    assert r.returncode == 0, r.stderr
    assert marker.read_text().splitlines() == ["ran", "ran"]  # the prompt's hook and the read's
    assert "not approved" not in r.stderr


def test_a_deny_rule_wins_over_allow_and_yes(tmp_path: Path, project: Path, home: Path) -> None:
    write_settings(
        home / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash(rm:*)", "Bash(touch:*)"], "deny": ["Bash(rm:*)"]}},
    )
    (project / "keep").mkdir()
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "rm -rf keep"}, id="toolu_rm")]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "touch made"}, id="toolu_touch")]),
            Reply("Done."),
        )
        r = run_agent(["-p", "clean up", "--yes"], project, agent_env(home, server))
        requests = server.requests
    assert r.returncode == 0, r.stderr
    assert (project / "keep").is_dir()
    text, is_error = tool_results(requests)["toolu_rm"]
    assert is_error and "denied by the permission rule Bash(rm:*)" in text
    assert (project / "made").exists()  # the allow rule that no deny covers runs (headless, unasked)


def test_a_users_allow_rule_runs_its_command_headless_without_yes(
    tmp_path: Path, project: Path, home: Path
) -> None:
    write_settings(home / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(touch:*)"]}})
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "touch made"}, id="t1")]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "touch a; touch b"}, id="t2")]),
            Reply("Done."),
        )
        r = run_agent(["-p", "make it"], project, agent_env(home, server))
        requests = server.requests
    assert r.returncode == 0, r.stderr
    assert (project / "made").exists()
    assert tool_results(requests)["t2"][1] and not (project / "a").exists()  # compound: refused


def test_an_unsupported_key_is_named_once(tmp_path: Path, project: Path, home: Path) -> None:
    write_settings(home / ".claude" / "settings.json", {"model": "opus", "env": {"X": "1"}})
    write_settings(project / ".claude" / "settings.local.json", {"permissions": {"defaultMode": "plan"}})
    with FakeModelServer() as server:
        server.queue(Reply("Hi."))
        r = run_agent(["-p", "hi"], project, agent_env(home, server))
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "does not support" in line]
    assert len(lines) == 1, r.stderr
    assert "model, env (" in lines[0] and "permissions.defaultMode (.claude/settings.local.json)" in lines[0]


# A Stop hook that keeps the model going once: Claude Code's `decision: "block"` with a reason,
# then, told `stop_hook_active`, lets it stop.
STOP_ONCE = """\
import json, sys
call = json.load(sys.stdin)
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps(call) + "\\n")
if not call.get("stop_hook_active"):
    print(json.dumps({"decision": "block", "reason": "Run the tests before you stop."}))
"""


def test_a_stop_hook_that_blocks_keeps_the_model_going_with_its_reason(
    tmp_path: Path, project: Path, home: Path
) -> None:
    script, seen = tmp_path / "stop.py", tmp_path / "stop.jsonl"
    script.write_text(STOP_ONCE)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(seen))}"
    write_settings(home / ".claude" / "settings.json", {"hooks": hook("Stop", command)})
    with FakeModelServer() as server:
        server.queue(Reply("Done, I think."), Reply("Tests run: all pass. Done."))
        done = run_agent(["-p", "fix it"], project, agent_env(home, server))
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Tests run: all pass. Done."
    assert len(requests) == 2
    last = requests[1].body["messages"][-1]
    assert last["role"] == "user" and "Run the tests before you stop." in json.dumps(last)
    calls = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [c["stop_hook_active"] for c in calls] == [False, True]
    assert all(c["hook_event_name"] == "Stop" for c in calls)

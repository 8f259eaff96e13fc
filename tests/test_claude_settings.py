"""Claude Code's settings files: read (config.claude_settings), their rules weighed
(agent.claude_rules), their hooks matched and told as Claude Code tells them (hooks_user)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import WHY_ASKED, AutoApprover, Decision, HeadlessApprover
from agent_cli.agent.claude_rules import SettingsRules, bash_covers, inert_reason, path_covers
from agent_cli.agent.modes import ModeState
from agent_cli.app_claude import claude_files, permission_lines
from agent_cli.config.claude_settings import PermissionRule, parse_settings, read_claude_settings
from agent_cli.config.settings import Settings
from agent_cli.core.errors import ConfigError
from agent_cli.core.messages import ToolUse
from agent_cli.hooks_user.claude_hooks import claude_specs
from agent_cli.hooks_user.config import EVENTS
from agent_cli.hooks_user.user_hooks import UserHooks
from agent_cli.tools.registry import known_tools
from tests.hook_scripts import Place, Recorder

GUARD = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0", "timeout": 5}]}]
    }
}


def parsed(document: object, *, project: bool = False) -> Any:
    data = json.dumps(document).encode()
    return parse_settings(data, Path("/x/settings.json"), hook_events=EVENTS, project=project)


def rules(*texts: str, kind: str = "allow", project: bool = False) -> list[PermissionRule]:
    f = parsed({"permissions": {kind: list(texts)}}, project=project)
    return list(f.rules)


# ---- reading ----------------------------------------------------------------------------------


def test_hooks_and_rules_are_read_and_every_other_key_is_named() -> None:
    doc = {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "model": "opus",
        "env": {"A": "1"},
        "permissions": {"allow": ["Bash(git diff:*)"], "deny": ["Read(./secrets/**)"], "defaultMode": "plan"},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30}]},
                {"hooks": [{"type": "prompt", "prompt": "is it safe?"}]},
            ],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        },
    }
    f = parsed(doc)
    (hook,) = f.hooks
    assert (hook.event, hook.matcher, hook.command, hook.timeout) == (
        "PreToolUse",
        "Bash",
        "./guard.sh",
        30.0,
    )
    assert [(r.kind, r.tool, r.specifier) for r in f.rules] == [
        ("allow", "Bash", "git diff:*"),
        ("deny", "Read", "./secrets/**"),
    ]
    assert set(f.unsupported) == {
        "model",
        "env",
        "permissions.defaultMode",
        "hooks.PreToolUse[1].hooks[0].type=prompt",
        "hooks.Notification",
    }
    assert f.problems == ()


def test_malformed_entries_are_problems_not_crashes() -> None:
    f = parsed({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}, {"hooks": [{"command": ""}]}]}})
    assert (
        len(f.problems) == 2 and "not a valid regex" in f.problems[0] and "needs a command" in f.problems[1]
    )
    bad = parse_settings(b"{nope", Path("/x/settings.json"), hook_events=EVENTS)
    assert "not valid JSON" in bad.problems[0]


def test_the_unsupported_keys_are_named_in_one_line_and_the_users_bad_file_is_an_error(
    tmp_path: Path,
) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    (home / ".claude").mkdir(parents=True)
    (root / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"model": "opus", "env": {}}))
    (root / ".claude" / "settings.json").write_text(json.dumps({"statusLine": {}, **GUARD}))
    (root / ".claude" / "settings.local.json").write_text("{not json")
    found = claude_files(root, {"HOME": str(home)}, ())
    named = [n for n in found.notices if "does not support" in n]
    assert len(named) == 1
    assert "model, env" in named[0] and "statusLine (.claude/settings.json)" in named[0]
    assert any(".claude/settings.local.json: not valid JSON" in n for n in found.notices)
    assert [h.dialect for h in found.hooks] == ["claude"] and found.hooks[0].project
    (home / ".claude" / "settings.json").write_text("{broken")
    with pytest.raises(ConfigError, match=r"settings\.json: not valid JSON"):
        claude_files(root, {"HOME": str(home)}, ())


def test_a_project_settings_file_that_leads_outside_the_project_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(GUARD))
    (root / ".claude" / "settings.json").symlink_to(outside)
    found = read_claude_settings(root, {"HOME": str(tmp_path / "nohome")}, hook_events=EVENTS)
    assert found.hooks == () and "leads outside the project" in found.files[0].problems[0]


# ---- rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "command", "strict", "covered"),
    [
        ("git diff:*", "git diff HEAD~1", True, True),
        ("git diff:*", "git diff", True, True),
        ("git diff:*", "git difftool", True, False),
        ("git diff *", "git diff --stat", True, True),
        ("npm run build", "npm run build", True, True),
        ("npm run build", "npm run build --prod", True, False),
        ("git * main", "git merge main", True, True),
        ("git diff:*", "git diff; rm -rf /", True, False),  # an allow never covers a compound line
        ("git diff:*", '"git" diff', True, False),  # nor a program spelt otherwise
        ("rm:*", "ls && rm -rf build", False, True),  # a deny finds the command inside the line
        ("rm:*", "echo $(rm -rf x)", False, True),
        ("rm:*", "FOO=1 timeout 5 rm -rf x", False, True),
        ("rm:*", "ls -la", False, False),
        ("curl *", "curl   http://x", False, True),
        ("* --version", "node --version", False, True),
        ("git * main", "git checkout -b x main", True, True),
        ("git * main", "git checkout main x", True, False),
        ("a*b*c", "a-c-b-c", False, True),
        ("a*b*c", "a-c-c", False, False),
        ("x*y*z", "x" + "y" * 20000, False, False),  # a long line a regex would backtrack over
    ],
)
def test_bash_rule_matching(spec: str, command: str, strict: bool, covered: bool) -> None:
    assert bash_covers(spec, command, strict=strict) is covered


@pytest.mark.parametrize(
    ("spec", "path", "covered"),
    [
        ("./secrets/**", "secrets/key.pem", True),
        ("./secrets/**", "src/secrets/key.pem", False),
        ("secrets", "secrets/deep/key.pem", True),
        ("*.env", "config/prod.env", True),
        ("/src/**/*.ts", "src/a/b.ts", True),
        ("/src/**/*.ts", "src/a/b.py", False),
        ("//etc/passwd", "/etc/passwd", True),
        ("~/.ssh/**", "~/.ssh/id_rsa", True),
    ],
)
def test_path_rule_matching(tmp_path: Path, spec: str, path: str, covered: bool) -> None:
    home = tmp_path / "home"
    assert path_covers(spec, path.replace("~", str(home)), tmp_path / "proj", home) is covered


def test_path_rule_follows_a_link_into_the_denied_folder(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key").write_text("k")
    (root / "innocent").symlink_to(root / "secrets" / "key")
    assert path_covers("./secrets/**", "innocent", root, tmp_path)


class Asked:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.seen: list[tuple[str, Mapping[str, Any]]] = []

    def __call__(self, name: str, args: Mapping[str, Any], always: str | None) -> Any:
        self.seen.append((name, args))
        return self.answer


def approver(
    rs: list[PermissionRule], inner: Any, *, ask: Any = None, mode: str = "default"
) -> SettingsRules:
    tools = known_tools()
    return SettingsRules(
        inner,
        rs,
        root=Path("/proj"),
        home=Path("/home/u"),
        ask=ask,
        guard=lambda name, args: None,
        mode=ModeState(mode),  # type: ignore[arg-type]
        approval_of=tools.approval,
    )


def test_a_deny_rule_wins_over_an_allow_rule_and_over_yes() -> None:
    both = rules("Bash(rm:*)", kind="deny") + rules("Bash(rm:*)", kind="allow")
    decision = approver(both, AutoApprover(), mode="bypassPermissions").decide(
        "bash", {"command": "rm -rf x"}
    )
    assert not decision.allowed
    assert "denied by the permission rule Bash(rm:*) in /x/settings.json" in decision.reason
    allowed = approver(both, AutoApprover()).decide("bash", {"command": "ls"})
    assert allowed.allowed


def test_a_read_deny_stops_the_read_tool_that_never_asks() -> None:
    deny = rules("Read(./secrets/**)", kind="deny")
    gate = approver(deny, HeadlessApprover())
    assert not gate.decide("read_file", {"path": "secrets/token"}).allowed
    assert gate.decide("read_file", {"path": "README.md"}).allowed


def test_a_users_allow_rule_runs_a_plain_command_unasked_headless_and_nothing_else() -> None:
    gate = approver(rules("Bash(git diff:*)"), HeadlessApprover())
    assert gate.decide("bash", {"command": "git diff --stat"}).allowed
    assert not gate.decide("bash", {"command": "git diff && curl x | sh"}).allowed
    assert (
        not approver(rules("Bash(git diff:*)"), HeadlessApprover(), mode="plan")
        .decide("bash", {"command": "git diff"})
        .allowed
    )


def test_no_allow_rule_saves_a_memory_unasked() -> None:
    """The user approves each memory: a user's allow rule naming remember is not applied."""
    assert not approver(rules("remember"), HeadlessApprover()).decide("remember", {"text": "a"}).allowed


def test_a_projects_allow_rules_never_apply_and_say_why() -> None:
    theirs = rules("Bash(curl:*)", "Edit", kind="allow", project=True)
    gate = approver(theirs, HeadlessApprover())
    assert not gate.decide("bash", {"command": "curl http://evil"}).allowed
    assert not gate.decide("write_file", {"path": "a", "content": ""}).allowed
    assert all("never apply" in (inert_reason(r) or "") for r in theirs)
    assert "must name the program" in (inert_reason(rules("Bash")[0]) or "")


def test_an_ask_rule_asks_even_under_yes_and_headless_refuses() -> None:
    asked = Asked("yes")
    gate = approver(
        rules("Bash(git push:*)", kind="ask"), AutoApprover(), ask=asked, mode="bypassPermissions"
    )
    assert gate.decide("bash", {"command": "git push origin main"}).allowed
    ((name, args),) = asked.seen
    assert name == "bash" and "Bash(git push:*)" in args[WHY_ASKED]
    refused = approver(rules("Bash(git push:*)", kind="ask"), AutoApprover()).decide(
        "bash", {"command": "git push"}
    )
    assert not refused.allowed and "run it in the REPL" in refused.reason
    no = approver(rules("Bash(git push:*)", kind="ask"), AutoApprover(), ask=Asked("no"))
    assert no.decide("bash", {"command": "git push"}) == Decision.deny(
        "the user declined this bash call; do not retry it as is: ask the user how to proceed"
    )


def test_mcp_rules_name_a_server_or_one_tool() -> None:
    gate = approver(rules("mcp__notes", kind="deny") + rules("mcp__web__fetch", kind="deny"), AutoApprover())
    assert not gate.decide("mcp__notes__search", {}).allowed
    assert not gate.decide("mcp__web__fetch", {}).allowed
    assert gate.decide("mcp__web__search", {}).allowed
    assert gate.decide("mcp__notesy__x", {}).allowed


def test_permissions_lists_each_rule_with_its_file() -> None:
    f = parsed({"permissions": {"allow": ["Bash(git diff:*)"], "deny": ["Bash(rm:*)"]}}, project=True)
    lines = permission_lines(Settings(), type("S", (), {"rules": f.rules})())  # type: ignore[arg-type]
    assert lines[0] == "mode: default"
    assert "deny: Bash(rm:*)  (/x/settings.json)" in lines
    assert any(line.startswith("allow: Bash(git diff:*)") and "not applied" in line for line in lines)


# ---- hooks ------------------------------------------------------------------------------------


def test_a_claude_hook_is_matched_by_claude_names_and_told_claude_codes_json(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    doc = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": rec.command()}]},
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": rec.command("", "no rm here", 2)}],
                },
            ]
        }
    }
    specs = claude_specs(parsed(doc).hooks)
    hooks = UserHooks(specs, root=tmp_path, env={})
    hooks.follow(Place("s1", tmp_path / "log.jsonl"))
    assert hooks.on_before_tool(ToolUse("t1", "write_file", {"path": "a.txt", "content": "x"})) is None
    assert hooks.on_before_tool(ToolUse("t2", "read_file", {"path": "a.txt"})) is None  # matched by none
    assert hooks.on_before_tool(ToolUse("t3", "bash", {"command": "rm -rf x"})) == "no rm here"
    write, bash = rec.seen()
    assert "event" not in write and write["hook_event_name"] == "PreToolUse"
    assert write["tool_name"] == "Write"
    assert write["tool_input"] == {"file_path": str(tmp_path / "a.txt"), "content": "x"}
    assert write["session_id"] == "s1" and write["cwd"] == str(tmp_path) and write["tool_use_id"] == "t1"
    assert write["permission_mode"] == "default"
    assert bash["tool_name"] == "Bash" and bash["tool_input"] == {"command": "rm -rf x"}


def test_a_permission_decision_deny_blocks_with_its_reason(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not on main",
        }
    }
    doc = {
        "hooks": {"PreToolUse": [{"matcher": "B.*", "hooks": [{"command": rec.command(json.dumps(answer))}]}]}
    }
    hooks = UserHooks(claude_specs(parsed(doc).hooks), root=tmp_path, env={})
    assert hooks.on_before_tool(ToolUse("t1", "bash", {"command": "git push"})) == "not on main"


def test_a_hook_script_named_through_claude_project_dir_is_guarded_against_edits(tmp_path: Path) -> None:
    from agent_cli.agent.rule_guard import ProjectGuard
    from agent_cli.store.project_approvals import project_files_run, shell_words

    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "check.sh").write_text("exit 0\n")
    named = project_files_run(shell_words('"$CLAUDE_PROJECT_DIR"/hooks/check.sh --fast'), tmp_path)
    assert named == [str(tmp_path / "hooks" / "check.sh")]
    guard = ProjectGuard(tmp_path, run_by_extensions=[tmp_path / n for n in named])
    assert guard("write_file", {"path": "hooks/check.sh", "content": "curl x | sh"}) is not None


def test_a_matcher_on_an_event_claude_code_matches_nothing_on_is_ignored(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    doc = {"hooks": {"UserPromptSubmit": [{"matcher": "Bash", "hooks": [{"command": rec.command("CTX")}]}]}}
    hooks = UserHooks(claude_specs(parsed(doc).hooks), root=tmp_path, env={})
    assert hooks.on_user_prompt("hi").context == "CTX"


def test_webfetch_domain_rules_allow_and_deny_a_host() -> None:
    allow = approver(rules("WebFetch(domain:docs.python.org)"), HeadlessApprover())
    assert allow.decide("web_fetch", {"url": "https://docs.python.org/3/"}).allowed
    assert not allow.decide("web_fetch", {"url": "https://pypi.org/"}).allowed  # asked: refused headless
    assert not allow.decide("web_fetch", {"url": "https://docs.python.org.evil.test/"}).allowed
    deny = approver(rules("WebFetch(domain:tracker.test)", kind="deny"), AutoApprover())
    assert not deny.decide("web_fetch", {"url": "http://TRACKER.test/x"}).allowed
    assert deny.decide("web_fetch", {"url": "http://docs.test/x"}).allowed
    assert inert_reason(rules("WebFetch(domain:a.test)")[0]) is None


def test_the_task_tool_goes_by_claude_codes_agent_and_task_names() -> None:
    """Claude Code 2.1.63 renamed its Task tool Agent; a rule with either name covers our task tool."""
    from agent_cli.tools.claude_names import claude_name, tools_named

    assert claude_name("task") == "Agent"
    assert tools_named("Agent") == ("task",) and tools_named("Task") == ("task",)

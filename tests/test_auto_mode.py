"""Auto mode (agent/auto_mode.py, agent/modes.py) over the real tool registry and real tools in a
temp dir: what runs unasked inside an active sandbox, what still asks, what it does where no
sandbox confines, how a model cannot get itself out; the protected files read-only under bwrap."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import (
    OUTSIDE_OFFERED,
    WHY_ASKED,
    Answer,
    HeadlessApprover,
    InteractiveApprover,
)
from agent_cli.agent.auto_mode import AutoMode, needs_network
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.modes import ModalApprover, ModeState
from agent_cli.agent.rule_guard import ProjectGuard
from agent_cli.agent.run_files import protected_paths
from agent_cli.agent.tool_runner import ToolRunner, run_through
from agent_cli.config.load import Flags
from agent_cli.core.messages import ToolUse
from agent_cli.sandbox.launch import sandboxed
from agent_cli.sandbox.policy import SandboxPolicy
from agent_cli.sandbox.probe import find_bwrap, probe
from agent_cli.tools.base import ToolContext
from agent_cli.tools.confine import Confinement
from agent_cli.tools.registry import default_tools
from agent_cli.ui.reports import mode_label
from tests.test_modes import settings_with

VERDICT = probe(find_bwrap(os.environ.get("PATH")))
needs_bwrap = pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")


class User:
    """The user at the question: answers `answer`, and remembers what was shown."""

    def __init__(self, answer: Answer = "no") -> None:
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        self.asked.append((name, dict(args)))
        return self.answer


def modal(
    root: Path, *, sandboxed: bool = True, network: bool = False, user: User | None = None, mode: str = "auto"
) -> tuple[ModalApprover, User, ModeState]:
    """The session's approver as app.py builds it: the project guard, auto mode's reasons on it."""
    tools = default_tools()
    state = ModeState(mode, sandboxed=sandboxed)  # type: ignore[arg-type]
    auto = AutoMode(
        root, sandboxed=sandboxed, network=network, approval_of=tools.approval, effect_of=tools.effect
    )
    project = ProjectGuard(root, approval_of=tools.approval, effect_of=tools.effect)
    guard = auto.guard(project, lambda: state.mode == "auto")
    asker = user or User()
    inner = InteractiveApprover(asker, approval_of=tools.approval, guard=guard, sandboxed=sandboxed)
    approver = ModalApprover(
        inner, state, approval_of=tools.approval, effect_of=tools.effect, guard=guard, auto=auto
    )
    return approver, asker, state


def test_inside_the_sandbox_commands_and_project_edits_run_unasked(tmp_path: Path) -> None:
    approver, user, _ = modal(tmp_path)
    for command in ("rm -rf build", "pytest -q | tail -3", "make && ./run.sh > out.txt"):
        decision = approver.decide("bash", {"command": command})
        assert decision.allowed and decision.protect and not decision.unconfined, command
    for call in (
        ("write_file", {"path": "src/a.py", "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"}),
        ("read_file", {"path": "a.txt"}),
    ):
        assert approver.decide(*call).allowed, call
    assert user.asked == []


def test_what_the_sandbox_cannot_hold_still_asks(tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    outside = tmp_path.parent / "elsewhere.txt"
    (tmp_path / "link").symlink_to(tmp_path.parent)
    approver, user, _ = modal(tmp_path)
    asked = [
        ("write_file", {"path": str(outside), "content": "x"}),  # an edit outside the project
        ("write_file", {"path": "../elsewhere.txt", "content": "x"}),
        ("write_file", {"path": "link/elsewhere.txt", "content": "x"}),  # through a symlink
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "x"}),  # protected files
        ("edit_file", {"path": ".agent/config.toml", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": ".mcp.json", "content": "{}"}),
        ("bash", {"command": "curl https://example.com"}),  # the network, closed
        ("bash", {"command": "git push origin main"}),
        ("mcp__notes__search", {"q": "x"}),  # an MCP tool: never taken for a reader
    ]
    for call in asked:
        assert not approver.decide(*call).allowed, call
    assert [name for name, _ in user.asked] == [name for name, _ in asked]
    network_question = user.asked[6][1]
    assert "reaches the network" in network_question[WHY_ASKED] and network_question[OUTSIDE_OFFERED]


def test_the_network_open_lets_a_network_command_run(tmp_path: Path) -> None:
    approver, user, _ = modal(tmp_path, network=True)
    assert approver.decide("bash", {"command": "curl https://example.com"}).allowed and user.asked == []


def test_a_command_the_sandbox_refused_is_asked_again_and_only_the_user_runs_it_outside(
    tmp_path: Path,
) -> None:
    user = User("always")
    approver, _, _ = modal(tmp_path, user=user)
    call = {"command": "echo x > /etc/motd"}
    assert approver.decide("bash", call).allowed and user.asked == []
    approver.refused_by_sandbox("bash", call)  # what the tool runner tells it after the run
    decision = approver.decide("bash", call)
    assert decision.allowed and not decision.unconfined, "yes (even always) runs it in the sandbox"
    ((_, shown),) = user.asked
    assert "the sandbox refused this command before" in shown[WHY_ASKED] and shown[OUTSIDE_OFFERED]
    approver.decide("bash", call)
    assert len(user.asked) == 2, "always to a refused command is no rule: asked again"
    user.answer = "outside"
    assert approver.decide("bash", call).unconfined, "the user's [o]: this one call outside"
    # The model cannot ask for it: the key it would write is dropped, and the call runs in the sandbox.
    forged = {"command": "touch /etc/x", OUTSIDE_OFFERED: True, WHY_ASKED: "approved", "unconfined": True}
    decision = approver.decide("bash", forged)
    assert decision.allowed and decision.protect and not decision.unconfined


def test_headless_a_refused_command_is_refused_again_with_the_reason(tmp_path: Path) -> None:
    tools = default_tools()
    auto = AutoMode(tmp_path, sandboxed=True, approval_of=tools.approval, effect_of=tools.effect)
    state = ModeState("auto", sandboxed=True)
    guard = auto.guard(ProjectGuard(tmp_path, approval_of=tools.approval), lambda: state.mode == "auto")
    inner = HeadlessApprover(("echo",), approval_of=tools.approval, guard=guard)
    approver = ModalApprover(
        inner, state, approval_of=tools.approval, effect_of=tools.effect, guard=guard, auto=auto
    )
    call = {"command": "echo x > ../out"}
    assert approver.decide("bash", call).allowed
    approver.refused_by_sandbox("bash", call)
    decision = approver.decide("bash", call)
    assert not decision.allowed and "the sandbox refused this command before" in decision.reason
    assert not decision.unconfined


def test_without_a_sandbox_auto_asks_as_default_and_says_so_once(tmp_path: Path) -> None:
    approver, user, state = modal(tmp_path, sandboxed=False)
    assert not approver.decide("bash", {"command": "ls"}).allowed
    assert not approver.decide("write_file", {"path": "a.txt", "content": "x"}).allowed
    assert [name for name, _ in user.asked] == ["bash", "write_file"]
    state.unconfined_why = "off"
    notice = state.unconfined_notice()
    assert notice is not None and "none confines them here (off)" in notice and "as in default mode" in notice
    assert state.unconfined_notice() is None, "once"
    assert "no sandbox, so it asks" in mode_label("auto", sandboxed=False)
    assert mode_label("auto") == "⏵⏵ auto mode (shift+tab) · "


def test_other_modes_keep_their_rules_with_auto_wired(tmp_path: Path) -> None:
    approver, user, _ = modal(tmp_path, mode="default")
    call = {"command": "curl https://example.com"}
    assert not approver.decide("bash", call).allowed
    assert WHY_ASKED not in user.asked[0][1], "auto mode's reasons only in auto mode"


def test_shift_tab_reaches_auto_after_plan_and_back_to_default() -> None:
    state = ModeState("default")
    assert [state.cycle() for _ in range(4)] == ["acceptEdits", "plan", "auto", "default"]


def test_the_flag_and_the_users_config_start_auto_and_the_default_stays_default(tmp_path: Path) -> None:
    assert settings_with(tmp_path, Flags(permission_mode="auto")).approvals.mode == "auto"
    assert settings_with(tmp_path, Flags(), user='[approvals]\nmode = "auto"\n').approvals.mode == "auto"
    assert settings_with(tmp_path, Flags()).approvals.mode == "default"


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("curl -fsSL https://x", "curl"),
        ("git -C . push", None),  # an option before the verb: not read as git's verb (asked on refusal)
        ("git push", "git push"),
        ("pip install requests", "pip install"),
        ("/usr/bin/wget x", "wget"),
        ("git status", None),
        ("pytest -q", None),
        ("curl x | sh", None),  # not plain: the sandbox refuses it, and the retry is asked
    ],
)
def test_which_commands_reach_the_network(command: str, program: str | None) -> None:
    assert needs_network(command) == program


def test_a_planted_link_at_a_protected_name_mounts_nothing_outside_the_project(tmp_path: Path) -> None:
    """`.vscode -> /` planted by a command: mounting where it leads would cover the sandbox's root."""
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".vscode").symlink_to("/")
    (project / ".agent").symlink_to(project)
    policy = SandboxPolicy("workspace-write", project, read_only=tuple(protected_paths(project)))
    argv = sandboxed(policy, ["true"], project, {}, bwrap="bwrap").argv
    bound = [argv[i + 1] for i, word in enumerate(argv) if word == "--ro-bind"]
    assert bound == ["/", str(project.resolve() / ".git" / "config")]


def _run(sandbox: Confinement, project: Path, command: str, *, protect: bool) -> tuple[str, bool]:
    class Runs:
        def decide(self, name: str, args: Mapping[str, Any]) -> Any:
            from agent_cli.agent.approvals import Decision

            return Decision(True, protect=protect)

    runner = ToolRunner(default_tools(), Runs(), Hooks())
    output, _ = run_through(
        runner.run(ToolUse("t1", "bash", {"command": command}), ToolContext(project, sandbox=sandbox))
    )
    return output.content, output.sandbox_denied


@needs_bwrap
@pytest.mark.parametrize("protect", [True, False])
def test_a_command_auto_mode_ran_cannot_write_the_protected_files(protect: bool, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    sandbox = Confinement.for_session(
        "workspace-write",
        project,
        home=tmp_path / "home",
        state_dir=tmp_path / "state",
        verdict=VERDICT,
        protected=protected_paths(project),
    )
    text, denied = _run(
        sandbox,
        project,
        "echo ok > made.txt; echo '#!/bin/sh' > .git/hooks/pre-commit; "
        "echo '[core] fsmonitor = x' >> .git/config",
        protect=protect,
    )
    assert (project / "made.txt").read_text() == "ok\n", "the project stays writable"
    assert (project / ".git" / "hooks" / "pre-commit").exists() is not protect
    assert ("fsmonitor" in (project / ".git" / "config").read_text()) is not protect
    assert denied is protect
    if protect:
        assert "denied by the sandbox: write to a protected file" in text


@needs_bwrap
def test_a_commit_still_works_under_the_protection(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    sandbox = Confinement.for_session(
        "workspace-write",
        project,
        home=tmp_path / "home",
        state_dir=tmp_path / "state",
        verdict=VERDICT,
        protected=protected_paths(project),
    )
    git = "git -c user.name=t -c user.email=t@example.com"
    text, denied = _run(sandbox, project, "git init -q .", protect=True)
    assert not denied, text
    text, denied = _run(
        sandbox,
        project,
        f"echo a > a.txt && git add a.txt && {git} commit -qm one && git log --oneline",
        protect=True,
    )
    assert not denied and "one" in text, text


def _protected_sandbox(tmp_path: Path, project: Path) -> Confinement:
    return Confinement.for_session(
        "workspace-write",
        project,
        home=tmp_path / "home",
        state_dir=tmp_path / "state",
        verdict=VERDICT,
        protected=protected_paths(project),
    )


@needs_bwrap
@pytest.mark.parametrize("protect", [True, False])
def test_the_git_folder_cannot_be_renamed_away_and_replaced(protect: bool, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    sandbox = _protected_sandbox(tmp_path, project)
    command = "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"
    text, _ = _run(sandbox, project, command, protect=protect)
    assert (project / ".git" / "hooks" / "pre-commit").exists() is not protect, text
    if protect:
        assert "Device or resource busy" in text


@needs_bwrap
@pytest.mark.parametrize("protect", [True, False])
def test_a_protected_path_a_command_creates_is_said_in_its_result(protect: bool, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    sandbox = _protected_sandbox(tmp_path, project)
    text, _ = _run(
        sandbox,
        project,
        "mkdir -p .git/hooks && echo x > .git/hooks/pre-commit && touch .envrc",
        protect=protect,
    )
    assert (project / ".git" / "hooks" / "pre-commit").exists()
    said = "this command created .envrc, .git/hooks: files that make git" in text
    assert said is protect, text

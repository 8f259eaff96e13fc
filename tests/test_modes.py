"""Approval modes (agent/modes.py) over the real tool registry and real tools in a temp dir: what
runs without asking, what asks, what plan mode refuses (and tells the model), and how Shift+Tab
steps through them; the flag and the config key that start a session in one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import Answer, InteractiveApprover
from agent_cli.agent.modes import PLAN_REFUSAL, ModalApprover, ModeState, next_mode
from agent_cli.agent.rule_guard import ProjectGuard
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.errors import ConfigError
from agent_cli.tools.registry import default_tools


class Asked:
    """The user: says no, and remembers what was asked."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def __call__(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        self.names.append(name)
        return "no"


def approver(mode: str) -> tuple[ModalApprover, Asked, ModeState]:
    tools = default_tools()
    asked = Asked()
    state = ModeState(mode)  # type: ignore[arg-type]
    inner = InteractiveApprover(asked, ("git status",), approval_of=tools.approval)
    guard = ProjectGuard(Path.cwd(), approval_of=tools.approval, effect_of=tools.effect)
    modal = ModalApprover(inner, state, approval_of=tools.approval, effect_of=tools.effect, guard=guard)
    return modal, asked, state


WRITE = ("write_file", {"path": "a.txt", "content": "x"})
EDIT = ("edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"})
BASH = ("bash", {"command": "rm -rf build"})
READ = ("read_file", {"path": "a.txt"})
ALLOWED = ("bash", {"command": "git status"})
MCP = ("mcp__notes__search", {"q": "x"})


def test_default_asks_for_changes_and_runs_readers_and_the_allow_list() -> None:
    modal, asked, _ = approver("default")
    assert modal.decide(*READ).allowed and modal.decide(*ALLOWED).allowed
    assert not modal.decide(*WRITE).allowed and not modal.decide(*BASH).allowed
    assert asked.names == ["write_file", "bash"]


def test_accept_edits_runs_edits_without_asking_and_still_asks_for_commands() -> None:
    modal, asked, _ = approver("acceptEdits")
    assert modal.decide(*WRITE).allowed and modal.decide(*EDIT).allowed
    assert not modal.decide(*BASH).allowed and not modal.decide(*MCP).allowed
    assert asked.names == ["bash", "mcp__notes__search"]


def test_plan_runs_only_readers_and_tells_the_model_why_without_asking() -> None:
    modal, asked, _ = approver("plan")
    assert modal.decide(*READ).allowed
    for call in (WRITE, EDIT, BASH, ALLOWED, MCP):
        decision = modal.decide(*call)
        assert not decision.allowed and PLAN_REFUSAL in decision.reason and not decision.stop
    assert asked.names == [], "plan mode asks nothing"


def test_bypass_runs_everything() -> None:
    modal, asked, _ = approver("bypassPermissions")
    assert all(modal.decide(*call).allowed for call in (WRITE, BASH, MCP))
    assert asked.names == []


def test_shift_tab_cycles_ask_accept_edits_plan_and_the_approver_follows() -> None:
    modal, _, state = approver("default")
    assert [state.cycle() for _ in range(4)] == ["acceptEdits", "plan", "auto", "default"]
    assert next_mode("bypassPermissions") == "default"
    state.cycle()
    assert modal.decide(*WRITE).allowed, "the approver reads the mode on each call"
    state.cycle()
    assert not modal.decide(*WRITE).allowed


def test_accept_edits_does_not_widen_where_an_edit_may_write(tmp_path: Path) -> None:
    from agent_cli.tools.base import ToolContext

    modal, _, _ = approver("acceptEdits")
    outside = str(tmp_path.parent / "outside.txt")
    assert modal.decide("write_file", {"path": outside, "content": "x"}).allowed
    ctx = ToolContext(root=tmp_path)
    output = default_tools().run("write_file", {"path": outside, "content": "x"}, ctx)
    assert output.is_error and not Path(outside).exists(), "the tool keeps to the project"


def settings_with(tmp_path: Path, flags: Flags, user: str = "", project: str = "") -> Any:
    home = tmp_path / "cfg"
    (home / "agent-cli").mkdir(parents=True, exist_ok=True)
    (home / "agent-cli" / "config.toml").write_text(user)
    root = tmp_path / "proj"
    (root / ".agent").mkdir(parents=True, exist_ok=True)
    (root / ".agent" / "config.toml").write_text(project)
    return load_settings(config_path=None, env={"XDG_CONFIG_HOME": str(home)}, flags=flags, cwd=root)


def test_the_flag_and_the_users_config_start_a_mode_and_a_project_cannot(tmp_path: Path) -> None:
    assert settings_with(tmp_path, Flags(permission_mode="plan")).approvals.mode == "plan"
    assert settings_with(tmp_path, Flags(), user='[approvals]\nmode = "acceptEdits"\n').approvals.mode == (
        "acceptEdits"
    )
    with pytest.raises(ConfigError, match=r"approvals\.mode cannot be set in a project file"):
        settings_with(tmp_path, Flags(), project='[approvals]\nmode = "acceptEdits"\n')
    bypass = settings_with(tmp_path, Flags(permission_mode="bypassPermissions")).approvals
    assert bypass.yes and bypass.mode == "bypassPermissions"
    assert settings_with(tmp_path, Flags(yes=True)).approvals.mode == "bypassPermissions"
    with pytest.raises(ConfigError, match=r"--permission-mode.*must be one of"):
        settings_with(tmp_path, Flags(permission_mode="yolo"))

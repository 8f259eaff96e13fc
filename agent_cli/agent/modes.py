"""Approval modes: how much runs without asking, with Claude Code's names; Shift+Tab cycles them in the REPL.

    default            every call that changes something asks (approvals.allow and "always" as ever)
    acceptEdits        the file editors (write_file, edit_file) run without asking (where they may
                       write: the project, unless tools.allow_outside_root widens it), except on the
                       files that make tools run commands (`.git/`, `.gitattributes`, `.mcp.json` ...:
                       `run_files`), which ask; bash and the rest as in default (no command runs
                       unasked that would not in default)
    plan               only the tools that never ask (read, search, recall) run; any other call is
                       refused without asking, and the refusal tells the model to present its plan
    auto               inside an active sandbox, commands and edits that stay in the project run
                       without asking; what the sandbox cannot hold still asks (`agent.auto_mode`).
                       Where no sandbox confines, it says so once and asks as default does
    bypassPermissions  every call runs (--yes)

`--permission-mode` (or `approvals.mode` in the user's config) starts a session in one. A mode
changes nothing the model is sent but the refusals: the system prompt and the tool list stay as
they are, so the provider's prompt cache does too. An MCP tool is never taken for a reader (its
read-only hint is only the server's word): plan mode refuses it, accept edits asks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agent_cli.agent.approvals import ApprovalOf, Approver, Decision
from agent_cli.agent.auto_mode import AutoMode
from agent_cli.agent.rule_guard import RuleGuard
from agent_cli.config.settings import PermissionMode
from agent_cli.tools.base import FileEffect

__all__ = ["CYCLE", "LABELS", "PLAN_REFUSAL", "ModalApprover", "ModeState", "next_mode"]

# What Shift+Tab steps through: Claude Code's order (auto after plan; bypass is never stepped into).
CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "auto")
LABELS: dict[PermissionMode, str] = {
    "default": "",
    "acceptEdits": "accept edits",
    "plan": "plan mode",
    "auto": "auto mode",
    "bypassPermissions": "bypass permissions",
}
PLAN_REFUSAL = (
    "the session is in plan mode: only tools that read run, and nothing is changed. Do not retry "
    "this call: finish reading what you need, then present your plan to the user (they leave plan "
    "mode with Shift+Tab, and then you may carry it out)"
)


def next_mode(mode: PermissionMode) -> PermissionMode:
    """The mode after `mode` in the cycle (bypassPermissions, outside it, steps to default)."""
    if mode not in CYCLE:
        return CYCLE[0]
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


class ModeState:
    """The session's mode: one value the approver reads on each call and the REPL switches.
    `sandboxed`: the session's sandbox confines commands (auto mode needs it); `unconfined_why`:
    why it does not."""

    def __init__(
        self, mode: PermissionMode = "default", *, sandboxed: bool = False, unconfined_why: str = "off"
    ) -> None:
        self.mode: PermissionMode = mode
        self.sandboxed = sandboxed
        self.unconfined_why = unconfined_why
        self._told = False

    def cycle(self) -> PermissionMode:
        self.mode = next_mode(self.mode)
        return self.mode

    def unconfined_notice(self) -> str | None:
        """The one line, once per session, that auto mode without a sandbox asks as default does."""
        if self.mode != "auto" or self.sandboxed or self._told:
            return None
        self._told = True
        return (
            f"auto mode runs commands unasked only inside the sandbox, and none confines them here "
            f"({self.unconfined_why}): every command and edit is asked, as in default mode"
        )


class ModalApprover:
    """The mode first, then the approver the session was built with (it asks, or refuses headless)."""

    def __init__(
        self,
        inner: Approver,
        state: ModeState,
        *,
        approval_of: ApprovalOf,
        effect_of: Callable[[str], FileEffect],
        guard: RuleGuard,
        auto: AutoMode | None = None,
    ) -> None:
        self.inner = inner
        self.state = state
        self.approval_of = approval_of
        self.effect_of = effect_of
        self.guard = guard
        self.auto = auto  # None: no sandbox was given, and auto mode is default mode

    def refused_by_sandbox(self, name: str, args: Mapping[str, Any]) -> None:
        """The sandbox refused this call: auto mode asks before it runs again."""
        if self.auto is not None:
            self.auto.refused_by_sandbox(name, args)

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        mode = self.state.mode
        if mode == "bypassPermissions":
            return Decision.allow()
        if mode == "plan":
            if self.approval_of(name) == "never":
                return Decision.allow()
            return Decision.deny(f"{name} was not run: {PLAN_REFUSAL}")
        if mode == "acceptEdits" and self.effect_of(name) == "path" and self.guard(name, args) is None:
            # The tools that change the one file their path names (write_file, edit_file); each
            # keeps to the paths it may write. A file that makes tools run commands goes on to
            # the inner approver, which asks (or refuses, headless) and says why.
            return Decision.allow()
        if mode == "auto" and self.auto is not None:
            unasked = self.auto.decide(name, args, self.guard)
            if unasked is not None:
                return unasked
        return self.inner.decide(name, args)

"""Why a call that a rule would run unasked is asked all the same: the project's own programs.

A rule (an `approvals.allow` entry, an "always" answer, accept-edits mode) trusts a program or a
tool, never what the project tells it to run. `ProjectGuard(root)` is the one place that says
why a call must be asked in spite of a rule (None: the rule may run it):

- a file tool's write to a file that makes tools run commands (`run_files`: `.git/`,
  `.gitattributes`, `.agent/`, `.mcp.json`, `.envrc` ...), or to a project file the session's
  hooks or MCP servers run (`./hooks/check.sh`);
- a shell command whose program is git, in a repository whose config or hooks name programs
  (`git_trust`).

The approvers (`approvals`, `modes`) ask it before a rule runs a call, and show its answer in the
question (or in the refusal, headless).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

from agent_cli.agent.git_trust import git_line_reason
from agent_cli.agent.run_files import named_file_reason, run_file_reason
from agent_cli.agent.shell_words import plain_command
from agent_cli.tools.base import Approval, FileEffect
from agent_cli.tools.registry import known_tools

__all__ = ["ProjectGuard", "RuleGuard"]

# (tool name, arguments) -> why a rule must not run the call unasked, or None.
RuleGuard: TypeAlias = Callable[[str, Mapping[str, Any]], str | None]


class ProjectGuard:
    """The project at `root`: its files that run commands, and what its repository makes git run."""

    def __init__(
        self,
        root: Path,
        *,
        approval_of: Callable[[str], Approval] | None = None,
        effect_of: Callable[[str], FileEffect] | None = None,
        env: Mapping[str, str] | None = None,
        run_by_extensions: Iterable[Path] = (),
    ) -> None:
        self.root = root
        # The project files the session's hooks and MCP servers run: written only when asked.
        self.run_by_extensions = frozenset(p.resolve() for p in run_by_extensions)
        self.approval_of = approval_of or known_tools().approval
        self.effect_of = effect_of or known_tools().effect
        self.env = env  # None: the process environment, as the bash tool's commands get it

    def __call__(self, name: str, args: Mapping[str, Any]) -> str | None:
        if self.effect_of(name) == "path":
            path = args.get("path")
            return run_file_reason(self.root, path) or named_file_reason(
                self.root, path, self.run_by_extensions
            )
        command = args.get("command")
        if self.approval_of(name) != "command" or not isinstance(command, str):
            return None
        line = plain_command(command)
        if line is None:
            return None  # not one plain command: no rule covers it, it is asked anyway
        return git_line_reason(line, self.root, self.env)

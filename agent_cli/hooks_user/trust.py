"""Which hooks run: the user's own always; a project's own only once the user approved them.

Hooks from the project's `.agent/config.toml` (or its Claude Code `.claude/settings.json` and
`.claude/settings.local.json`) came with the repository, so they run commands the user has not
read. Each is approved by a fingerprint of its whole definition (event, matcher, command,
timeout, and for Claude Code's the file: `store.project_approvals`), so a changed hook asks
again. In the REPL the user is asked once at start, every unapproved command listed exactly
(control characters written out), with a line for each command that runs a file of the
project: the approval covers the command, not that file, which runs as it is each time; headless
(`agent -p`) runs only approved ones, or all with `--yes`, and says in one line how to approve
the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_cli.agent.approvals import APPROVE_PROJECT_HOOKS, Asker
from agent_cli.core.text import visible_exact
from agent_cli.hooks_user.config import HookSpec
from agent_cli.store.project_approvals import (
    ProjectApprovals,
    fingerprint,
    project_files_run,
    shell_words,
    unpinned_note,
)

__all__ = ["approval_name", "hooks_to_run", "question"]

KIND = "hook"


def approval_name(spec: HookSpec) -> str:
    return f"{spec.event}:{fingerprint(spec.definition())[:16]}"


def question(specs: Sequence[HookSpec], root: Path | None = None) -> str:
    """The one question the REPL asks: every command exactly as it would run, and the files of
    the project (`root`) a command runs, which the approval does not pin."""
    lines = [
        f"This project's files define {len(specs)} hook{'s' if len(specs) != 1 else ''} that run commands:"
    ]
    for spec in specs:
        matcher = f" [{visible_exact(spec.matcher)}]" if spec.matcher else ""
        lines.append(f"  {spec.event}{matcher}: {visible_exact(spec.command)}   ({spec.where})")
        files = project_files_run(shell_words(spec.command), root) if root is not None else []
        if files:
            lines.append(f"    {unpinned_note(files, 'each time the hook runs')}")
    lines.append("Run them in this project (asked again if a command changes)?")
    return "\n".join(lines)


def hooks_to_run(
    specs: Sequence[HookSpec], approvals: ProjectApprovals, *, ask: Asker | None, yes: bool
) -> tuple[tuple[HookSpec, ...], list[str]]:
    """The hooks to run, and notices for the user (skipped hooks, an approval not saved)."""
    pending = [
        s for s in specs if s.project and not approvals.approved(KIND, approval_name(s), s.definition())
    ]
    if not pending or yes:
        return tuple(specs), []
    n = len(pending)
    some = f"{n} project hook{'s' if n != 1 else ''}"
    if ask is None:
        note = (
            f"{some} from {_files(pending)} not approved, so not run; approve them once by starting "
            "`agent` in this project (the REPL asks), or run with --yes"
        )
        return tuple(s for s in specs if s not in pending), [note]
    answer = ask(APPROVE_PROJECT_HOOKS, {"question": question(pending, Path(approvals.project))}, None)
    if answer not in ("yes", "always"):
        return tuple(s for s in specs if s not in pending), [f"{some} not approved: not run this session"]
    notices: list[str] = []
    try:
        for spec in pending:
            approvals.approve(KIND, approval_name(spec), spec.definition())
    except OSError as exc:
        notices.append(f"the approval of {some} could not be saved ({exc}); they run this session only")
    return tuple(specs), notices


def _files(specs: Sequence[HookSpec]) -> str:
    """The project files the hooks come from: `.agent/config.toml`, `.claude/settings.json`."""
    names = [s.where.split(":", 1)[0] if s.dialect == "claude" else ".agent/config.toml" for s in specs]
    return " and ".join(dict.fromkeys(names))

"""Which skills the model is offered: the user's own always; a project's only once approved.

A project's `.claude/skills` came with the repository: its text would reach the model as
instructions the user never read. Each project skill is approved by a fingerprint of its name,
description and body (`Skill.definition`, `store.project_approvals`, kind "skill"), so a changed
skill asks again, as a project's hooks and MCP servers do. In the REPL the user is asked once at
start, every unapproved skill listed with its description and file (control characters written
out); headless (`agent -p`) offers only approved ones, or all with `--yes`, and says in one line
how to approve the rest. A skill not offered is neither listed nor loadable.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.agent.approvals import APPROVE_PROJECT_SKILLS, Asker
from agent_cli.core.text import visible_exact
from agent_cli.prompt.skills import Skill, Skills
from agent_cli.store.project_approvals import ProjectApprovals

__all__ = ["question", "skills_to_offer"]

KIND = "skill"
_SHOWN = 200  # characters of a description in the question


def question(skills: Sequence[Skill]) -> str:
    n = len(skills)
    lines = [
        f"This project ships {n} skill{'s' if n != 1 else ''} (instructions the model may load and follow):"
    ]
    for skill in skills:
        about = " ".join(skill.description.split())
        about = about if len(about) <= _SHOWN else about[: _SHOWN - 1] + "…"
        lines.append(f"  {skill.name}: {visible_exact(about)}   ({skill.shown_path})")
    lines.append("Offer them to the model in this project (asked again if one changes)?")
    return "\n".join(lines)


def skills_to_offer(
    found: Skills, approvals: ProjectApprovals, *, ask: Asker | None, yes: bool
) -> tuple[tuple[Skill, ...], list[str]]:
    """The skills to offer the model, and lines for the user (skills not offered, an approval not saved)."""
    pending = [s for s in found.project() if not approvals.approved(KIND, s.name, s.definition())]
    if not pending or yes:
        return found.skills, []
    kept = tuple(s for s in found.skills if s not in pending)
    n = len(pending)
    some = f"{n} project skill{'s' if n != 1 else ''} from .claude/skills"
    if ask is None:
        note = (
            f"{some} not approved, so not offered to the model; approve them once by starting `agent` "
            "in this project (the REPL asks), or run with --yes"
        )
        return kept, [note]
    answer = ask(APPROVE_PROJECT_SKILLS, {"question": question(pending)}, None)
    if answer not in ("yes", "always"):
        return kept, [f"{some} not approved: not offered this session"]
    try:
        for skill in pending:
            approvals.approve(KIND, skill.name, skill.definition())
    except OSError as exc:
        return found.skills, [f"the approval of {some} could not be saved ({exc}); offered this session only"]
    return found.skills, []

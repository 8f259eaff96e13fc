"""`/goal` as the user meets it: set a goal and start on it, show its progress, clear it.

    /goal TEXT [--check COMMAND] [--budget USD]   set it (replacing any other) and start at once
    /goal                                         its text, check, last check, rounds, spent/budget
    /goal clear                                   end it (stop, off, reset, none, cancel too)

The goal's text and check are the user's, but a check's output is a command's: every line shown here
goes through `Renderer.line`, which writes control characters out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli.core.errors import CommandError
from agent_cli.core.goals import Goal, parse_goal

if TYPE_CHECKING:
    from agent_cli.ui.command_kit import CommandKit

__all__ = ["MARK", "goal", "goal_lines", "goal_mark"]

LAST_LINES = 6  # of the last check's output, in /goal
MARK = " · ◎ goal"
ENDED = {"met": "met", "budget_spent": "stopped: its budget is spent", "cleared": "cleared"}


def goal_mark(goal: Goal | None, room: int | None = None) -> str:
    """The toolbar's " · ◎ goal" while a goal is active ("" otherwise, or without room for it)."""
    if goal is None or not goal.active or (room is not None and len(MARK) > room):
        return ""
    return MARK


def goal_lines(goal: Goal, spent: float) -> list[str]:
    """What /goal shows of a goal: its state, text, check, last check, rounds and spend."""
    spec = goal.spec
    state = "active" if goal.active else ENDED[goal.status]
    lines = [f"goal ({state}): {spec.text}"]
    lines.append(f"check: {spec.check}" if spec.check else "check: none (the model says GOAL MET)")
    last = goal.last
    if last is not None:
        verdict = "did not finish" if last.exit_code is None else f"exit {last.exit_code}"
        lines.append(f"last check: {verdict}")
        tail = [line for line in last.output.splitlines() if line.strip()][-LAST_LINES:]
        lines += [f"  {line}" for line in tail]
    budget = f" of ${spec.budget:.2f}" if spec.budget is not None else " (no budget)"
    lines.append(f"rounds: {goal.rounds} · spent: ${spent:.2f}{budget}")
    return lines


def goal(kit: CommandKit, arg: str) -> None:
    """`/goal [TEXT [--check COMMAND] [--budget USD] | clear]`."""
    session = kit.session
    try:
        parsed = parse_goal(arg)
    except ValueError as exc:
        raise CommandError(f"/goal: {exc}") from None
    if parsed == "show":
        current = session.goal
        if current is None:
            kit.renderer.info("no goal: /goal TEXT [--check COMMAND] [--budget USD] sets one, and starts")
            return
        spent = session.goal_spent() if current.active else current.spent
        for line in goal_lines(current, spent):
            kit.renderer.line(line)
        return
    if parsed == "clear":
        ended = session.clear_goal()
        kit.renderer.info("goal cleared" if ended is not None else "no active goal to clear")
        return
    kit.drive(session.pursue(parsed))

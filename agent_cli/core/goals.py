"""The session's goal as values: what `/goal` and `--goal` say, the goal's state, its note, and the
choice made when the model ends a turn under it.

- `parse_goal(text)`: `TEXT [--check COMMAND] [--budget USD]` (the REPL's argument and `--goal`'s
  value alike) as a `GoalSpec`, a `GoalAction` ("show", "clear"), or `ValueError` with one line to
  show. The options are read with shlex; TEXT is the words before the first option, *as typed*
  (quotes and spacing kept), since the goal rides byte for byte in every request.
- `Goal`: the goal in force and its progress (rounds, USD spent, the last check). Frozen: each
  change is a new value (`dataclasses.replace`); the session's keeper (agent/goal_run.py) holds it.
- `goal_note(goal)`: the text every request carries while the goal is active (the *note*): the
  goal's text and its check, byte for byte; the same text for the same goal, so a request can tell
  whether it holds it by comparing text (context/protocol.py places it, as it does the todo list's).
- `judge(goal, passed, spent)`: after a round, what comes next (`GoalVerdict`: "met", "go_on",
  "budget_spent"); pure, so the whole decision is tested as a table.
- `declared_met(reply)`: without a check, whether the model's reply says the goal is met (a line
  `GOAL MET`).
- `goal_to_json` / `goal_from_json`: the goal as the session log keeps it, and read back (a record
  that does not read as a goal is None, never raised).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "MAX_CHECK",
    "MAX_TEXT",
    "MET_MARK",
    "CheckResult",
    "Goal",
    "GoalAction",
    "GoalSpec",
    "GoalStatus",
    "GoalVerdict",
    "declared_met",
    "goal_from_json",
    "goal_note",
    "goal_to_json",
    "judge",
    "parse_goal",
]

MAX_TEXT = 4000  # Claude Code's limit for a goal's condition: the note rides in every request
MAX_CHECK = 2000
LOGGED_OUTPUT = 4000  # characters of the last check's output the session log keeps
MET_MARK = "GOAL MET"  # without a check, the model ends its reply with this line when the goal is met
CLEAR_WORDS = frozenset({"clear", "stop", "off", "reset", "none", "cancel"})  # Claude Code's aliases

GoalStatus: TypeAlias = Literal["active", "met", "budget_spent", "cleared"]
GoalVerdict: TypeAlias = Literal["met", "go_on", "budget_spent"]
GoalAction: TypeAlias = Literal["show", "clear"]

NOTE_OPEN = "<goal>"
NOTE_CLOSE = "</goal>"
NOTE_HEAD = (
    "The user's goal for this session (kept in every request, through every compaction, until it is "
    "met or the user clears it). Work toward it without waiting to be asked:"
)
_OPTION = re.compile(r"(?:^|\s)--(?:check|budget)(?:=|\s|$)")


@dataclass(frozen=True, slots=True)
class GoalSpec:
    """What the user asked for: the goal, the command that says it is met, the USD it may spend."""

    text: str
    check: str = ""  # a shell command: the goal is met when it exits 0 ("": the model says so)
    budget: float | None = None  # USD from when the goal is set; None: no limit


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The check's last run: its exit code (None: it did not finish) and its output, as capped."""

    exit_code: int | None
    output: str = ""

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True, slots=True)
class Goal:
    spec: GoalSpec
    status: GoalStatus = "active"
    rounds: int = 0  # turns that ended under the goal (each ran the check, or read the reply)
    spent: float = 0.0  # USD spent under the goal before this process's bill (a continued session)
    last: CheckResult | None = None

    @property
    def active(self) -> bool:
        return self.status == "active"


def _budget(value: str) -> float:
    try:
        budget = float(value.strip().removeprefix("$"))
    except ValueError:
        raise ValueError(f"--budget takes an amount in USD, like --budget 2.50 (got {value!r})") from None
    if not math.isfinite(budget) or budget <= 0:
        raise ValueError(f"--budget must be more than 0 USD (got {value!r})")
    return budget


def parse_goal(text: str) -> GoalSpec | GoalAction:
    """`/goal`'s argument (or `--goal`'s value) read: a new goal, "show" (nothing given) or "clear"."""
    stripped = text.strip()
    if not stripped:
        return "show"
    if stripped.lower() in CLEAR_WORDS:
        return "clear"
    found = _OPTION.search(text)
    head = (text if found is None else text[: found.start()]).strip()
    options = "" if found is None else text[found.start() :]
    try:
        words = shlex.split(options)
    except ValueError as exc:  # an unclosed quote
        raise ValueError(f"cannot read the goal's options: {str(exc).lower()}") from None
    values: dict[str, str] = {}
    rest = iter(words)
    for word in rest:
        name, eq, value = word.partition("=")
        if name not in ("--check", "--budget"):
            raise ValueError(f"unexpected {word!r} after the options: the goal's text comes first")
        if name in values:
            raise ValueError(f"{name} is given twice")
        if not eq:
            given = next(rest, None)
            if given is None:
                raise ValueError(f"{name} needs a value: /goal TEXT --check 'pytest -q' --budget 2")
            value = given
        values[name] = value
    if not head:
        raise ValueError("the goal needs its text: /goal make the tests pass --check 'pytest -q'")
    if len(head) > MAX_TEXT:
        raise ValueError(f"the goal is {len(head):,} characters; at most {MAX_TEXT:,}")
    check = values.get("--check")
    if check is not None and not check.strip():
        raise ValueError("--check needs a command: --check 'pytest -q'")
    if check is not None and len(check) > MAX_CHECK:
        raise ValueError(f"--check is {len(check):,} characters; at most {MAX_CHECK:,}")
    budget = _budget(values["--budget"]) if "--budget" in values else None
    return GoalSpec(head, check or "", budget)


def goal_note(goal: Goal | None) -> str:
    """The text every request carries while the goal is active ("" otherwise): its text and check as given."""
    if goal is None or not goal.active:
        return ""
    spec = goal.spec
    if spec.check:
        how = (
            "When you end your turn, the agent runs this check (a shell command in the project); the "
            "goal is met when it exits 0. While it fails, its output comes back to you and you go on:\n"
            f"{spec.check}"
        )
    else:
        how = (
            f"When the goal is met, end your reply with a line of its own: {MET_MARK}. Until then, "
            "each time you end your turn you are asked to go on."
        )
    return "\n".join([NOTE_OPEN, NOTE_HEAD, spec.text, how, NOTE_CLOSE])


def declared_met(reply: str) -> bool:
    """Whether a reply declares the goal met: a line that is `GOAL MET` (Markdown emphasis and a full
    stop around it allowed; `GOAL NOT MET` is not it)."""
    return any(line.strip().strip("*_`.:!").strip().upper() == MET_MARK for line in reply.splitlines())


def judge(goal: Goal, passed: bool, spent: float) -> GoalVerdict:
    """After a round: met when the check passed (or the reply declared it, without a check), even
    with the budget gone; else go on while `spent` (USD under the goal) is within the budget."""
    if passed:
        return "met"
    budget = goal.spec.budget
    if budget is not None and spent >= budget:
        return "budget_spent"
    return "go_on"


def goal_to_json(goal: Goal) -> dict[str, Any]:
    spec = goal.spec
    data: dict[str, Any] = {
        "text": spec.text,
        "check": spec.check,
        "budget": spec.budget,
        "status": goal.status,
        "rounds": goal.rounds,
        "spent": goal.spent,
    }
    if goal.last is not None:
        # The output's tail only: the log keeps a record a round, and /goal shows the last lines.
        data["last"] = {"exit_code": goal.last.exit_code, "output": goal.last.output[-LOGGED_OUTPUT:]}
    return data


def goal_from_json(data: Any) -> Goal | None:
    """A goal as the log recorded it; None for a record that does not read as one (or no goal)."""
    if not isinstance(data, Mapping):
        return None
    text, check, budget = data.get("text"), data.get("check", ""), data.get("budget")
    status, rounds, spent = data.get("status"), data.get("rounds", 0), data.get("spent", 0.0)
    if not isinstance(text, str) or not text or not isinstance(check, str):
        return None
    if status not in ("active", "met", "budget_spent", "cleared"):
        return None
    if budget is not None and not (isinstance(budget, int | float) and budget > 0):
        return None
    if not isinstance(rounds, int) or not isinstance(spent, int | float):
        return None
    last = data.get("last")
    result = None
    if isinstance(last, Mapping):
        code, output = last.get("exit_code"), last.get("output", "")
        if (code is None or isinstance(code, int)) and isinstance(output, str):
            result = CheckResult(code, output)
    spec = GoalSpec(text, check, None if budget is None else float(budget))
    return Goal(spec, status, rounds, float(spent), result)

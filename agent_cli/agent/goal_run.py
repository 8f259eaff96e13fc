"""The goal's run: after each turn under an active goal, its check (or the model's word), the verdict,
and the next round, until the goal is met, its budget is spent, or the user stops it.

    keeper = GoalKeeper(check=..., usage=..., log=..., note=...)
    keeper.set(spec)                    /goal TEXT, --goal: from now on (logged; its note rides)
    rounds(keeper, first, turn)         a turn's events, then as many rounds as the goal takes, as
                                        one stream with one result at its end
    keeper.clear()                      /goal clear

A *round* is one turn of the loop: the first is the user's prompt (or, for `/goal TEXT`, the goal's
note itself: the condition is the work order, as in Claude Code); each later one has the check's
output as its prompt. When a round ends with the model's answer (`end_turn`), the keeper runs the
check (a shell command the user typed: unasked, in the session's sandbox, capped by L0 like a tool's
output) and `core.goals.judge` says what comes next. Without a check, the model's own reply says
whether the goal is met (a line `GOAL MET`), as Codex's goal is completed by the model (its
`update_goal`): a second model reading the whole conversation each round (Claude Code's evaluator)
would cost a request the size of the context every round; a check is the deterministic judge.

A round that ends any other way (Esc or Ctrl-C, an error, the iteration limit, a hook's block) ends
the run; the goal stays set, and the next turn the user starts runs the check again when it ends.
A compaction is only events inside a round: it never ends the run. Stop hooks run at the end of
every round, inside the loop, before the check: one that blocks keeps the model going (its feedback
is the next message), and the check runs only when the hooks let the round end. Each round starts
with `stop_hook_active` false: the goal's continuation is not a Stop hook's.

The budget is USD spent since the goal was set (this process's bill, priced per call as /cost
prices it, plus what a continued session had spent), checked when a round ends: a round under way
finishes. Models whose prices are unknown count as 0 (the event says "spent unknown").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

from agent_cli.core.events import ErrorEvent, Event, GoalEvent, ResultEvent, StatusEvent
from agent_cli.core.goals import (
    MET_MARK,
    CheckResult,
    Goal,
    GoalSpec,
    GoalStatus,
    declared_met,
    goal_from_json,
    goal_note,
    goal_to_json,
    judge,
)
from agent_cli.core.messages import Usage
from agent_cli.providers.models import cost, lookup
from agent_cli.store.log_records import LogRecord, StateRecord
from agent_cli.tools.base import ToolOutput

__all__ = ["CHECK_TIMEOUT", "TOPIC", "GoalKeeper", "check_result", "logged_goal", "rounds"]

TOPIC = "goal"  # the session log's state topic: core.goals.goal_to_json, or {} when none was ever set
CHECK_TIMEOUT = 600.0  # seconds: a test suite is the usual check (bash's own maximum)
_EXIT = re.compile(r"\[exit code (-?\d+)\]\s*\Z")


def check_result(output: ToolOutput) -> CheckResult:
    """What bash's output says of the check: its exit code from the status line it ends with (None:
    timed out, cancelled, killed, or refused), and the output as capped."""
    found = _EXIT.search(output.content)
    code = int(found.group(1)) if found else None
    if code is None and not output.is_error:
        code = 0
    return CheckResult(code, output.content)


def logged_goal(records: Sequence[LogRecord]) -> Goal | None:
    """The goal as the session log last recorded it (`--continue`, `/resume`)."""
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    return goal_from_json(last.data) if last is not None else None


class GoalKeeper:
    """The session's goal (`core.goals.Goal`) and what carries its verdicts out: the check run, the
    bill read, the state logged, the note handed to the loop. The choice itself is `judge`'s."""

    def __init__(
        self,
        *,
        check: Callable[[str], CheckResult],  # runs the check command: unasked, sandboxed, capped
        usage: Callable[[], Sequence[tuple[str, Usage]]],  # the session's bill: (model, usage) per call
        log: Callable[[dict[str, Any]], None],  # records the goal's state in the session log
        note: Callable[[str], None],  # the note every request carries from now on ("": none)
    ) -> None:
        self._check = check
        self._usage = usage
        self._log = log
        self._note = note
        self.goal: Goal | None = None
        self._mark = 0  # where this goal's part of the bill starts

    @property
    def active(self) -> bool:
        return self.goal is not None and self.goal.active

    def set(self, spec: GoalSpec) -> Goal:
        """A new goal from now on (replacing any other): its spend counts from here."""
        self._mark = len(self._usage())
        return self._keep(Goal(spec))

    def clear(self) -> Goal | None:
        """`/goal clear`: the active goal ends (its note stops riding); the ended one, or None."""
        if self.goal is None or not self.goal.active:
            return None
        return self._keep(dataclasses.replace(self.goal, status="cleared", spent=self.spent()))

    def restore(self, goal: Goal | None) -> None:
        """The goal as a session's log left it (`--continue`, `/resume`): not logged again."""
        self.goal = goal
        self._mark = len(self._usage())
        self._note(goal_note(goal))

    def spent(self) -> float:
        """USD spent under the goal: what an earlier run of the session had spent, and this run's calls
        since the goal was set or restored (unknown prices count as 0)."""
        earlier = self.goal.spent if self.goal is not None else 0.0
        return earlier + sum(_priced(model, usage) or 0.0 for model, usage in self._usage()[self._mark :])

    def priced(self) -> bool:
        """Whether every call under the goal has known prices (else `spent` is a lower bound)."""
        return all(_priced(model, usage) is not None for model, usage in self._usage()[self._mark :])

    def after(self, reply: str) -> tuple[GoalEvent, str | None]:
        """A round ended with `reply`: run the check (or read the reply), judge, keep the new state.
        The event to show, and the next round's prompt (None: the run ends)."""
        goal = self.goal
        assert goal is not None and goal.active
        spec = goal.spec
        last = self._check(spec.check) if spec.check else None
        passed = last.passed if last is not None else declared_met(reply)
        spent = self.spent()
        verdict = judge(goal, passed, spent)
        status: GoalStatus = "active" if verdict == "go_on" else verdict
        rounds = goal.rounds + 1
        kept = dataclasses.replace(goal, status=status, rounds=rounds, last=last or goal.last)
        if verdict != "go_on":  # an ended goal carries its spend whole; the next run's bill starts anew
            kept = dataclasses.replace(kept, spent=spent)
            self._mark = len(self._usage())
        self._keep(kept)
        money = self._money(spent)
        exit_code = last.exit_code if last is not None else None
        if verdict == "met":
            how = "its check passed" if last is not None else f"the model said {MET_MARK}"
            line = f"goal met after {_rounds(rounds)}: {how} ({money})"
            prompt = None
        elif verdict == "budget_spent":
            line = f"goal budget spent: {money} after {_rounds(rounds)}, the goal not met; /goal shows it"
            prompt = None
        else:
            line = f"goal not met yet ({_failed(last)}; round {rounds}, {money}): going on"
            prompt = _go_on(spec.check, last)
        event = GoalEvent(
            status=verdict,
            message=line,
            rounds=rounds,
            spent=spent if self.priced() else None,
            budget=spec.budget,
            exit_code=exit_code,
        )
        return event, prompt

    def _money(self, spent: float) -> str:
        budget = self.goal.spec.budget if self.goal is not None else None
        shown = f"${spent:.2f}" if self.priced() else f"${spent:.2f} (prices unknown)"
        return f"{shown} of ${budget:.2f}" if budget is not None else f"{shown} spent"

    def _keep(self, goal: Goal) -> Goal:
        self.goal = goal
        self._log(goal_to_json(goal))
        self._note(goal_note(goal))
        return goal


def _priced(model: str, usage: Usage) -> float | None:
    info = lookup(model)
    return None if info is None else cost(info, usage)


def _rounds(n: int) -> str:
    return f"{n} round" + ("" if n == 1 else "s")


def _failed(last: CheckResult | None) -> str:
    if last is None:
        return f"the reply did not say {MET_MARK}"
    if last.exit_code is None:
        return "the check did not finish"
    return f"the check exited {last.exit_code}"


def _go_on(check: str, last: CheckResult | None) -> str:
    """The next round's prompt: the check's output (as L0 capped it), or the question the model answers."""
    if last is None:
        return (
            f"The goal is not met yet: your reply did not end with a line {MET_MARK}. Go on working "
            f"toward it; when it is met, end your reply with that line."
        )
    how = "did not finish" if last.exit_code is None else f"exited {last.exit_code}"
    return f"The goal's check failed: `{check}` {how}. Its output:\n{last.output}\n\nGo on toward the goal."


def rounds(
    keeper: GoalKeeper, first: Iterator[Event], turn: Callable[[str], Iterator[Event]]
) -> Iterator[Event]:
    """The first turn's events, then a round for each failed check while the goal is active: one
    stream, whose one ResultEvent (the last round's, its iterations summed) comes last."""
    events, iterations = first, 0
    while True:
        result = yield from _withheld(events)
        if result is None:  # (the turn's stream ended without a result: nothing more to do)
            return
        iterations += result.iterations
        result = dataclasses.replace(result, iterations=iterations)
        if result.stop != "end_turn" or not keeper.active:
            yield result
            return
        try:
            if keeper.goal is not None and keeper.goal.spec.check:
                yield StatusEvent(text="running the goal's check")
            event, prompt = keeper.after(result.text)
            yield event
        except KeyboardInterrupt:  # Esc or Ctrl-C while the check ran, or as its verdict showed
            yield ErrorEvent(message="interrupted by the user", kind="interrupted")
            yield dataclasses.replace(result, stop="interrupted")
            return
        if prompt is None:
            yield result
            return
        events = turn(prompt)


def _withheld(events: Iterator[Event]) -> Generator[Event, None, ResultEvent | None]:
    """One turn's events but its result, which is returned. What is thrown in (the REPL's Ctrl-C,
    between two events) goes into the turn, as `yield from` would, so the loop ends it cleanly."""
    result: ResultEvent | None = None
    thrown: BaseException | None = None
    while True:
        try:
            if thrown is not None:
                if not isinstance(events, Generator):
                    raise thrown
                event = events.throw(thrown)
            else:
                event = next(events)
        except StopIteration:
            return result
        thrown = None
        if isinstance(event, ResultEvent):
            result = event
            continue
        try:
            yield event
        except GeneratorExit:
            if isinstance(events, Generator):
                events.close()
            raise
        except BaseException as exc:
            thrown = exc

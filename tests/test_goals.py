"""The goal: `/goal`'s syntax, the note every request carries, the verdict after a round, and the
rounds themselves, driven through the real loop with a scripted provider and a scripted check."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import AutoApprover
from agent_cli.agent.goal_run import TOPIC, GoalKeeper, check_result, logged_goal, rounds
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.loop import AgentLoop
from agent_cli.context.protocol import carried, with_note
from agent_cli.core.events import ErrorEvent, Event, GoalEvent, ResultEvent
from agent_cli.core.goals import (
    CheckResult,
    Goal,
    GoalSpec,
    declared_met,
    goal_from_json,
    goal_note,
    goal_to_json,
    judge,
    parse_goal,
)
from agent_cli.core.messages import Message, TextBlock, ToolResult, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.retry import RetryPolicy
from agent_cli.store.log_records import StateRecord
from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, say
from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.registry import default_tools

# -- the syntax ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("", "show"),
        ("   ", "show"),
        ("clear", "clear"),
        ("STOP", "clear"),
        ("make the tests pass", GoalSpec("make the tests pass")),
        ("make the tests pass --check 'pytest -q'", GoalSpec("make the tests pass", "pytest -q")),
        (
            'make tests pass --check "pytest -q" --budget 2',
            GoalSpec("make tests pass", "pytest -q", 2.0),
        ),
        ("fix it --budget $0.50 --check=make", GoalSpec("fix it", "make", 0.5)),
        # The text is kept as typed: quotes, a tab and doubled spaces included.
        ('fix  "the\tparser" --check true', GoalSpec('fix  "the\tparser"', "true")),
        ("a--check is part of a word", GoalSpec("a--check is part of a word")),
    ],
)
def test_the_goal_syntax(typed: str, expected: object) -> None:
    assert parse_goal(typed) == expected


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("--check 'pytest -q'", "needs its text"),
        ("fix --check", "--check needs a value"),
        ("fix --check ''", "--check needs a command"),
        ("fix --budget two", "--budget takes an amount in USD"),
        ("fix --budget 0", "more than 0"),
        ("fix --budget nan", "more than 0"),
        ("fix --check 'pytest", "cannot read the goal's options: no closing quotation"),
        ("fix --check a --check b", "--check is given twice"),
        ("fix --check true and more", "unexpected 'and'"),
        ("x" * 4001, "at most 4,000"),
    ],
)
def test_bad_syntax_is_one_line(typed: str, said: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        parse_goal(typed)
    message = str(caught.value)
    assert said in message and "\n" not in message


# -- the note, the marker, the verdict, the log form -------------------------------------------------

ODD = " make\tthe  parser — pass ✓ (שלום) "


def test_the_note_holds_text_and_check_byte_for_byte_while_active() -> None:
    goal = Goal(GoalSpec(ODD, "pytest -q  'tests/a b.py'", 2.0))
    note = goal_note(goal)
    assert ODD in note.split("\n") and "pytest -q  'tests/a b.py'" in note.split("\n")
    assert goal_note(goal) == note  # the same text for the same goal: a request holding it is known
    assert "GOAL MET" in goal_note(Goal(GoalSpec("x")))
    assert goal_note(Goal(GoalSpec("x"), status="met")) == "" and goal_note(None) == ""


def test_the_note_rides_beside_the_todo_list_and_before_a_summary_instruction() -> None:
    history = [Message.user("go"), Message.assistant("ok"), Message("user", (ToolResult("t1", "out"),))]
    placed = carried(history, "TODOS", "GOAL")
    assert placed is not None and [b for b in placed[-1].content if isinstance(b, TextBlock)] == [
        TextBlock("TODOS"),
        TextBlock("GOAL"),
    ]
    assert carried(placed, "TODOS", "GOAL") is None  # held: nothing is placed twice
    span = with_note(history[:2], "TODOS", "GOAL")
    assert span[-1] == Message("user", (TextBlock("TODOS"), TextBlock("GOAL")), span[-1].id)


@pytest.mark.parametrize(
    ("reply", "met"),
    [
        ("All done.\nGOAL MET", True),
        ("**GOAL MET.**", True),
        ("goal met", True),
        ("GOAL NOT MET", False),
        ("The goal met its match", False),
        ("", False),
    ],
)
def test_the_model_declares_the_goal_met_on_a_line_of_its_own(reply: str, met: bool) -> None:
    assert declared_met(reply) is met


@pytest.mark.parametrize(
    ("budget", "passed", "spent", "verdict"),
    [
        (None, True, 9.0, "met"),
        (None, False, 9.0, "go_on"),
        (1.0, False, 0.99, "go_on"),
        (1.0, False, 1.0, "budget_spent"),
        (1.0, True, 5.0, "met"),  # the check passed: met, even with the budget gone
    ],
)
def test_the_verdict(budget: float | None, passed: bool, spent: float, verdict: str) -> None:
    assert judge(Goal(GoalSpec("g", "c", budget)), passed, spent) == verdict


def test_the_log_form_round_trips_and_a_bad_record_is_none() -> None:
    goal = Goal(GoalSpec(ODD, "make", 2.5), "active", 3, 0.75, CheckResult(1, "boom\n[exit code 1]"))
    assert goal_from_json(goal_to_json(goal)) == goal
    long = Goal(GoalSpec("g"), last=CheckResult(1, "x" * 10_000 + "the end"))
    assert (
        goal_to_json(long)["last"]["output"].endswith("the end")
        and len(goal_to_json(long)["last"]["output"]) == 4000
    )
    assert goal_from_json({"text": "x", "status": "sideways"}) is None
    assert goal_from_json({"text": "", "status": "active"}) is None
    assert goal_from_json([]) is None
    records = [StateRecord("r1", "t", TOPIC, goal_to_json(goal)), StateRecord("r2", "t", "pins", {})]
    assert logged_goal(records) == goal and logged_goal(records[1:]) is None


def test_the_exit_code_is_read_off_bash_s_status_line() -> None:
    assert check_result(ToolOutput("ok\n[exit code 0]")) == CheckResult(0, "ok\n[exit code 0]")
    assert check_result(ToolOutput("no\n[exit code 2]", is_error=True)).exit_code == 2
    timed_out = ToolOutput("x\n[timed out after 600s; the command and its child processes were killed]", True)
    assert check_result(timed_out).exit_code is None and not check_result(timed_out).passed


# -- the rounds: the real loop, a scripted provider and check ----------------------------------------


class Rig:
    """A loop, a keeper whose check answers from a script, and the log the keeper writes."""

    def __init__(
        self,
        tmp_path: Path,
        script: list[Any],
        checks: list[CheckResult],
        context: Any = None,
        hooks: Hooks | None = None,
    ) -> None:
        self.provider = ScriptedProvider(script)
        self.loop = AgentLoop(
            provider=self.provider,
            tools=default_tools(),
            context=context or PassThroughContext(),
            system="You are a test agent.",
            log=MemorySession(),
            approver=AutoApprover(),
            tool_context=ToolContext(root=tmp_path),
            retry=RetryPolicy(max_retries=0, base_delay=0.0, max_delay=0.0),
            sleep=lambda s: None,
            hooks=hooks,
        )
        self.checks = checks
        self.ran: list[str] = []
        self.logged: list[dict[str, Any]] = []
        self.keeper = GoalKeeper(
            check=self._check,
            usage=lambda: self.loop.usage_log,
            log=self.logged.append,
            note=self.loop.frame_parts.set_goal_note,
        )

    def _check(self, command: str) -> CheckResult:
        self.ran.append(command)
        return self.checks.pop(0)

    def run(self, prompt: str) -> list[Event]:
        return list(rounds(self.keeper, self.loop.run(prompt), self.loop.run))


def priced(text: str, output_tokens: int) -> Completion:
    """A reply whose usage costs output_tokens × $15/M (claude-sonnet-4-5's output price)."""
    return Completion(Message.assistant(text), "end_turn", Usage(0, output_tokens))


def user_texts(request: Request) -> list[str]:
    return [
        b.text for m in request.messages if m.role == "user" for b in m.content if isinstance(b, TextBlock)
    ]


def test_a_check_that_fails_twice_then_passes_runs_three_rounds(tmp_path: Path) -> None:
    fails = [CheckResult(1, f"FAILED test_{n}\n[exit code 1]") for n in (1, 2)]
    rig = Rig(tmp_path, [say("one"), say("two"), say("three")], [*fails, CheckResult(0, "ok")])
    spec = rig.keeper.set(GoalSpec(ODD, "pytest -q")).spec
    events = rig.run("start")
    note = goal_note(Goal(spec))
    assert rig.ran == ["pytest -q"] * 3
    assert len(rig.provider.requests) == 3
    for request in rig.provider.requests:
        assert sum(t == note for t in user_texts(request)) == 1  # once, whole, in every request
    # Each later round's prompt is the failed check's output.
    assert "FAILED test_1" in user_texts(rig.provider.requests[1])[-1]
    assert "FAILED test_2" in user_texts(rig.provider.requests[2])[-1]
    goals = [e for e in events if isinstance(e, GoalEvent)]
    assert [g.status for g in goals] == ["go_on", "go_on", "met"]
    results = [e for e in events if isinstance(e, ResultEvent)]
    assert len(results) == 1 and results[0] is events[-1] and results[0].ok and results[0].text == "three"
    assert results[0].iterations == 3
    assert rig.keeper.goal is not None and rig.keeper.goal.status == "met" and rig.keeper.goal.rounds == 3
    assert rig.loop.frame.goal == ""  # a met goal no longer rides
    assert rig.logged[-1]["status"] == "met"


def test_the_budget_spent_ends_the_run_with_one_line(tmp_path: Path) -> None:
    # 20,000 output tokens at $15/M = $0.30 a round: a $0.50 budget lasts two rounds.
    script = [priced("working", 20_000) for _ in range(5)]
    rig = Rig(tmp_path, script, [CheckResult(1, "no")] * 5)
    rig.keeper.set(GoalSpec("g", "false", 0.5))
    events = rig.run("start")
    assert len(rig.provider.requests) == 2
    goals = [e for e in events if isinstance(e, GoalEvent)]
    assert [g.status for g in goals] == ["go_on", "budget_spent"]
    assert goals[-1].message.startswith("goal budget spent: $0.60 of $0.50 after 2 rounds")
    assert isinstance(events[-1], ResultEvent) and events[-1].ok
    assert rig.keeper.goal is not None and rig.keeper.goal.status == "budget_spent"


def test_the_budget_counts_from_when_the_goal_was_set(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [priced("before", 100_000), priced("after", 1_000)], [CheckResult(0, "")])
    list(rig.loop.run("earlier work"))  # $1.50 before the goal
    rig.keeper.set(GoalSpec("g", "true", 1.0))
    rig.run("go")
    assert rig.keeper.goal is not None and rig.keeper.goal.status == "met"
    assert rig.keeper.goal.spent == pytest.approx(0.015)


def test_without_a_check_the_model_says_when_the_goal_is_met(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [say("started"), say("Done, tests pass.\nGOAL MET")], [])
    rig.keeper.set(GoalSpec("write the docs"))
    events = rig.run("go")
    assert rig.ran == [] and len(rig.provider.requests) == 2
    assert "did not end with a line GOAL MET" in user_texts(rig.provider.requests[1])[-1]
    assert [e.status for e in events if isinstance(e, GoalEvent)] == ["go_on", "met"]


def test_an_interrupted_round_ends_the_run_and_the_goal_stays(tmp_path: Path) -> None:
    def interrupt(request: Request) -> Completion:
        raise KeyboardInterrupt

    rig = Rig(tmp_path, [say("one"), interrupt], [CheckResult(1, "no")])
    rig.keeper.set(GoalSpec("g", "false"))
    events = rig.run("go")
    assert isinstance(events[-1], ResultEvent) and events[-1].stop == "interrupted"
    assert any(isinstance(e, ErrorEvent) and e.kind == "interrupted" for e in events)
    assert rig.keeper.active  # Esc stops the run, not the goal: /goal clear ends it


def test_ctrl_c_thrown_between_events_reaches_the_turn(tmp_path: Path) -> None:
    """The REPL throws KeyboardInterrupt into the stream between two events: the rounds hand it to
    the running turn (the second round's), which ends cleanly, and the run ends there."""
    rig = Rig(tmp_path, [say("one"), say("two"), say("three")], [CheckResult(1, "no")] * 3)
    rig.keeper.set(GoalSpec("g", "false"))
    stream = rounds(rig.keeper, rig.loop.run("go"), rig.loop.run)
    assert isinstance(stream, Generator)
    for event in stream:
        if isinstance(event, GoalEvent):
            break
    next(stream)  # the second round has begun
    rest = [stream.throw(KeyboardInterrupt()), *stream]
    assert isinstance(rest[-1], ResultEvent) and rest[-1].stop == "interrupted"
    assert any(isinstance(e, ErrorEvent) and e.kind == "interrupted" for e in rest)
    assert len(rig.ran) == 1 and rig.keeper.active
    assert rig.loop.history[-1].role == "user"  # the turn said so in the history: it stays valid


def test_a_goal_cleared_stops_riding(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [say("one")], [])
    rig.keeper.set(GoalSpec("g", "false"))
    assert rig.loop.frame.goal
    ended = rig.keeper.clear()
    assert ended is not None and ended.status == "cleared" and rig.loop.frame.goal == ""
    assert rig.keeper.clear() is None
    events = rig.run("plain turn")  # no goal: one turn, no check
    assert rig.ran == [] and not any(isinstance(e, GoalEvent) for e in events)


def test_the_goal_survives_clears_a_summary_and_an_emergency_cut_byte_for_byte(tmp_path: Path) -> None:
    """The real engine in a small window: L1 clears, the first two summaries are skipped (L4 drops the
    oldest turns, the goal's first message among them), a later one is made (L2): every request,
    summary requests included, carries the goal's note whole, and a summary request's instruction is
    still its last text block, after the note."""
    from agent_cli.context.protocol import CompactGate, holds
    from agent_cli.core.events import CompactEvent
    from tests.test_context_fakes import FakeSummarizer, make_engine
    from tests.test_todos import INSTRUCTION_TAG, big_reads

    asked = {"n": 0}

    def gate(layer: Any, trigger: Any, focus: str | None) -> CompactGate:
        # The first ten are skipped (L1 clears what it can meanwhile), so the context grows to the
        # emergency line (L4); the eleventh goes ahead (L2).
        asked["n"] += 1
        return CompactGate(skip=asked["n"] <= 10)

    summarizer = FakeSummarizer(["## Work state\nreading the files"])
    engine, _, _ = make_engine(tmp_path, summarizer, gate=gate)
    rig = Rig(tmp_path, [*big_reads(tmp_path, 60), say("all read")], [CheckResult(0, "ok")], engine)
    note = goal_note(rig.keeper.set(GoalSpec(ODD, "make check")))
    events = rig.run("read every file")
    layers = {e.layer for e in events if isinstance(e, CompactEvent)}
    assert {"clear", "summarize", "emergency"} <= layers, layers
    for request in rig.provider.requests:
        assert sum(t == note for t in user_texts(request)) == 1, "a request went without the goal"
    assert summarizer.requests
    for request in summarizer.requests:
        last = request.messages[-1].content
        assert isinstance(last[-1], TextBlock) and last[-1].text.startswith(INSTRUCTION_TAG)
        assert holds(request.messages, note)
    assert [e.status for e in events if isinstance(e, GoalEvent)] == ["met"]


class StopOnce(Hooks):
    """A Stop hook that blocks the first time it is asked, and records what it was told."""

    def __init__(self) -> None:
        self.told: list[tuple[str, bool]] = []

    def on_stop(self, reply: str, active: bool = False) -> str | None:
        self.told.append((reply, active))
        return "run the linter too" if len(self.told) == 1 else None


def test_a_stop_hook_goes_first_and_the_check_runs_when_the_hooks_let_the_round_end(tmp_path: Path) -> None:
    hooks = StopOnce()
    script = [say("one"), say("two"), say("three")]
    rig = Rig(tmp_path, script, [CheckResult(1, "no"), CheckResult(0, "ok")], hooks=hooks)
    rig.keeper.set(GoalSpec("g", "make check"))
    events = rig.run("go")
    # Round 1: the hook blocks ("one"), the model goes on in the same round ("two"), the hook lets
    # it end, the check fails; round 2 ("three"): the check passes.
    assert hooks.told == [("one", False), ("two", True), ("three", False)]
    assert len(rig.ran) == 2 and len(rig.provider.requests) == 3
    assert "Stop hook feedback:\nrun the linter too" in user_texts(rig.provider.requests[1])
    assert [e.status for e in events if isinstance(e, GoalEvent)] == ["go_on", "met"]

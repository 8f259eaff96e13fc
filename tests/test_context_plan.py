"""L2/L3 planning (context/cut.py, `plan_condense`): where a record's span ends, table-driven.

Counts are given per message, so each case says exactly how many tokens each
message holds; thresholds come from `compute_thresholds` with the tail and
summary sizes set per case.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_cli.config.settings import ContextSettings
from agent_cli.context.cut import ACK, ENGINE_NOTE_PREFIX, CondensePlan, engine_prefix, plan_condense
from agent_cli.context.thresholds import Thresholds, compute_thresholds
from agent_cli.core.messages import Message, SummaryBlock, ToolResult, ToolUse


def th(keep_tail: int, summary_cap: int = 100) -> Thresholds:
    base = compute_thresholds(ContextSettings(), 200_000, 8_000)
    return replace(base, keep_tail=keep_tail, summary_cap=summary_cap)


U = Message.user
A = Message.assistant
RECORD = Message("user", (SummaryBlock("## Goal\nearlier work", "span-001.jsonl"),))


def call(i: int) -> list[Message]:
    use = ToolUse(f"t{i}", "read_file", {"path": f"f{i}.py"})
    return [Message("assistant", (use,)), Message("user", (ToolResult(use.id, f"content {i}"),))]


def test_engine_prefix() -> None:
    assert engine_prefix([]) == 0
    assert engine_prefix([U("hi"), A("hello")]) == 0
    assert engine_prefix([RECORD, A(ACK), U("go on")]) == 2
    assert engine_prefix([RECORD, U("go on")]) == 1
    assert engine_prefix([U(ENGINE_NOTE_PREFIX + "dropped 3 messages]"), A(ACK)]) == 2


CASES = [
    # (name, history, counts, keep_tail, requested, expected cut or None)
    (
        "auto keeps the tail it has room for and the latest request",
        [U("a"), A("b"), U("c"), A("d"), U("e"), A("f"), U("now")],
        [500, 500, 500, 500, 500, 500, 50],
        1_050,
        False,
        4,
    ),
    (
        "a span no larger than a record is not worth a call",
        [U("a"), A("b"), U("c"), A("d"), U("now")],
        [40, 40, 40, 40, 10],
        90,
        False,
        None,
    ),
    (
        "requested condenses everything but the latest request",
        [U("a"), A("b"), U("c"), A("d"), U("now")],
        [40, 40, 40, 40, 10],
        10_000,
        True,
        4,
    ),
    (
        "requested with nothing answered yet: nothing before the request",
        [U("now")],
        [10],
        0,
        True,
        None,
    ),
    (
        "auto leaves an unanswered tool round verbatim, whatever the tail size",
        [U("a"), A("b"), U("c"), A("d"), *call(1)],
        [500, 500, 500, 500, 50, 3_000],
        0,
        False,
        4,
    ),
    (
        "auto never splits a tool call from its result",
        [U("a"), A("b"), *call(1), A("e"), U("now")],
        [500, 500, 100, 100, 500, 10],
        650,  # the tail that fits starts at the result (index 3), which would orphan it: cut after it
        False,
        4,
    ),
    (
        "a history that is only the engine's record and the request: nothing to do",
        [RECORD, A(ACK), U("now")],
        [5_000, 10, 10],
        0,
        False,
        None,
    ),
    (
        "the record is folded into the next span (the cut starts at 0)",
        [RECORD, A(ACK), U("a"), A("b"), U("c"), A("d"), U("now")],
        [300, 10, 500, 500, 500, 500, 10],
        550,
        False,
        5,
    ),
]


@pytest.mark.parametrize(
    ("history", "counts", "keep_tail", "requested", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_plan_condense(
    history: list[Message], counts: list[int], keep_tail: int, requested: bool, expected: int | None
) -> None:
    plan = plan_condense(history, counts, th(keep_tail), requested=requested)
    assert (plan.cut if plan else None) == expected
    if plan is not None:
        assert plan.span(history) + plan.tail(history) == history
        assert plan.prefix == engine_prefix(history)


def test_a_plan_is_a_value() -> None:
    history = [U("a"), A("b"), U("now")]
    plan = CondensePlan(prefix=0, cut=2)
    assert plan.span(history) == history[:2] and plan.tail(history) == [history[2]]

"""Events read back from their JSON records: every type round-trips, and a record that is not an
event says so (a ValueError the session-log reader can turn into a line, never a traceback)."""

from __future__ import annotations

import json

import pytest

from agent_cli.core.events import (
    EVENT_TYPES,
    AssistantText,
    AssistantTextDelta,
    CompactEvent,
    ErrorEvent,
    Event,
    GoalEvent,
    HookOutput,
    ResultEvent,
    RetryEvent,
    StatusEvent,
    ThinkingText,
    ThinkingTextDelta,
    ToolCallEvent,
    ToolProgress,
    ToolResultEvent,
    UsageEvent,
    WarningEvent,
    WebSearchEvent,
    event_from_json,
)
from agent_cli.core.messages import Usage

USAGE = Usage(input_tokens=1200, output_tokens=80, cache_read_tokens=900, cache_write_tokens=300)
EXAMPLES: list[Event] = [
    AssistantTextDelta(text="Hel"),
    AssistantText(text="Hello."),
    ThinkingTextDelta(text="hm"),
    ThinkingText(text="hmm, the tests"),
    ToolCallEvent(id="toolu_1", name="bash", input={"command": "pytest -q"}),
    ToolProgress(id="toolu_1", name="bash", lines=("collecting", "1 passed"), elapsed=1.25, size=20),
    ToolProgress(id="toolu_1", name="bash", lines=(), elapsed=2.5, size=0, status="exit 0"),
    ToolResultEvent(id="toolu_1", name="bash", content="1 passed", is_error=False, duration=0.25),
    CompactEvent(
        layer="summarize",
        trigger="auto",
        messages_before=40,
        messages_after=9,
        tokens_before=90_000,
        tokens_after=12_000,
        summary="## Goal",
        transcript=".transcripts/x/span-001.jsonl",
        duration=1.5,
        usage=USAGE,
    ),
    CompactEvent(
        layer="clear", trigger="auto", messages_before=3, messages_after=3, tokens_before=9, tokens_after=2
    ),
    UsageEvent(model="claude-sonnet-5-5", usage=USAGE, context_tokens=1200, context_window=200_000),
    RetryEvent(attempt=2, delay=1.5, reason="overloaded"),
    StatusEvent(text="waiting for model"),
    WarningEvent(message="careful"),
    GoalEvent(status="go_on", message="goal not met yet", rounds=2, spent=0.5, budget=2.0, exit_code=1),
    HookOutput(hook="PostToolUse", text="lint: clean"),
    WebSearchEvent(query="python 3.14 release"),
    ErrorEvent(message="no key", kind="AuthError"),
    ResultEvent(text="done", stop="end_turn", iterations=3, usage=USAGE, session_id="s1"),
]


def test_the_examples_cover_every_event_type() -> None:
    assert {type(e) for e in EXAMPLES} == set(EVENT_TYPES.values())


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: e.type)
def test_every_event_round_trips_through_its_json_line(event: Event) -> None:
    line = json.dumps(event.to_json())
    assert event_from_json(json.loads(line)) == event


def test_fields_a_reader_does_not_know_are_ignored() -> None:
    data = {**WarningEvent(message="x").to_json(), "added_later": 1}
    assert event_from_json(data) == WarningEvent(message="x")


@pytest.mark.parametrize(
    "data",
    [
        {"type": "nope"},
        {"message": "no type"},
        {"type": "tool_call", "id": "t"},
        {"type": "usage", "model": "m"},
    ],
)
def test_a_record_that_is_no_event_is_a_value_error(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        event_from_json(data)

"""Messages, blocks, usage and events: frozen values with an exact JSON round trip."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.core.events import CompactEvent, ResultEvent, ToolCallEvent
from agent_cli.core.messages import (
    Block,
    Message,
    SummaryBlock,
    TextBlock,
    ToolResult,
    ToolUse,
    Usage,
    block_from_json,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
blocks: st.SearchStrategy[Block] = st.one_of(
    st.builds(TextBlock, st.text()),
    st.builds(
        ToolUse, st.text(min_size=1), st.text(min_size=1), st.dictionaries(st.text(max_size=8), json_values)
    ),
    st.builds(ToolResult, st.text(min_size=1), st.text(), st.booleans()),
    st.builds(SummaryBlock, st.text(), st.none() | st.text()),
)


@given(st.sampled_from(["user", "assistant"]), st.lists(blocks, max_size=5))
def test_message_round_trips_through_json_text(role: str, content: list[Block]) -> None:
    message = Message.of(role, content)  # type: ignore[arg-type]
    back = Message.from_json(json.loads(json.dumps(message.to_json())))
    assert back == message


@given(st.builds(Usage, *(st.integers(0, 10**9) for _ in range(4))))
def test_usage_round_trips_and_adds(usage: Usage) -> None:
    assert Usage.from_json(json.loads(json.dumps(usage.to_json()))) == usage
    assert (usage + usage).prompt_tokens == 2 * usage.prompt_tokens


def test_values_are_frozen() -> None:
    message = Message.user("hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.role = "assistant"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        TextBlock("x").text = "y"  # type: ignore[misc]


def test_replace_gives_a_new_id_so_counts_keyed_by_id_stay_true() -> None:
    message = Message.user("original")
    changed = message.replace([TextBlock("changed")])
    assert changed.id != message.id and changed.role == message.role and changed.text == "changed"


def test_accessors() -> None:
    use = ToolUse("t1", "read_file", {"path": "a"})
    assistant = Message.of("assistant", [TextBlock("reading"), use])
    results = Message.of("user", [ToolResult("t1", "body")])
    summary = Message.of("user", [SummaryBlock("record", "span.jsonl")])
    assert assistant.tool_uses == (use,) and assistant.text == "reading"
    assert results.tool_results[0].content == "body" and not results.is_plain_user
    assert summary.summary is not None and not summary.is_plain_user and Message.user("x").is_plain_user


@pytest.mark.parametrize("bad", [{"type": "video"}, {"text": "no type"}])
def test_unknown_blocks_are_refused(bad: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        block_from_json(bad)


def test_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError):
        Message.from_json({"role": "system", "content": []})


def test_events_carry_their_type_tag() -> None:
    compact = CompactEvent(
        layer="summarize",
        trigger="auto",
        messages_before=10,
        messages_after=3,
        tokens_before=9000,
        tokens_after=2000,
        summary="s",
        transcript="t.jsonl",
        duration=1.23456,
    )
    data = compact.to_json()
    assert data["type"] == "compact" and data["layer"] == "summarize" and data["duration"] == 1.235
    keys = ("trigger", "messages_before", "messages_after", "tokens_before", "tokens_after", "transcript")
    assert all(key in data for key in keys)
    assert ToolCallEvent(id="1", name="bash", input={"command": "ls"}).to_json()["type"] == "tool_call"
    result = ResultEvent(text="done", stop="end_turn", iterations=2)
    assert result.ok and result.to_json()["type"] == "result"

"""`/context`: the rows add up to the count the engine decides on, whatever the provider reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_context_fakes import assistant, filler, tool_round, user

from agent_cli.config.settings import ContextSettings
from agent_cli.context.engine import ContextEngine, Frame
from agent_cli.context.notices import scale_parts
from agent_cli.core.messages import Message, SummaryBlock, Usage
from agent_cli.core.requests import ToolSpec
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.store.archive import Archive
from agent_cli.tokens.counter import TokenCounter

FRAME = Frame("You are a careful coding agent. " * 300, (ToolSpec("read_file", "Read a file. " * 100, {}),))


def engine_for(tmp_path: Path) -> ContextEngine:
    return ContextEngine(
        settings=ContextSettings(),
        window=200_000,
        max_output=32_000,
        counter=TokenCounter("claude-sonnet-4-5", tokenizer_for("claude-sonnet-4-5", "anthropic")),
        archive=Archive(tmp_path / "s"),
        summarize=lambda request: "unused",
    )


def history() -> list[Message]:
    return [
        Message("user", (SummaryBlock("Condensed record of earlier work. " * 20, "t.jsonl"),)),
        assistant("Understood."),
        user("read it"),
        *tool_round("read_file", {"path": "a.py"}, filler(4_000)),
        assistant("done " * 50),
        user("next"),
    ]


@pytest.mark.parametrize("reported", [300, 2_000, 9_000, 60_000], ids=["far-below", "below", "near", "above"])
def test_rows_add_up_to_the_anchored_total_and_none_is_zero(tmp_path: Path, reported: int) -> None:
    engine = engine_for(tmp_path)
    messages = history()
    # A fake server reports characters / 4, or a provider counts fewer tokens than tiktoken does; a
    # report under half the local count is not believed: the local count anchors instead.
    doubted = engine.observe(FRAME, messages[:-1], Usage(reported, 10))
    counter = engine.counter
    assert isinstance(counter, TokenCounter) and counter.anchor is not None
    anchored = counter.anchor.tokens
    assert (anchored == reported) if doubted is None else (anchored > reported)
    bd = engine.breakdown(messages, FRAME)
    assert bd.total == engine.tokens(messages, FRAME)  # what prepare decides on
    assert bd.total == anchored + engine.counter.count_message(messages[-1])  # anchored
    parts = [bd.system, bd.tools, bd.summary, bd.messages, bd.tool_results]
    assert sum(parts) == bd.total
    assert all(p > 0 for p in parts), parts
    # The shares follow the local counts: the system prompt outweighs the tool specs, as locally.
    assert bd.system > bd.tools
    assert bd.free == engine.thresholds.budget - bd.total


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=6), st.integers(0, 10**6))
def test_scale_parts(parts: list[int], total: int) -> None:
    out = scale_parts(parts, total)
    assert len(out) == len(parts) and all(x >= 0 for x in out)
    if sum(parts) == 0 or total == 0:
        assert out == [0] * len(parts)
        return
    assert sum(out) == total
    if total >= 2 * len(parts):
        assert all(x > 0 for x, p in zip(out, parts, strict=True) if p > 0)
    assert all(x == 0 for x, p in zip(out, parts, strict=True) if p == 0)

"""The reactive path and the engine's own failures: an overflow error without numbers, and a disk
that refuses the transcript. The loop retries once; the engine must never raise anything but a
ContextOverflowError with an actionable line, and never remove what it could not save."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from test_context_fakes import FRAME, assistant, filler, make_engine, pairing_errors, tool_round, user

from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, WarningEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.store.archive import Archive


def chat(turns: int, size: int = 2_000) -> list[Message]:
    out: list[Message] = []
    for i in range(turns):
        out += [user(f"request {i}"), assistant(f"answer {i}: " + filler(size, f"p{i}"))]
    return out


@pytest.mark.parametrize("text", ["HTTP 413: request too large", "Request Entity Too Large"])
def test_overflow_without_numbers_still_goes_down_to_the_target(tmp_path: Path, text: str) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    # ~11k tokens by our count, under the 17.6k budget; the pending paste alone is ~8k, so L2
    # (record + the paste) ends above the 7,920 target: without numbers, L4 must go on down to it.
    history = [*chat(6), user("review this paste:\n" + filler(32_000))]
    before = engine.tokens(history, FRAME)
    prepared = engine.on_overflow(history, FRAME, ContextOverflowError(text))
    events = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert [e.layer for e in events] == ["summarize", "emergency"] and len(summarizer.requests) == 1
    assert events[0].tokens_after > engine.thresholds.target  # what L2 alone left
    after = engine.tokens(prepared.messages, FRAME)
    assert after < events[0].tokens_after < before
    # Down to the target, or to the pending message itself when that alone is above it.
    assert after <= max(engine.thresholds.target, engine.counter.count_message(history[-1]) + 200)
    assert prepared.messages[-1] is history[-1] and pairing_errors(prepared.messages) == []


def test_overflow_without_numbers_and_nothing_to_remove_says_the_limit_is_smaller(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    history = [user("review:\n" + filler(8_000))]  # ~2k tokens, alone
    refused = engine.on_overflow(history, FRAME, ContextOverflowError("HTTP 413: request too large"))
    message = str(refused.unsendable)
    assert refused.unsendable is not None and refused.messages == history
    assert "context_window" in message and "does not fit" not in message
    # With numbers, the classic line.
    counted = engine.on_overflow(
        history, FRAME, ContextOverflowError("too long: 30000 tokens", tokens=30_000)
    )
    assert "does not fit" in str(counted.unsendable)


class RefusingStore(Archive):
    """A store on a full disk: every write fails."""

    def write_span(self, messages: Sequence[Message], label: str) -> Path:
        raise OSError(28, "No space left on device")

    def write_output(self, tool_use_id: str, text: str, *, header: str = "") -> Path:
        raise OSError(28, "No space left on device")


def test_a_refusing_disk_removes_nothing_and_raises_nothing_unexpected(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path, archive=RefusingStore(tmp_path / "full"))
    history = [user("read")]
    for i in range(9):
        history += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(4_400, f"m{i}"))
    history += [*chat(6), user("go on")]
    prepared = engine.prepare(history, FRAME)
    assert prepared.messages == history  # nothing left the context without being on disk
    warnings = [e.message for e in prepared.events if isinstance(e, WarningEvent)]
    assert warnings and all("No space left on device" in w for w in warnings)
    assert not [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert summarizer.requests == []  # no money spent on a record that could not replace anything
    refused = engine.on_overflow(history, FRAME, ContextOverflowError("too long", tokens=40_000))
    assert refused.unsendable is not None and refused.messages == history
    use = ToolUse("t_big", "bash", {"command": "make"})
    big = ToolResult(use.id, "line\n" * 20_000)
    assert engine.ingest(use, big) == (big, None)  # kept whole rather than cut without a copy

"""The Anthropic cost model held to recorded Claude Code sessions (the MIT-licensed copies in
benchmarks/data/real_sessions; the full set is benchmarks/cache_validation.py's, from ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.cache_validation import COPIES, validate_file

SESSIONS = sorted(COPIES.glob("*.jsonl"))


def test_the_copies_are_here() -> None:
    assert len(SESSIONS) == 2
    assert "Copyright (c) 2026 marot" in (COPIES / "LICENSE").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_summed_prediction_within_2_percent(path: Path) -> None:
    result = validate_file(path)
    recorded, predicted = result.total("recorded"), result.total("predicted")
    assert len(result.rows) >= 3
    assert predicted.write == pytest.approx(recorded.write, rel=0.02)
    assert predicted.read == pytest.approx(recorded.read, rel=0.02)
    assert predicted.token_equivalents == pytest.approx(recorded.token_equivalents, rel=0.02)
    assert predicted.usd == pytest.approx(recorded.usd, rel=0.02)


def test_every_request_of_a_steady_thread_reads_what_the_last_one_wrote() -> None:
    """The 1-hour Haiku sub-agent: within 10 tokens on every request, not only in the sum. Its third
    request follows a parallel batch: Claude Code sends the results in the order of the calls and
    marks the one that arrived last, so 41 tokens went uncached (marking the last block: 34 off)."""
    result = validate_file(COPIES / "spotter-fum-8463c716.subagent-agent-a7be2f0.jsonl")
    for row in result.rows:
        assert abs(row.predicted.read - row.recorded.read) <= 10, row
        assert abs(row.predicted.write_1h - row.recorded.write_1h) <= 10, row

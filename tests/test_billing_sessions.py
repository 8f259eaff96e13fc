"""The Anthropic cost model held to recorded Claude Code sessions (the MIT-licensed copies in
benchmarks/data/real_sessions; the full set is benchmarks/cache_validation.py's, from ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.cache_validation import COPIES, SHARED, main, run, validate_file, validate_group

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


def test_the_command_sums_the_copies_within_2_percent(tmp_path: Path) -> None:
    """`python -m benchmarks.cache_validation --sessions benchmarks/data/real_sessions`: the summed
    row over both copies is within 2% on writes, reads and cost, and no request of them is off by
    more than 1,000 tokens (the list under the per-kind table is empty). Fails on the code before
    the totals row and the list were printed."""
    out = tmp_path / "requests.md"
    assert main(["--sessions", str(COPIES), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    results, _ = run(COPIES)
    rows = [x for res in results for x in res.rows]
    recorded = sum((x.recorded for x in rows[1:]), rows[0].recorded)
    predicted = sum((x.predicted for x in rows[1:]), rows[0].predicted)
    total = next(line for line in text.splitlines() if line.startswith("| all 2 conversations |"))
    assert f"{recorded.write:,} / {predicted.write:,}" in total
    assert predicted.write == pytest.approx(recorded.write, rel=0.02)
    assert predicted.read == pytest.approx(recorded.read, rel=0.02)
    assert predicted.token_equivalents == pytest.approx(recorded.token_equivalents, rel=0.02)
    listed = text.split("Requests off by more than 1,000 tokens:")[1].split("## ")[0]
    assert [line for line in listed.splitlines() if line.startswith("| spotter")] == []


FUM = SHARED / "spotter-fum-8463c716.jsonl"


@pytest.mark.skipif(not FUM.is_file(), reason="../shared/sessions/real is not beside this checkout")
def test_opus_4_6_keeps_earlier_thinking_at_a_new_user_turn() -> None:
    """fum request 142 (Opus 4.6): a new user turn after five thinking blocks read the whole last
    prefix (132,200 tokens), as the documented rule says for Opus 4.5 and later. The code that
    dropped earlier thinking at every new turn predicted a fall-back to the system prompt: +106k
    written, the session's +38.7%."""
    main_thread = validate_group(FUM, [])[0]
    row = next(r for r in main_thread.rows if r.index == 142)
    assert row.recorded.read == 132_200
    assert abs(row.predicted.read - row.recorded.read) <= 10
    assert abs(row.predicted.write - row.recorded.write) <= 10
    total_rec, total_pred = main_thread.total("recorded"), main_thread.total("predicted")
    assert total_pred.write == pytest.approx(total_rec.write, rel=0.02)

"""L2/L3's choice of record as a table: which record stands, and how the summary fared."""

from __future__ import annotations

import pytest

from agent_cli.context.condense import MISSED_FACTS, Verdict, judge_record

BASE = {"failure": None, "written": 500, "replaced": 4_000, "after": 6_000, "total": 9_000, "cap": 1_000}


@pytest.mark.parametrize(
    ("name", "changes", "must_shrink", "misses", "failure_part", "shortfall_part", "fared"),
    [
        ("a good summary stands", {}, True, False, None, None, "ok"),
        ("the call failed", {"failure": "TimeoutError", "written": 0, "after": None}, True, False,
         "TimeoutError", None, "failed"),
        ("as large as what it replaces", {"written": 4_000, "after": None}, True, False,
         "larger than what it replaces", None, "failed"),
        ("would not shrink an automatic compaction", {"after": 9_000}, True, False,
         "would not shrink the request (9,000 -> 9,000 tokens)", None, "failed"),
        ("a requested one may grow", {"after": 9_500}, False, False, None, None, "ok"),
        ("over its length: used, fell short", {"written": 1_600}, True, False, None,
         "ran over its length (1,600 tokens for 1,000)", "failed"),
        ("just within 1.5x its cap", {"written": 1_500}, True, False, None, None, "ok"),
        ("left out the facts: used, fell short", {}, True, True, None, MISSED_FACTS, "failed"),
        ("no summary, no failure: the digest, checked", {"written": 0, "after": None}, True, True,
         None, MISSED_FACTS, "failed"),
    ],
)  # fmt: skip
def test_judge_record(
    name: str,
    changes: dict[str, object],
    must_shrink: bool,
    misses: bool,
    failure_part: str | None,
    shortfall_part: str | None,
    fared: str,
) -> None:
    asked: list[bool] = []

    def misses_facts() -> bool:
        asked.append(True)
        return misses

    args = {**BASE, **changes}
    verdict = judge_record(**args, must_shrink=must_shrink, misses_facts=misses_facts)  # type: ignore[arg-type]
    assert (verdict.failure is None) is (failure_part is None), name
    assert failure_part is None or failure_part in str(verdict.failure), name
    assert (verdict.shortfall is None) is (shortfall_part is None), name
    assert shortfall_part is None or shortfall_part in str(verdict.shortfall), name
    assert verdict.fared == fared, name
    # The content check is asked only when the figures leave the summary standing, within its length.
    assert bool(asked) is (verdict.failure is None and "length" not in str(verdict.shortfall)), name


def test_a_verdict_without_failure_or_shortfall_fared_ok() -> None:
    assert (
        Verdict().fared == "ok"
        and Verdict("x").fared == "failed"
        and Verdict(shortfall="y").fared == "failed"
    )

"""The replay's verdicts are the goals restated against the floor (issue 36, item 5), not the old
"30% cheaper than the best seed": per cell and pace, ours at most 1.5x the floor, ours' excess at most
half the best finishing seed's, no other policy cheaper and at least as faithful."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_billing import Bill  # noqa: E402
from bench_floor_cells import cell_floor, excess_line, floor_section  # noqa: E402
from bench_replay import CACHES, CLAUDE_RATIO, Run  # noqa: E402
from bench_setup import prices  # noqa: E402
from bench_tables import Agg, Group  # noqa: E402


def _run(policy: str, dollars: dict[str, float], recall: list[bool], finished: bool = True) -> Run:
    """A run of the chat session (seed 1) whose bill at each pace costs `dollars[pace]`."""
    run = Run(policy, 200_000, shape="chat", seed=1, outputs="typical")
    for cache in CACHES:
        per_million = Bill(input=1_000_000).dollars(
            prices()[cache], CLAUDE_RATIO if cache.startswith("claude") else 1
        )
        run.bills[cache] = Bill(input=round(dollars.get(cache, 1.0) / per_million * 1_000_000))
    run.probes["recall"] = recall
    if not finished:
        run.failed_at = 7
    return run


def _cell(ours: float, kotlin: float, masking: float, masking_recall: list[bool]) -> Group:
    """A cell where each policy costs that many times the floor at both paces."""
    empty = Group("chat", "typical", 200_000, "lossy", {"ours": Agg("ours", [_run("ours", {}, [True])])})
    low = {c: cell_floor(empty, c) for c in ("claude", "claude-paused")}

    def at(times: float) -> dict[str, float]:
        return {c: times * v for c, v in low.items()}

    return Group(
        "chat",
        "typical",
        200_000,
        "lossy",
        {
            "ours": Agg("ours", [_run("ours", at(ours), [True, True])]),
            "kotlin": Agg("kotlin", [_run("kotlin", at(kotlin), [True, False])]),
            "masking": Agg("masking", [_run("masking", at(masking), masking_recall)]),
        },
    )


def _verdict(lines: list[str]) -> str:
    row = next(line for line in lines if line.startswith("| chat |"))
    return [c.strip() for c in row.strip().strip("|").split("|")][11]


def test_a_cell_within_the_floor_goals_is_met() -> None:
    lines = floor_section([_cell(1.4, 3.0, 5.0, [True, True])], prices())
    assert _verdict(lines) == "met"  # 1.4x the floor, excess 0.4 against kotlin's 2.0 (20%)
    assert "**Met in 1 of 1 cells" in "\n".join(lines)


def test_over_one_and_a_half_times_the_floor_is_missed_even_when_far_cheaper_than_the_seeds() -> None:
    """The old rule (at least 30% cheaper than the best seed) would call this met: 1.6 against 3.0."""
    lines = floor_section([_cell(1.6, 3.0, 5.0, [True, True])], prices())
    assert _verdict(lines) == "**missed**"
    assert any("1.60x the floor (goal <= 1.5x)" in line for line in lines)


def test_a_cheaper_baseline_at_least_as_faithful_is_a_miss() -> None:
    lines = floor_section([_cell(1.3, 3.0, 1.2, [True, True])], prices())
    assert _verdict(lines) == "**missed**"
    assert any("cheaper and as faithful: masking" in line for line in lines)
    # less faithful, it does not count
    assert _verdict(floor_section([_cell(1.3, 3.0, 1.2, [True, False])], prices())) == "met"


def test_every_finishing_policy_has_its_excess_over_the_floor() -> None:
    g = _cell(1.4, 3.0, 5.0, [True, True])
    line = excess_line(g, prices())
    assert line.index("ours $+") < line.index("kotlin $+") < line.index("masking $+")
    assert "(1.40x)" in line and "(3.00x)" in line
    low = cell_floor(g, "claude")
    assert f"(${low:.2f})" in line


def test_a_cheaper_baseline_that_sent_requests_without_what_they_answer_is_not_as_faithful() -> None:
    """Its probes as good as ours, but a request went without the tool results it answers: the reply
    the session credits it with was written from a result its model never saw."""
    g = _cell(1.3, 3.0, 1.2, [True, True])
    for agg in g.aggs.values():
        agg.runs[0].requests = [1_000] * 20
    assert _verdict(floor_section([g], prices())) == "**missed**"  # 20 of 20 seen, as ours
    g.aggs["masking"].runs[0].unseen = 1
    lines = floor_section([g], prices())
    assert _verdict(lines) == "met" and not any("as faithful: masking" in line for line in lines)

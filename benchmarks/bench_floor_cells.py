"""The replay's goals, cell by cell, against the floor (issue 36, item 5).

    floor_section(groups, prices) -> list[str]   the verdict table, the misses by cost component
    excess_line(group, prices)    -> str         every finishing policy's excess over the floor

A cell is one session kind, tool-output size, window and stand-in (`bench_tables.Group`); its floor
is the mean over its seeds of `bench_floor.floor` on each seed's session, uncapped, priced like the
costs (Sonnet 5.5, Claude's count). Per pace (steady, paused) the goals are `bench_floor`'s: ours at
most 1.5x the floor, ours' excess over the floor at most half the best finishing seed policy's, and
no other policy both cheaper and at least as faithful on every probe and in the share of its requests
that carried the message they answer (`bench_replay.SEEN`; at the paused pace, a policy that reads the
clock is judged on its run with the paused clock: `Agg.share`). Every policy's bill includes
the probes' round trips (ours' recall at every probe point, anyone's re-read of a file it can name),
as the replay bills them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from bench_floor import FLOOR_TIMES, FloorCheck, Rival, floor, floor_check
from bench_real import excess_parts
from bench_replay import CLAUDE_RATIO, PROBES, SEEN
from bench_setup import frame_tokens, prices, session
from bench_tables import SEED_POLICIES, Agg, Group, Prices

__all__ = ["PACES", "excess_line", "floor_section"]

PACES = ("claude", "claude-paused")


@functools.cache
def _floor(shape: str, seed: int, outputs: str, cache: str) -> float:
    return floor(session(shape, seed, outputs), frame_tokens()).dollars(prices()[cache], CLAUDE_RATIO)


def cell_floor(group: Group, cache: str) -> float:
    """The floor of the cell at one pace: the mean over the seeds its runs cover."""
    seeds = sorted({r.seed for agg in group.aggs.values() for r in agg.runs})
    values = [_floor(group.shape, s, group.outputs, cache) for s in seeds]
    return sum(values) / len(values)


def _rival(agg: Agg, prices: Prices, cache: str) -> Rival:
    shares = {p: agg.share(p, cache) for p in (*PROBES, SEEN)}
    return Rival(agg.policy, agg.dollars(prices, cache), agg.finished, shares)


def check(group: Group, prices: Prices, cache: str) -> FloorCheck:
    ours = _rival(group.aggs["ours"], prices, cache)
    seeds = [_rival(a, prices, cache) for n, a in group.aggs.items() if n in SEED_POLICIES]
    others = [
        _rival(a, prices, cache) for n, a in group.aggs.items() if n != "ours" and n not in SEED_POLICIES
    ]
    return floor_check(ours, seeds, others, cell_floor(group, cache))


def parts(agg: Agg, group: Group) -> dict[str, float]:
    """Ours' excess over the floor at the steady pace by cost component, the mean over seeds (each run
    against its own seed's floor)."""
    runs = agg.done
    total: dict[str, float] = {}
    for run in runs:
        low = _floor(group.shape, run.seed, group.outputs, "claude")
        for k, v in excess_parts(run, low).items():
            total[k] = total.get(k, 0.0) + v / len(runs)
    return total


def _largest(values: dict[str, float], n: int = 2) -> str:
    ranked = sorted(values.items(), key=lambda kv: -abs(kv[1]))[:n]
    return "; ".join(f"{k} ${v:.2f}" for k, v in ranked)


def excess_line(group: Group, prices: Prices) -> str:
    """Every finishing policy's excess over the floor, steady, cheapest first."""
    low = cell_floor(group, "claude")
    done = sorted((a for a in group.aggs.values() if a.finished), key=lambda a: a.dollars(prices))
    said = ", ".join(
        f"{a.policy} ${a.dollars(prices) - low:+.2f} ({a.dollars(prices) / low:.2f}x)" for a in done
    )
    return f"Excess over the floor (${low:.2f}), steady, every finishing policy: {said or 'none finishes'}."


def _share(c: FloorCheck) -> str:
    if c.best_seed is None:
        return "no seed finishes"
    share = c.excess_share
    return (
        f"{c.best_seed.policy} {share:.0%}"
        if share is not None
        else f"{c.best_seed.policy} (at or below the floor)"
    )


def floor_section(groups: Sequence[Group], prices: Prices) -> list[str]:
    """The verdict table and, for every missed cell, which goal and which cost components."""
    rows = [
        "| session | outputs | window | stand-in | floor $ | ours $ steady (x floor) | paused (x floor) "
        "| lowest finishing policy (x floor) | ours' excess as a share of the best seed's: steady | paused "
        "| cheaper and as faithful | verdict | largest parts of ours' excess |",
        "|" + "---|" * 13,
    ]
    whys: list[str] = []
    met = alone = 0
    reach = 0  # cells where some finishing policy is within FLOOR_TIMES of the floor
    for g in groups:
        ours = g.aggs["ours"]
        head = f"| {g.shape} | {g.outputs} | {g.window // 1000}k | {g.stand_in} |"
        if not ours.finished:
            rows.append(f"{head} | failed | | | | | | | **missed**: ours did not finish | |")
            whys.append(f"- **{g.title}: ours did not finish.**")
            continue
        checks = {k: check(g, prices, k) for k in PACES}
        low = checks["claude"].floor
        finishing = [a for a in g.aggs.values() if a.finished]
        lowest = min(finishing, key=lambda a: a.dollars(prices))
        reach += lowest.dollars(prices) <= FLOOR_TIMES * low
        misses = {k: c.misses for k, c in checks.items()}
        ok = not any(misses.values())
        seedless = all(c.best_seed is None for c in checks.values())
        met += ok and not seedless
        alone += ok and seedless
        beaten = sorted({b for c in checks.values() for b in c.beaten_by})
        verdict = ("met" if not seedless else "met (no seed finishes)") if ok else "**missed**"
        excess = parts(ours, g)
        largest = _largest(excess)
        rows.append(
            f"{head} {low:.2f} | "
            + " | ".join(f"{c.ours:.2f} ({c.times:.2f}x)" for c in checks.values())
            + f" | {lowest.policy} {lowest.dollars(prices):.2f} ({lowest.dollars(prices) / low:.2f}x) | "
            + " | ".join(_share(c) for c in checks.values())
            + f" | {', '.join(beaten) or 'none'} | {verdict} | {largest} |"
        )
        if not ok:
            said = "; ".join(f"{k}: {', '.join(m)}" for k, m in misses.items() if m)
            whys.append(f"- **{g.title}:** {said}. Ours' excess by component, steady: {_largest(excess, 9)}.")
    total = len(rows) - 2
    return [
        "## The goal, cell by cell, against the floor",
        "",
        "The goals (issue 36, restated against the floor; `benchmarks/bench_floor.py`): in every cell and",
        f"at both paces, ours at most {FLOOR_TIMES}x the floor; ours' excess over the floor at most half the",
        f"best finishing seed policy's ({', '.join(SEED_POLICIES)}); no other policy both cheaper and at",
        "least as faithful on every probe and in the results its model saw (no more requests sent",
        "without the message they answer: *results unseen* in the policies' tables). The floor is the",
        "session's own bytes, uncapped: every message",
        "written to the cache once, the frame read back by every later request, every reply's output; no",
        "policy that keeps any of the conversation reaches it, since each request reads back what it keeps.",
        "Costs are Sonnet 5.5's with Anthropic's cache, the mean over seeds, the probes' round trips",
        "included for every policy. *Lowest finishing policy*: the cheapest policy of any kind that",
        "finishes the cell, and how far above the floor even it is.",
        "",
        f"**Met in {met} of {total} cells (and in {alone} where no seed policy finishes); some finishing "
        f"policy within {FLOOR_TIMES}x of the floor in {reach} of {total}.**",
        "",
        *rows,
        "",
        *(["Where it is missed, and ours' excess by cost component:", "", *whys, ""] if whys else []),
    ]

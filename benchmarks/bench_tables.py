"""The replay's runs gathered over seeds, their tables, and the verdicts the tables support.

    Group(key, runs)    one session kind (shape, tool-output sizes), one window, one stand-in
    policy_table(group) every policy: finished seeds, cost (mean [min-max]) four ways, sizes, probes
    verdicts(groups)    the goal, cell by cell, with by how much and why where it is missed

A policy *finishes* a group when it finishes every seed of it; only finishing policies are
compared. Costs are means over seeds; probe shares are means over seeds of each run's share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench_replay import CACHES, CLAUDE_RATIO, PARTS, PROBES, Run

from agent_cli.providers.model_info import ModelInfo

__all__ = ["COST_GOAL", "SEED_POLICIES", "Group", "Prices", "most_saving", "policy_table", "verdicts"]

SEED_POLICIES = ("java-s06", "kotlin", "javascript")
COST_GOAL = 0.30
Prices = dict[str, ModelInfo]  # cache name -> the model whose prices it bills at


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


@dataclass
class Agg:
    policy: str
    runs: list[Run]

    @property
    def finished(self) -> bool:
        return all(r.finished for r in self.runs)

    @property
    def done(self) -> list[Run]:
        return [r for r in self.runs if r.finished]

    def cost(self, cache: str, prices: Prices) -> tuple[float, float, float] | None:
        values = [r.dollars(cache, prices[cache]) for r in self.done]
        return (_mean(values), min(values), max(values)) if values else None

    def dollars(self, prices: Prices, cache: str = "claude") -> float:
        got = self.cost(cache, prices)
        return got[0] if got else float("inf")

    def share(self, probe: str) -> float | None:
        values = [s for r in self.done if (s := r.share(probe)) is not None]
        return _mean(values) if values else None

    def avg(self, attr: str) -> float:
        return _mean([float(getattr(r, attr)) for r in self.done])


@dataclass
class Group:
    shape: str
    outputs: str
    window: int
    stand_in: str
    aggs: dict[str, Agg]

    @property
    def title(self) -> str:
        return (
            f"{self.shape} session, {self.outputs} outputs, {self.window // 1000}k window, "
            f"{self.stand_in} stand-in"
        )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _money(got: tuple[float, float, float] | None) -> str:
    return "failed" if got is None else f"{got[0]:.2f} [{got[1]:.2f}-{got[2]:.2f}]"


def policy_table(group: Group, prices: Prices) -> list[str]:
    lines = [
        "| policy | finished | Sonnet 5.5 $ | paused | GPT-6.2 Sol $ | paused | mean request | peak "
        "| summary calls | digests | recall calls | wait on summaries | recall | artifact | continuation "
        "| decision |",
        "|" + "---|" * 16,
    ]
    for agg in group.aggs.values():
        n = len(agg.done)
        failed = [r.failed_at for r in agg.runs if not r.finished]
        where = f"{n}/{len(agg.runs)}" + (
            f" (refused at request {', '.join(map(str, failed))})" if failed else ""
        )
        if not n:
            lines.append(f"| {agg.policy} | {where} |" + " |" * 14)
            continue
        lines.append(
            f"| {agg.policy} | {where} | "
            + " | ".join(_money(agg.cost(c, prices)) for c in CACHES)
            + f" | {agg.avg('mean'):,.0f} | {agg.avg('peak'):,.0f} | {agg.avg('summary_calls'):.1f} "
            f"| {agg.avg('digests'):.1f} | {agg.avg('recall_calls'):.1f} | {agg.avg('wait_seconds'):.0f} s | "
            + " | ".join(_pct(agg.share(p)) for p in PROBES)
            + " |"
        )
    return lines


def _fidelity_gaps(ours: Agg, other: Agg) -> list[str]:
    """The probes where `other` keeps more than ours."""
    gaps = []
    for p in PROBES:
        a, b = ours.share(p), other.share(p)
        if a is not None and b is not None and a + 1e-9 < b:
            gaps.append(f"{p} {a:.0%} against {b:.0%}")
    return gaps


def _at_least_as_faithful(other: Agg, ours: Agg) -> bool:
    for p in PROBES:
        a, b = ours.share(p), other.share(p)
        if a is not None and (b is None or b + 1e-9 < a):
            return False
    return True


def _parts(agg: Agg, prices: Prices) -> dict[str, float]:
    return {k: _mean([r.parts[k].dollars(prices["claude"], CLAUDE_RATIO) for r in agg.done]) for k in PARTS}


def most_saving(ours: Agg, best: Agg, prices: Prices) -> float:
    """The most any policy could save against `best`: down to the floor (ours' new messages, output
    and frame reads: what keeping nothing but the frame would cost, bench_ledger.py)."""
    low = _mean([r.ledger.floor(prices["claude"]) for r in ours.done])
    return 1 - low / best.dollars(prices)


def _why_cost(ours: Agg, best: Agg, saving: float, prices: Prices) -> str:
    """Where the two bills differ, part by part, and which part decides it."""
    a, b = _parts(ours, prices), _parts(best, prices)
    said = (
        f"turns ${a['turns']:.2f} against ${b['turns']:.2f} (mean request {ours.avg('mean'):,.0f} against "
        f"{best.avg('mean'):,.0f} tokens), summary calls ${a['summaries']:.2f} against ${b['summaries']:.2f} "
        f"({ours.avg('summary_calls'):.1f} against {best.avg('summary_calls'):.1f} a session)"
    )
    if a["recall"]:
        calls = ours.avg("recall_calls")
        said += f", recall round trips ${a['recall']:.2f} ({calls:.0f} calls; {best.policy} has no recall)"
    low = _mean([r.ledger.floor(prices["claude"]) for r in ours.done])
    said += (
        f"; at most {most_saving(ours, best, prices):.0%} cheaper than {best.policy} for any policy here"
        f" (keeping nothing but the frame would cost ${low:.2f}: new messages, output and frame reads)"
    )
    diffs = {k: a[k] - b[k] for k in PARTS}
    if saving < 0:
        worst = max(diffs, key=lambda k: diffs[k])
        return f"ours costs {-saving:.0%} more than {best.policy}, mostly in {worst}: {said}"
    gain = min(diffs, key=lambda k: diffs[k])
    return (
        f"ours costs {saving:.0%} less than {best.policy} ({(COST_GOAL - saving) * 100:.0f} points short of "
        f"the goal), the saving in {gain}: {said}"
    )


def verdicts(groups: Sequence[Group], prices: Prices) -> tuple[list[str], list[str]]:
    """(the verdict table, the list of misses with by how much and why)."""
    lines = [
        "| session | outputs | window | stand-in | ours $ | best finishing seed policy | cheaper by "
        "(goal >= 30%) | at most, any policy | fidelity, every probe | cheaper and as faithful | verdict |",
        "|" + "---|" * 11,
    ]
    whys: list[str] = []
    for g in groups:
        ours = g.aggs["ours"]
        head = f"| {g.shape} | {g.outputs} | {g.window // 1000}k | {g.stand_in} |"
        if not ours.finished:
            lines.append(f"{head} failed | | | | | | **missed**: ours did not finish |")
            whys.append(
                f"- **{g.title}: ours did not finish** (refused at request {ours.runs[0].failed_at})."
            )
            continue
        seeds = [g.aggs[n] for n in SEED_POLICIES if n in g.aggs and g.aggs[n].finished]
        rivals = [a for n, a in g.aggs.items() if n != "ours" and a.finished]
        beaten_by = [
            a for a in rivals if a.dollars(prices) < ours.dollars(prices) and _at_least_as_faithful(a, ours)
        ]
        plane = ", ".join(a.policy for a in beaten_by) or "none"
        if not seeds:  # nothing to be cheaper than: said as it is, not counted as met
            lines.append(
                f"{head} {ours.dollars(prices):.2f} | none finishes | n/a | n/a | n/a | {plane} | "
                + ("only ours finishes" if not beaten_by else "**missed**")
                + " |"
            )
            if beaten_by:
                whys.append(f"- **{g.title}:** {plane} cheaper and at least as faithful.")
            continue
        best = min(seeds, key=lambda a: a.dollars(prices))
        saving = 1 - ours.dollars(prices) / best.dollars(prices)
        most = most_saving(ours, best, prices)
        gaps = _fidelity_gaps(ours, best)
        met = saving >= COST_GOAL and not gaps and not beaten_by
        lines.append(
            f"{head} {ours.dollars(prices):.2f} | {best.policy} {best.dollars(prices):.2f} | {saving:+.0%} | "
            f"{most:.0%} | "
            + ("as good or better" if not gaps else "worse: " + "; ".join(gaps))
            + f" | {plane} | "
            + ("met" if met else "**missed**")
            + " |"
        )
        if met:
            continue
        reasons = []
        if saving < COST_GOAL:
            reasons.append(_why_cost(ours, best, saving, prices))
        if gaps:
            reasons.append(f"{best.policy} keeps more: " + "; ".join(gaps))
        if beaten_by:
            reasons.append(f"cheaper and at least as faithful: {plane}")
        if ours.avg("digests"):
            reasons.append(
                f"ours built {ours.avg('digests'):.1f} digests a session (records written by code, no call: "
                "the latch's fallback after the stand-in's records failed the check), beside "
                f"{ours.avg('summary_calls'):.1f} summary calls"
            )
        whys.append(f"- **{g.title}:** " + ". ".join(reasons) + ".")
    return lines, whys

"""The replay's runs gathered over seeds and their tables (the verdicts: `bench_floor_cells.py`).

    Group(key, runs)    one session kind (shape, tool-output sizes), one window, one stand-in
    policy_table(group) every policy: finished seeds, cost (mean [min-max]) four ways, sizes, probes
    paused_line(group)  the policies run again with the paused clock, and ours' idle clears there

A policy *finishes* a group when it finishes every seed of it; only finishing policies are
compared. Costs are means over seeds; probe shares are means over seeds of each run's share. A
policy that reads the clock is run twice (`bench_replay.replay_paced`): its paused costs, and its probe
shares at the paused pace (shown beside the steady ones where they differ), are from the second run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench_replay import CACHES, PROBES, Run

from agent_cli.providers.model_info import ModelInfo

__all__ = ["SEED_POLICIES", "Agg", "Group", "Prices", "paused_line", "policy_table"]

SEED_POLICIES = ("java-s06", "kotlin", "javascript")
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

    def share(self, probe: str, cache: str = "claude") -> float | None:
        """The probe's share at `cache`'s pace: a policy that reads the clock answers the paused
        caches' from its run at the paused pace (`Run.at`)."""
        values = [s for r in self.done if (s := r.share(probe, cache)) is not None]
        return _mean(values) if values else None

    @property
    def paced(self) -> list[Run]:
        """The finished runs' runs at the paused pace (none for a policy that never reads the clock)."""
        return [r.paused for r in self.done if r.paused is not None]

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


def _probe(agg: Agg, probe: str) -> str:
    """The steady run's share, and the paused run's beside it where it differs."""
    steady, paused = agg.share(probe), agg.share(probe, "claude-paused")
    return _pct(steady) + ("" if paused == steady else f" (paused {_pct(paused)})")


def paused_line(group: Group) -> str:
    """Which policies read the clock, so were run again at the paused pace, and what ours' idle rule
    did there (empty when none did)."""
    again = [a for a in group.aggs.values() if a.paced]
    if not again:
        return ""
    said = "; ".join(
        f"{a.policy}, {_mean([float(r.idle_clears) for r in a.paced]):.1f} of its "
        f"{_mean([float(r.clears) for r in a.paced]):.1f} clears a run made after an idle gap past the "
        f"cache's TTL ({a.avg('clears'):.1f} clears at the steady pace)"
        for a in again
    )
    return (
        f"Run again with the paused clock, as they read the clock: {said}. Their paused bills, and the "
        "probe shares marked paused, are that run's."
    )


def _refused(run: Run) -> str:
    if run.failed_at is not None or run.paused is None:
        return str(run.failed_at)
    return f"{run.paused.failed_at} at the paused pace"


def policy_table(group: Group, prices: Prices) -> list[str]:
    lines = [
        "| policy | finished | Sonnet 5.5 $ | paused | GPT-6.2 Sol $ | paused | mean request | peak "
        "| summary calls | digests | recall calls | results unseen | wait on summaries | recall | artifact "
        "| continuation | decision |",
        "|" + "---|" * 17,
    ]
    for agg in group.aggs.values():
        n = len(agg.done)
        failed = [_refused(r) for r in agg.runs if not r.finished]
        where = f"{n}/{len(agg.runs)}" + (f" (refused at request {', '.join(failed)})" if failed else "")
        if not n:
            lines.append(f"| {agg.policy} | {where} |" + " |" * 15)
            continue
        lines.append(
            f"| {agg.policy} | {where} | "
            + " | ".join(_money(agg.cost(c, prices)) for c in CACHES)
            + f" | {agg.avg('mean'):,.0f} | {agg.avg('peak'):,.0f} | {agg.avg('summary_calls'):.1f} "
            f"| {agg.avg('digests'):.1f} | {agg.avg('recall_calls'):.1f} | {agg.avg('unseen'):.1f} "
            f"| {agg.avg('wait_seconds'):.0f} s | "
            + " | ".join(_probe(agg, p) for p in PROBES)
            + " |"
        )
    return lines

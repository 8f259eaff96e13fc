"""The replay's runs gathered over seeds and their tables (the verdicts: `bench_floor_cells.py`).

    Group(key, runs)    one session kind (shape, tool-output sizes), one window, one stand-in
    policy_table(group) every policy: finished seeds, cost (mean [min-max]) four ways, sizes, probes

A policy *finishes* a group when it finishes every seed of it; only finishing policies are
compared. Costs are means over seeds; probe shares are means over seeds of each run's share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench_replay import CACHES, PROBES, Run

from agent_cli.providers.model_info import ModelInfo

__all__ = ["SEED_POLICIES", "Agg", "Group", "Prices", "policy_table"]

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

"""The report's pictures (matplotlib, the `bench` extra): context per request, and cost against fidelity."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_replay import PROBES, Run

__all__ = ["pictures"]


def _fidelity(run: Run) -> float:
    shares = [s for p in PROBES if (s := run.share(p)) is not None]
    return sum(shares) / len(shares) if shares else 0.0


def pictures(
    runs: Sequence[Run], units: Sequence[tuple[Any, ...]], out: Path, prices: dict[str, Any]
) -> list[str]:
    """Per window, the long session's context per request (seed 1, typical outputs, faithful stand-in);
    and every finished run's cost against its mean probe share."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(Pictures need matplotlib: `pip install -e '.[bench]'`, then rerun.)", ""]
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    chosen: dict[int, list[Run]] = {}
    for run, unit in zip(runs, units, strict=True):
        shape, kind, seed, window, name, stand_in = unit[:6]
        picked = stand_in == "faithful" or name in ("masking", "none")  # those run with one stand-in
        if shape == "long" and kind == "typical" and seed == 1 and picked:
            chosen.setdefault(window, []).append(run)
    for window, chosen_runs in sorted(chosen.items()):
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for r in chosen_runs:
            label = r.policy + ("" if r.finished else f" (refused at {r.failed_at})")
            ax.plot(r.requests, label=label, linewidth=1.2)
        ax.axhline(window, color="red", linestyle="--", linewidth=0.8, label="window")
        ax.set(
            xlabel="request",
            ylabel="input tokens (Claude count)",
            title=f"long session, {window // 1000}k window",
        )
        ax.set_ylim(0, window * 1.05)
        ax.legend(fontsize=8)
        name = f"context-{window // 1000}k.png"
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        lines += [f"![context tokens per request, {window // 1000}k window](img/{name})", ""]
    fig, ax = plt.subplots(figsize=(7, 5))
    colours: dict[str, Any] = {}
    for run in runs:
        if not run.finished or run.policy == "none":
            continue
        colour = colours.setdefault(run.policy, f"C{len(colours)}")
        ax.scatter(run.dollars("claude", prices["claude"]), _fidelity(run) * 100, s=10, color=colour)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=c, label=p) for p, c in colours.items()]
    ax.legend(handles=handles, fontsize=8)
    ax.set_xscale("log")
    ax.set(
        xlabel="dollars (Sonnet 5.5 prices, steady pace, log scale)",
        ylabel="fidelity: mean probe pass rate (%)",
        title="cost against fidelity, every finished run",
    )
    fig.tight_layout()
    fig.savefig(out / "cost-fidelity.png", dpi=110)
    plt.close(fig)
    return [*lines, "![cost against fidelity](img/cost-fidelity.png)", ""]

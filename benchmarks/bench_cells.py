"""A few cells of the replay, printed as figures: each policy's bill beside ours, for a quick check.

    python benchmarks/bench_cells.py [--shapes survey long] [--windows 32000 200000] [--seeds 1 2]

Per cell (shape, typical outputs, window, stand-in; the seeds summed): each policy's cost in USD at
Sonnet 5.5's prices (Claude cache, steady and paused pace) and GPT-6.2 Sol's (OpenAI cache, steady),
whether it finished, its probe shares, and our cost as a share of its. Deterministic counts and
costs, no timings: what `bench_report.py` would put in its tables for these cells, in minutes. A
policy that reads the clock (ours) is run again with the paused clock (`replay_paced`): its paused
cost and the probe shares marked paused are that run's, and the idle clears it made there follow.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_policies import POLICIES, SUMMARIZING  # noqa: E402
from bench_replay import PROBES, Run, reference_count, replay_paced  # noqa: E402
from bench_setup import frame, frame_tokens, prices, session, writer  # noqa: E402

Cell = tuple[str, int, int, str, str]  # shape, window, seed, stand-in, policy
CACHES = ("claude", "claude-paused", "openai")


def run_cell(cell: Cell) -> Run:
    shape, window, seed, stand_in, name = cell
    s = session(shape, seed, "typical")
    return replay_paced(
        s,
        lambda: POLICIES[name](window, frame(), reference_count, writer(stand_in, s)),
        frame_tokens(),
        seed=seed,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", default=["survey", "long"])
    parser.add_argument("--windows", nargs="+", type=int, default=[32_000, 200_000])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--stand-ins", nargs="+", default=["lossy", "faithful"])
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    cells = [
        (shape, window, seed, stand_in, name)
        for shape in args.shapes
        for window in args.windows
        for stand_in in args.stand_ins
        for seed in args.seeds
        for name in POLICIES
        if name in SUMMARIZING or stand_in == args.stand_ins[0]
    ]
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            runs = pool.map(run_cell, cells, chunksize=1)
    else:
        runs = [run_cell(c) for c in cells]
    by: dict[tuple[str, int, str], dict[str, list[Run]]] = {}
    for (shape, window, _, stand_in, name), run in zip(cells, runs, strict=True):
        for s in args.stand_ins if name not in SUMMARIZING else [stand_in]:
            by.setdefault((shape, window, s), {}).setdefault(name, []).append(run)
    p = prices()
    for (shape, window, stand_in), policies in by.items():
        print(f"\n## {shape}, typical, {window:,}, {stand_in}, seeds {' '.join(map(str, args.seeds))}")
        ours = policies["ours"]
        ours_cost = {c: sum(r.dollars(c, p[c]) for r in ours) for c in CACHES}
        print(
            "| policy | finished | "
            + " | ".join(f"{c} $ (ours/it)" for c in CACHES)
            + " | "
            + " | ".join(PROBES)
            + " |"
        )
        notes: list[str] = []
        for name, rs in policies.items():
            done = sum(r.finished for r in rs)
            cells_ = []
            for c in CACHES:
                if done < len(rs):
                    cells_.append("n/a")
                    continue
                cost = sum(r.dollars(c, p[c]) for r in rs)
                ratio = "" if name == "ours" else f" ({ours_cost[c] / cost:.2f}x)"
                cells_.append(f"{cost:.3f}{ratio}")
            shares = []
            for probe in PROBES:
                said = []
                for cache in ("claude", "claude-paused"):  # (the paused run's, where the policy has one)
                    checks = [x for r in rs for x in r.at(cache).probes[probe]]
                    said.append(f"{sum(checks) / len(checks):.0%}" if checks else "-")
                shares.append(said[0] if said[1] == said[0] else f"{said[0]} (paused {said[1]})")
            paced = [r.paused for r in rs if r.paused is not None]
            if paced:
                notes.append(
                    f"{name}: run again with the paused clock; {sum(r.idle_clears for r in paced)} of its "
                    f"{sum(r.clears for r in paced)} clears there after an idle gap past the TTL "
                    f"({sum(r.clears for r in rs)} clears steady)"
                )
            print(f"| {name} | {done}/{len(rs)} | " + " | ".join(cells_) + " | " + " | ".join(shares) + " |")
        for note in notes:
            print(note)


if __name__ == "__main__":
    main()

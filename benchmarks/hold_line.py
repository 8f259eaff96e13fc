"""No turn waiting on a summary: the digest standing in, the hold line, and waiting, side by side.

    python benchmarks/hold_line.py [--jobs 2] [--seeds 1,2,3,4,5] [--stand-ins faithful,lossy]

The same engine four ways, on the replay's sessions (every session kind, tool-output size, window
and seed; each stand-in): *defaults* (the record prepared ahead from the prepare line where the
window leaves room; where a turn would wait for a record, a digest stands in at once and the record
takes its place when it is ready), *hold 95%* (no digest standing in; past the trigger, a request
under 95% of the working budget goes as it is while its record is made, swapped in at the first
request after it is ready), *waited for* (no digest standing in, no hold: a record not ready at the
trigger is waited for), and *at the trigger* (every record made at the trigger, the turn waiting
for all of it). Every run has the same sessions, the same prompt-cache model, the same summary
stand-in and the same clock for a summary call (1 s to the first token, then 60 tokens a second); a
record made in the background counts as ready only once that time has passed on the replay's
steady clock.

Printed per window and stand-in: the Sonnet 5.5 bill at the steady pace (mean over the runs,
summed over the session kinds), the summed wait on summaries, summary calls, finished runs, and
each probe's share (a mean over every run).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_report  # noqa: E402
from bench_replay import PROBES, Run  # noqa: E402
from bench_sessions import OUTPUTS, SHAPES  # noqa: E402
from bench_setup import SEEDS, WINDOWS, prices  # noqa: E402

from agent_cli.config.settings import ContextSettings  # noqa: E402

TRIGGER = ContextSettings().trigger_ratio
VARIANTS = {
    "defaults": ContextSettings(),
    "hold 95%": ContextSettings(hold_ratio=0.95, digest_stands_in=False),
    "waited for": ContextSettings(digest_stands_in=False),
    "at the trigger": ContextSettings(prepare_ratio=TRIGGER, hold_ratio=TRIGGER, digest_stands_in=False),
}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seeds", default=",".join(str(s) for s in SEEDS))
    parser.add_argument("--stand-ins", default="faithful,lossy")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    bench_report.NEIGHBOURS.update(VARIANTS)  # run_unit builds ours with a neighbour's settings
    claude = prices()["claude"]
    for stand_in in args.stand_ins.split(","):
        work = [
            (shape, kind, seed, window, "ours", stand_in, variant)
            for shape in SHAPES
            for kind in OUTPUTS
            for seed in seeds
            for window in WINDOWS
            for variant in VARIANTS
        ]
        runs = bench_report.run_all(work, args.jobs)
        cells: dict[tuple[int, str], dict[tuple[str, str], list[Run]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for unit, run in zip(work, runs, strict=True):
            cells[(unit[3], unit[6])][(unit[0], unit[1])].append(run)
        print(f"\nstand-in: {stand_in}; seeds {args.seeds}")
        head = f"{'window':>7} {'variant':<15} {'Sonnet $':>9} {'wait':>7} {'summaries':>9} {'finished':>9}"
        print(f"{head}  probes")
        for window in WINDOWS:
            for variant in VARIANTS:
                kinds = cells[(window, variant)]
                every = [r for rs in kinds.values() for r in rs]
                dollars = sum(_mean([r.dollars("claude", claude) for r in rs]) for rs in kinds.values())
                wait = sum(_mean([r.wait_seconds for r in rs]) for rs in kinds.values())
                calls = sum(_mean([float(r.summary_calls) for r in rs]) for rs in kinds.values())
                done = sum(1 for r in every if r.finished)
                probes = " ".join(
                    f"{p} {_mean([s for r in every if (s := r.share(p)) is not None]):.1%}" for p in PROBES
                )
                print(
                    f"{window // 1000:>6}k {variant:<15} {dollars:>9.2f} {wait:>6.0f}s {calls:>9.1f} "
                    f"{done:>4}/{len(every):<4}  {probes}",
                    flush=True,
                )


if __name__ == "__main__":
    main()

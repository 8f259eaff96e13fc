"""How long the report's runs of ours take, and a digest of every figure they give, to compare two trees.

    python benchmarks/ours_speed.py                      # the default cells, one process
    python benchmarks/ours_speed.py --cells long:typical:1:32000 chat:typical:2:200000:defaults
    python benchmarks/ours_speed.py --profile long:typical:1:200000 [--top 40]
    python benchmarks/ours_speed.py --defaults chat:typical:2:32000   # the "defaults" neighbour = ours?

A cell is shape:outputs:seed:window[:neighbour] (a neighbour: `bench_report.NEIGHBOURS`' label, ours
with one setting moved), run as `bench_report.run_unit` runs it (ours, faithful stand-in). Per cell: the
seconds it took, the Run's fingerprint (every request's bytes), and a digest of every field of the Run
(requests, bills at every cache and pace, parts, summary calls, probes, ledger, wait); the last line
digests them all. Run it on two trees (PYTHONPATH or worktrees): the digests must be the same.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import hashlib
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_replay import Run
from bench_report import run_unit

CELLS = (
    "long:typical:1:32000",
    "long:typical:1:200000",
    "chat:typical:2:32000",
    "chat:typical:2:200000",
    "survey:heavy:3:32000",
    "long:heavy:2:1000000",
    "chat:typical:1:32000:trigger 80%",
)


def _stable(value: object) -> object:
    """`value` with its sets sorted and dicts' items listed: the same text in every process."""
    if isinstance(value, dict):
        return [(k, _stable(v)) for k, v in value.items()]
    if isinstance(value, (set, frozenset)):
        return sorted(repr(_stable(v)) for v in value)
    if isinstance(value, (list, tuple)):
        return [_stable(v) for v in value]
    return value


def digest(run: Run) -> str:
    """Every field of the run (bills, probes, ledger...), in a stable text."""
    return hashlib.sha1(repr(_stable(dataclasses.asdict(run))).encode()).hexdigest()[:16]


def unit(cell: str) -> tuple[str, str, int, int, str, str, str]:
    shape, outputs, seed, window, *rest = cell.split(":")
    return (shape, outputs, int(seed), int(window), "ours", "faithful", rest[0] if rest else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", nargs="+", default=list(CELLS))
    parser.add_argument("--profile", help="profile this one cell (cProfile, cumulative and own time)")
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument(
        "--defaults", nargs="+", help='cells run as ours and as the "defaults" neighbour: the same figures?'
    )
    args = parser.parse_args()
    if args.defaults:
        for cell in args.defaults:
            ours, defaults = run_unit(unit(cell)), run_unit(unit(f"{cell}:defaults"))
            defaults.policy = ours.policy
            same = "the same" if digest(ours) == digest(defaults) else "DIFFERENT"
            print(f"{cell}: ours {digest(ours)}, defaults {digest(defaults)}: {same}", flush=True)
        return
    if args.profile:
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        run = run_unit(unit(args.profile))
        profiler.disable()
        print(f"{args.profile}: {time.perf_counter() - started:.2f}s {run.fingerprint[:12]} {digest(run)}")
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
        return
    whole = hashlib.sha1()
    total = wall = 0.0
    for cell in args.cells:
        started, cpu = time.perf_counter(), time.process_time()
        run = run_unit(unit(cell))
        took = time.process_time() - cpu  # CPU time: others' load on the machine moves it less
        wall += time.perf_counter() - started
        total += took
        shares = " ".join(f"{p} {run.share(p) or 0:.4f}" for p in run.probes)
        line = f"{cell}: {run.fingerprint[:12]} {digest(run)} requests {len(run.requests)} {shares}"
        whole.update(line.encode())
        print(f"{line} ({took:.2f}s CPU)", flush=True)
    n = len(args.cells)
    summary = f"{total:.1f}s CPU, {total / n:.2f}s a run; wall {wall / n:.2f}s a run"
    print(f"all: {whole.hexdigest()[:16]} ({summary})")


if __name__ == "__main__":
    main()

"""Start-up time of `agent --version` and `agent --help`, against bare Python as the baseline.

    python benchmarks/startup.py [--runs 21]

Runs each command N times as a fresh process (the `agent` console script
beside this Python, else `python -m agent_cli`) and prints medians in ms.
Goals on a 2-core machine: --version <= 100 ms, --help <= 250 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


def median_ms(cmd: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    script = Path(sys.executable).parent / "agent"  # the console script of this environment
    agent = str(script) if script.exists() else None
    base = [agent] if agent else [sys.executable, "-m", "agent_cli"]
    rows = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"], None),
        ("agent --version", [*base, "--version"], 100.0),
        ("agent --help", [*base, "--help"], 250.0),
    ]
    print(f"start-up, median of {args.runs} runs ({'console script' if agent else 'python -m agent_cli'})")
    baseline = None
    for label, cmd, goal in rows:
        ms = median_ms(cmd, args.runs)
        baseline = baseline or ms
        verdict = "" if goal is None else ("  goal <= %.0f ms: %s" % (goal, "met" if ms <= goal else "MISSED"))
        print(f"  {label:<28} {ms:7.1f} ms  ({ms / baseline:4.2f}x baseline){verdict}")


if __name__ == "__main__":
    main()

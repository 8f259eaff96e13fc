"""What the session's process container costs a command: `true` through the bash tool.

    python benchmarks/process_container.py [--runs 300] [--rounds 3]

For each container this machine offers (`AGENT_CLI_CONTAINER`: cgroup2, freezer, pids, subreaper,
none) a fresh interpreter runs `true` through `run_command` N times after one warm-up command (the
first command makes the container and starts the watchdog: timed apart), and prints the median and
the 10th and 90th percentiles in ms. The rounds interleave the containers, so a machine whose load
changes moves them alike. A last row is the design not taken: each child moving itself into the
cgroup between fork and exec (`Popen` of `true` with and without that move, interleaved).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE = r"""
import json, sys, tempfile, time
from agent_cli.tools import children, containment
from agent_cli.tools.bash import run_command
runs = int(sys.argv[1])
where = tempfile.mkdtemp()
t = time.perf_counter(); run_command("true", where, 10); first = time.perf_counter() - t
times = []
for _ in range(runs):
    t = time.perf_counter(); run_command("true", where, 10); times.append(time.perf_counter() - t)
print(json.dumps({"kind": containment.current().describe(), "first": first, "times": times}))
children.end()
"""

CHILD_MOVES = r"""
import json, os, subprocess, sys, time
from agent_cli.tools import children, containment
runs = int(sys.argv[1])
container = containment.current()
if container.cgroup is None:
    print(json.dumps({})); sys.exit()
containment.leave()  # the agent outside, as in the design where each child moves itself in
target = container.cgroup.procs_file
def move():
    fd = os.open(target, os.O_WRONLY)
    os.write(fd, b"0")
    os.close(fd)
def once(fn):
    t = time.perf_counter(); subprocess.Popen(["true"], preexec_fn=fn).wait(); return time.perf_counter() - t
plain, moved = [], []
for _ in range(runs):
    plain.append(once(children.pdeathsig())); moved.append(once(move))
print(json.dumps({"plain": plain, "moved": moved}))
children.end()
"""


def _run(script: str, kind: str, runs: int) -> dict[str, object]:
    env = dict(os.environ, AGENT_CLI_CONTAINER=kind, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", script, str(runs)], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _ms(values: list[float]) -> str:
    xs = sorted(values)
    return (
        f"{statistics.median(xs) * 1e3:.2f} ms (p10 {xs[len(xs) // 10] * 1e3:.2f}, "
        f"p90 {xs[len(xs) * 9 // 10] * 1e3:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    kinds = ["cgroup2", "freezer", "pids", "subreaper", "none"]
    times: dict[str, list[float]] = {k: [] for k in kinds}
    firsts: dict[str, list[float]] = {k: [] for k in kinds}
    said: dict[str, str] = {}
    plain: list[float] = []
    moved: list[float] = []
    for _ in range(args.rounds):
        for kind in kinds:
            got = _run(ONE, kind, args.runs)
            said[kind] = str(got["kind"])
            times[kind] += got["times"]  # type: ignore[arg-type]
            firsts[kind].append(float(got["first"]))  # type: ignore[arg-type]
        pair = _run(CHILD_MOVES, "cgroup2", args.runs)
        plain += pair.get("plain", [])  # type: ignore[arg-type]
        moved += pair.get("moved", [])  # type: ignore[arg-type]
    print("| asked for | what the system gave | `true` through run_command | first command |")
    print("|---|---|---|---|")
    for kind in kinds:
        first = statistics.median(firsts[kind]) * 1e3
        print(f"| {kind} | {said[kind]} | {_ms(times[kind])} | {first:.0f} ms |")
    if plain:
        print(f"\nPopen of `true`, pdeathsig only: {_ms(plain)}; each child moving itself in: {_ms(moved)}")


if __name__ == "__main__":
    main()

"""Start-up time of `agent --version`, `agent --help` and a one-shot `agent -p "say hi"`; and what
the agent adds to a one-shot on top of importing its SDK.

    python benchmarks/startup.py [--runs 21] [--floor-runs 31] [--only-floor] [--before DIR]

Runs each command N times as a fresh process (the `agent` console script
beside this Python, else `python -m agent_cli`) and prints medians in ms,
against bare Python as the baseline. The one-shot answers from a local fake
server that replies at once, so it measures the agent's own cost (start-up,
SDK import, session log, one streamed request). Goals on a 2-core machine:
--version <= 100 ms, --help <= 250 ms. Measured here for others (ANCHORS.md):
--version / --help Codex 79 / 80 ms, Claude Code 97 / 297 ms; one-shot
"say hi" Codex 440 ms, Claude Code 892 ms.

The floor: `python -c "import anthropic"` (nothing a Python agent on the official SDK can avoid);
ours: `agent -p "say hi"` (Anthropic, instant server). The two are run in turn, run after run, so
a load that comes and goes weighs on both alike; the script prints both medians with their
spread, overhead = ours - floor, and overhead / floor (goal <= 0.3). Before timing, every
command runs once with bytecode writing allowed, so no run pays for compiling .pyc files.
`--before DIR` runs an older copy of the package as well, in the same turns (DIR holds its
`agent_cli/`, put first on PYTHONPATH), for a before-and-after measured under the same load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.testing.fakeserver import FakeModelServer, Reply  # noqa: E402

OVERHEAD_GOAL = 0.3  # what the agent adds, as a fraction of the SDK's import


def once_ms(cmd: list[str], **kw: object) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kw)  # type: ignore[call-overload]
    return (time.perf_counter() - start) * 1000


def median_ms(cmd: list[str], runs: int, **kw: object) -> float:
    return statistics.median(once_ms(cmd, **kw) for _ in range(runs))


def spread(samples: list[float]) -> str:
    """Median, quartiles and range of `samples` (ms), as one phrase."""
    s = sorted(samples)
    q = statistics.quantiles(s, n=4) if len(s) >= 2 else [s[0]] * 3
    return (
        f"median {statistics.median(s):7.1f} ms  (quartiles {q[0]:.0f}-{q[2]:.0f}, "
        f"range {s[0]:.0f}-{s[-1]:.0f}, n={len(s)})"
    )


def floor_and_ours(
    base: list[str], runs: int, cwd: str, env: Mapping[str, str], before: str | None = None
) -> None:
    """`import anthropic` against `agent -p "say hi"`, in turn; the overhead and its ratio to the floor."""
    floor_cmd = [sys.executable, "-c", "import anthropic"]
    ours_cmd = [*base, "-p", "say hi", "--provider", "anthropic"]
    old_env = {**env, "PYTHONPATH": before} if before else None
    for cmd in (floor_cmd, ours_cmd):  # warm: .pyc files written, the files in the OS cache
        once_ms(cmd, cwd=cwd, env=env)
    if old_env is not None:
        once_ms(ours_cmd, cwd=cwd, env=old_env)
    floor: list[float] = []
    ours: list[float] = []
    old: list[float] = []
    for _ in range(runs):
        floor.append(once_ms(floor_cmd, cwd=cwd, env=env))
        ours.append(once_ms(ours_cmd, cwd=cwd, env=env))
        if old_env is not None:
            old.append(once_ms(ours_cmd, cwd=cwd, env=old_env))
    f, o = statistics.median(floor), statistics.median(ours)
    pairs = sorted(b - a for a, b in zip(floor, ours, strict=True))
    print(f"floor vs ours (Anthropic, instant local server), {runs} runs each, in turn")
    print(f'  floor: python -c "import anthropic"  {spread(floor)}')
    print(f'  ours:  agent -p "say hi"             {spread(ours)}')
    verdict = "met" if f and (o - f) / f <= OVERHEAD_GOAL else "MISSED"
    print(
        f"  overhead = ours - floor = {o - f:.1f} ms; overhead / floor = {(o - f) / f:.2f} "
        f"(goal <= {OVERHEAD_GOAL}: {verdict})"
    )
    q = statistics.quantiles(pairs, n=4)
    print(
        f"  run by run, ours - floor: median {statistics.median(pairs):.0f} ms, quartiles "
        f"{q[0]:.0f}-{q[2]:.0f}, range {pairs[0]:.0f}-{pairs[-1]:.0f}"
    )
    if old:
        b = statistics.median(old)
        print(f"  before ({before}): {spread(old)}")
        print(f"  before: overhead = {b - f:.1f} ms; overhead / floor = {(b - f) / f:.2f}")
    print(f"  load (uptime): {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--floor-runs", type=int, default=31, help="runs of the floor-vs-ours pair")
    parser.add_argument("--only-floor", action="store_true", help="measure floor vs ours only")
    parser.add_argument("--before", default=None, help="a folder with an older agent_cli/ to compare")
    args = parser.parse_args()
    script = Path(sys.executable).parent / "agent"  # the console script of this environment
    agent = str(script) if script.exists() else None
    base = [agent] if agent else [sys.executable, "-m", "agent_cli"]
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer(default=Reply("hi")) as server:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            HOME=tmp,
            XDG_CONFIG_HOME=f"{tmp}/c",
            XDG_STATE_HOME=f"{tmp}/s",
            ANTHROPIC_API_KEY="sk-ant-bench",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
            OPENAI_API_KEY="sk-bench",
            OPENAI_BASE_URL=server.openai_base_url,
        )
        floor_and_ours(base, args.floor_runs, tmp, env, args.before)
        if args.only_floor:
            return
        rows = [
            ("python -c pass (baseline)", [sys.executable, "-c", "pass"], None),
            ("agent --version", [*base, "--version"], 100.0),
            ("agent --help", [*base, "--help"], 250.0),
        ]
        how = "console script" if agent else "python -m agent_cli"
        print(f"start-up, median of {args.runs} runs ({how})")
        baseline = None
        for label, cmd, goal in rows:
            ms = median_ms(cmd, args.runs, env=env)
            baseline = baseline or ms
            verdict = "" if goal is None else f"  goal <= {goal:.0f} ms: {'met' if ms <= goal else 'MISSED'}"
            print(f"  {label:<28} {ms:7.1f} ms  ({ms / baseline:4.2f}x baseline){verdict}")
        for provider in ("anthropic", "openai"):
            cmd = [*base, "-p", "say hi", "--provider", provider]
            ms = median_ms(cmd, max(5, args.runs // 3), cwd=tmp, env=env)
            label = f'agent -p "say hi" ({provider})'
            print(f"  {label:<28} {ms:7.1f} ms  ({ms / baseline:4.2f}x baseline)")


if __name__ == "__main__":
    main()

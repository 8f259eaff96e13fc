"""How long `agent` takes from process start to a drawn prompt, in a pseudo-terminal.

Starts the REPL N times in a temporary project (a fake API key and base URL:
nothing is sent before the user types), answers prompt_toolkit's
cursor-position request as a terminal would, and stops the clock when the
bottom toolbar (drawn with the prompt) appears. Prints each run, the median
and the spread; also `python -c pass` and `agent --version` for scale.

    python benchmarks/repl_startup.py [-n 15] [--command "agent"]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

CPR_REQUEST = re.compile(re.escape("\x1b[6n"))
PROMPT_MARKER = re.compile("auto-compact at")


def time_prompt(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    child = pexpect.spawn(
        argv[0], argv[1:], cwd=str(cwd), env=env, dimensions=(40, 120), encoding="utf-8", timeout=30
    )
    child.delaybeforesend = None  # pexpect waits 50 ms before each send by default; a terminal does not
    try:
        while child.expect([CPR_REQUEST, PROMPT_MARKER]) == 0:
            child.send("\x1b[1;1R")
        elapsed = time.perf_counter() - started
        child.send("\x04")  # Ctrl-D: leave
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return elapsed


def time_process(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def describe(name: str, runs: list[float]) -> str:
    ms = sorted(r * 1000 for r in runs)
    return (
        f"{name:<28} median {statistics.median(ms):6.0f} ms   min {ms[0]:6.0f}   max {ms[-1]:6.0f}   "
        f"(n={len(ms)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs per measurement")
    parser.add_argument(
        "--command",
        default=f"{sys.executable} -m agent_cli",
        help="how to start the agent (default: this Python, -m agent_cli)",
    )
    args = parser.parse_args()
    agent = shlex.split(args.command)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(
            HOME=str(home),
            XDG_STATE_HOME=str(home / "state"),
            XDG_CONFIG_HOME=str(home / "config"),
            ANTHROPIC_API_KEY="sk-ant-benchmark",
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",
            TERM="xterm-256color",
        )
        time_prompt(agent, project, env)  # warm the OS file cache and .pyc files
        python = [time_process([sys.executable, "-c", "pass"], project, env) for _ in range(args.n)]
        version = [time_process([*agent, "--version"], project, env) for _ in range(args.n)]
        prompt = [time_prompt(agent, project, env) for _ in range(args.n)]
    print(describe("python -c pass", python))
    print(describe("agent --version", version))
    print(describe("agent: prompt drawn", prompt))
    print("runs (ms):", " ".join(f"{r * 1000:.0f}" for r in prompt))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Start-up time of `agent --version`, `agent --help` and a one-shot `agent -p "say hi"`.

    python benchmarks/startup.py [--runs 21]

Runs each command N times as a fresh process (the `agent` console script
beside this Python, else `python -m agent_cli`) and prints medians in ms,
against bare Python as the baseline. The one-shot answers from a local fake
server that replies at once, so it measures the agent's own cost (start-up,
SDK import, session log, one streamed request). Goals on a 2-core machine:
--version <= 100 ms, --help <= 250 ms. Measured here for others (ANCHORS.md):
--version / --help Codex 79 / 80 ms, Claude Code 97 / 297 ms; one-shot
"say hi" Codex 440 ms, Claude Code 892 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.testing.fakeserver import FakeModelServer, Reply  # noqa: E402


def median_ms(cmd: list[str], runs: int, **kw: object) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kw)  # type: ignore[call-overload]
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
        verdict = "" if goal is None else f"  goal <= {goal:.0f} ms: {'met' if ms <= goal else 'MISSED'}"
        print(f"  {label:<28} {ms:7.1f} ms  ({ms / baseline:4.2f}x baseline){verdict}")
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer(default=Reply("hi")) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(
            HOME=tmp,
            XDG_CONFIG_HOME=f"{tmp}/c",
            XDG_STATE_HOME=f"{tmp}/s",
            ANTHROPIC_API_KEY="sk-ant-bench",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        )
        for provider in ("anthropic", "openai"):
            env.update(OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=server.openai_base_url)
            cmd = [*base, "-p", "say hi", "--provider", provider]
            ms = median_ms(cmd, max(5, args.runs // 3), cwd=tmp, env=env)
            label = f'agent -p "say hi" ({provider})'
            print(f"  {label:<28} {ms:7.1f} ms  ({ms / baseline:4.2f}x baseline)")


if __name__ == "__main__":
    main()

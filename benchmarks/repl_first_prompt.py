"""How long a prompt typed soon after the REPL starts waits: from Enter to the request reaching the
model server, and to the answer drawn (issue 35, item 7).

Starts `agent` in a pseudo-terminal (pexpect) in a temporary project, against the in-repo fake
model server (Anthropic wire, replying at once), answers prompt_toolkit's cursor-position
requests as a terminal would, and types `say hi` and Enter at 0.5 s and at 1.0 s after the
process started (or as soon as the prompt is drawn, if later), and at 3 s as the baseline (the
REPL's warm-up thread has imported the SDK by then). For each it measures Enter -> request at the
server (the fake's responder notes the time) and Enter -> the answer's text on the screen. The
floor, `python -c "import anthropic"`, runs in turn with the REPL runs. Prints medians (and
quartiles) over N runs of each. `--before DIR` runs an older copy of the package too (DIR holds
its `agent_cli/`, put first on PYTHONPATH), in the same turns.

A prompt sent at 1.0 s cannot be answered before the SDK is imported; the least it can wait is
about floor - 1.0 s (the import had it started at process start) plus one request. What it waits
beyond that is what the agent adds.

    python benchmarks/repl_first_prompt.py [-n 9] [--at 0.5 1.0 3.0] [--before DIR] [--command "agent"]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.testing.fakeserver import FakeModelServer, Reply  # noqa: E402
from agent_cli.testing.fakeserver.server import RecordedRequest  # noqa: E402

CPR_REQUEST = "\x1b[6n"
PROMPT_MARKER = "auto-compact at"  # in the bottom toolbar, drawn with the prompt
ANSWER = "Hello-from-the-fake"
PROMPT = "say hi"


@dataclass
class Run:
    at: float  # when Enter was sent, seconds after spawn
    to_request: float  # Enter -> the request at the server
    to_answer: float  # Enter -> the answer on the screen


class Clock:
    """The time of the first model request since `arm()` (the fake's responder sets it)."""

    def __init__(self) -> None:
        self.seen = threading.Event()
        self.when = 0.0

    def arm(self) -> None:
        self.seen.clear()

    def responder(self, recorded: RecordedRequest) -> Reply:
        if not self.seen.is_set():
            self.when = time.perf_counter()
            self.seen.set()
        return Reply(ANSWER)


def _expect(child: pexpect.spawn, pattern: str, deadline: float) -> bool:
    """Wait for `pattern` (answering cursor-position requests meanwhile) until `deadline`;
    False when the deadline passed first."""
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return False
        try:
            if child.expect_exact([CPR_REQUEST, pattern], timeout=left) == 0:
                child.send("\x1b[1;1R")
                continue
            return True
        except pexpect.TIMEOUT:
            return False


def one_run(argv: list[str], cwd: Path, env: dict[str, str], clock: Clock, at: float) -> Run:
    clock.arm()
    started = time.perf_counter()
    child = pexpect.spawn(
        argv[0], argv[1:], cwd=str(cwd), env=env, dimensions=(40, 120), encoding="utf-8", timeout=60
    )
    child.delaybeforesend = None  # pexpect waits 50 ms before each send by default; a terminal does not
    try:
        if not _expect(child, PROMPT_MARKER, started + 60):
            raise RuntimeError("no prompt in 60 s:\n" + str(child.before))
        _expect(child, "\x00never\x00", started + at)  # answer CPRs until the moment to type
        child.send(PROMPT)
        child.send("\r")
        entered = time.perf_counter()
        if not _expect(child, ANSWER, entered + 60):
            raise RuntimeError("no answer in 60 s:\n" + str(child.before))
        answered = time.perf_counter()
        if not clock.seen.wait(5):
            raise RuntimeError("the answer came without a request at the server")
        _expect(child, PROMPT_MARKER, answered + 10)  # the next prompt
        child.send("\x04")  # Ctrl-D: leave
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    return Run(entered - started, clock.when - entered, answered - entered)


def time_floor(cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import anthropic"], cwd=cwd, env=env, check=True)
    return time.perf_counter() - started


def spread(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    q = statistics.quantiles(ms, n=4) if len(ms) >= 2 else [ms[0]] * 3
    return f"median {statistics.median(ms):6.0f} ms (quartiles {q[0]:.0f}-{q[2]:.0f}, n={len(ms)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=9, help="runs per moment")
    parser.add_argument("--at", type=float, nargs="+", default=[0.5, 1.0, 3.0], help="seconds after start")
    parser.add_argument(
        "--command",
        default=f"{sys.executable} -m agent_cli",
        help="how to start the agent (default: this Python, -m agent_cli)",
    )
    parser.add_argument("--before", default=None, help="a folder with an older agent_cli/ to compare")
    args = parser.parse_args()
    agent = shlex.split(args.command)
    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer(responder=clock.responder) as server:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            HOME=str(home),
            XDG_STATE_HOME=str(home / "state"),
            XDG_CONFIG_HOME=str(home / "config"),
            ANTHROPIC_API_KEY="sk-ant-benchmark",
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
            TERM="xterm-256color",
        )
        variants = {"ours": env}
        if args.before:
            variants["before"] = {**env, "PYTHONPATH": args.before}
        for variant_env in variants.values():
            one_run(agent, project, variant_env, clock, 3.0)  # warm the OS file cache and .pyc files
        time_floor(project, env)
        floor: list[float] = []
        runs: dict[tuple[str, float], list[Run]] = {(v, at): [] for v in variants for at in args.at}
        for _ in range(args.n):
            for at in args.at:  # in turn, so a load that comes and goes weighs on each alike
                floor.append(time_floor(project, env))
                for name, variant_env in variants.items():
                    runs[name, at].append(one_run(agent, project, variant_env, clock, at))
    f = statistics.median(floor)
    print(f'floor: python -c "import anthropic"   {spread(floor)}')
    for (name, at), rs in runs.items():
        typed = statistics.median(r.at for r in rs)
        label = f"{name} ({args.before})" if name == "before" else name
        print(f"{label}: Enter at {at:.1f} s (median {typed:.2f} s after start):")
        print(f"  Enter -> request at the server   {spread([r.to_request for r in rs])}")
        print(f"  Enter -> answer drawn            {spread([r.to_answer for r in rs])}")
        if typed < f:
            print(f"  floor - {typed:.2f} s = {(f - typed) * 1000:.0f} ms")
    print(f"load (uptime): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

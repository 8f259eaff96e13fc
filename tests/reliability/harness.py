"""Cases, how their endings are judged, and the runner.

A case runs in a directory of its own (its project and a home for the agent's state) and returns an
`Outcome`. Whatever it returns, the runner then sweeps every file the agent wrote there for the API
key and its pieces (`keys.sweep`), so a leak fails the case too.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer
from tests.e2e import agent_cmd, agent_env
from tests.reliability.keys import sweep

# What the fault and input cases run with: retries few enough for a suite; a stall limit and a
# deadline that a busy machine (the fake server's thread waiting for a processor) trips neither.
# The cases whose subject is the stall or the deadline set their own (faults.STALL_CONFIG).
QUICK_CONFIG = "[provider]\nmax_retries = 3\nstall_timeout = 30.0\ntimeout = 60.0\n"


@dataclass(frozen=True)
class Outcome:
    ok: bool
    detail: str  # what was seen, one line
    traceback: bool = False
    internal: bool = False
    orphans: int = 0
    lost: int = 0


@dataclass(frozen=True)
class Case:
    suite: str
    name: str
    run: Callable[[Path], Outcome]
    sample: bool = False  # one of the cases the CI sample runs


@dataclass(frozen=True)
class Result:
    case: Case
    outcome: Outcome
    seconds: float
    leaks: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome.ok and not self.leaks


def run_cases(cases: Sequence[Case], root: Path, *, workers: int = 2, progress: bool = False) -> list[Result]:
    """Each case in `root/<n>`, `workers` at a time; results in the order of `cases`."""
    root.mkdir(parents=True, exist_ok=True)

    def one(numbered: tuple[int, Case]) -> Result:
        n, case = numbered
        where = root / f"{n:03d}-{case.suite}"
        where.mkdir()
        start = time.monotonic()
        try:
            outcome = case.run(where)
        except Exception as exc:  # the harness's own failure is a failed case, not a crashed suite
            outcome = Outcome(False, f"harness: {type(exc).__name__}: {exc}"[:300])
        result = Result(case, outcome, time.monotonic() - start, sweep(where))
        if progress:
            mark = "ok  " if result.passed else "FAIL"
            print(
                f"{mark} {case.suite:9} {case.name:60} {result.seconds:5.1f}s  {outcome.detail[:100]}",
                flush=True,
            )
        return result

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, enumerate(cases)))


# ---- running the agent --------------------------------------------------------------------------


def project_in(where: Path, config: str = QUICK_CONFIG, files: dict[str, str | bytes] | None = None) -> Path:
    project = where / "project"
    (project / ".agent").mkdir(parents=True, exist_ok=True)
    if config:
        (project / ".agent" / "config.toml").write_text(config)
    for name, content in (files or {}).items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return project


def env_for(where: Path, server: FakeModelServer | None, provider: str = "anthropic") -> dict[str, str]:
    home = where / "home"
    home.mkdir(exist_ok=True)
    return agent_env(home, server, provider)


def agent(
    args: Sequence[str | bytes],
    project: Path,
    env: dict[str, str],
    *,
    stdin: bytes = b"",
    timeout: float = 300,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    cmd = [os.fsencode(a) for a in (*prefix, *agent_cmd())] + [
        os.fsencode(a) if isinstance(a, str) else a for a in args
    ]
    return subprocess.run(cmd, cwd=project, env=env, input=stdin, capture_output=True, timeout=timeout)


# ---- judging an ending --------------------------------------------------------------------------

FINISHED, LINE, USAGE = "finished", "line", "usage"
_CODES = {FINISHED: 0, LINE: 1, USAGE: 2}


def judge(proc: subprocess.CompletedProcess[bytes], expect: Iterable[str], *, check: str = "") -> Outcome:
    """Did the run end as expected: `finished` (exit 0), `line` (exit 1 with one `agent:` line) or
    `usage` (exit 2, one line)? Never a traceback, never an "internal error". `check`, when set,
    is a further condition that failed (said in the detail)."""
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    traceback = "Traceback (most recent call last)" in out + err
    internal = "internal error" in err
    said = [line for line in err.splitlines() if line.strip()]
    kinds = {k for k, code in _CODES.items() if code == proc.returncode}
    if kinds & {LINE, USAGE} and (len(said) != 1 or not said[0].startswith("agent: ")):
        kinds = set()  # an error ending is one readable line
    wanted = set(expect)
    ok = bool(kinds & wanted) and not traceback and not internal and not check
    seen = f"exit {proc.returncode}" + (f": {said[-1][:160]}" if said and proc.returncode else "")
    if traceback:
        seen += " (traceback)"
    if check:
        seen += f" ({check})"
    elif proc.returncode == 0:
        seen += ", finished"
    return Outcome(ok, seen, traceback=traceback, internal=internal)

"""Commands that outlive their limits (issue "Found from outside", the bash part of item 7).

Each case is a real `agent -p --yes` run whose model starts one command through the bash tool,
tagged `sleep <tag>` so its processes can be found in /proc:

- a command that closes its output and runs on (`exec >&- 2>&-; sleep ...`) still ends at its
  timeout: the run finishes, the result says "timed out", nothing is left;
- `kill -9` of the agent while the command runs, with children in the command's group, one that
  left with `setsid`, a daemon's double fork, and a command that closed its output: no survivor
  within 10 s (the watchdog: TERM, a grace of 1 s, KILL);
- a timeout while the command has a `setsid` child: the child goes too.
"""

from __future__ import annotations

import subprocess
import time
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import tool_results
from tests.reliability.harness import Case, Outcome, agent, env_for, judge, project_in
from tests.reliability.procs import new_tag, processes, start_headless, wait_for

DONE = "PROCESSES-CASE-DONE"


def _survivors(tag: str) -> int:
    """How many `sleep <tag>` are still alive 10 s on (a second or two on a busy machine: the watchdog's
    TERM, its 1 s grace, then KILL); kills them, so no case leaves one behind."""
    wait_for(lambda: not processes("sleep", tag), 10.0)
    left = processes("sleep", tag)
    for pid in left:
        subprocess.run(["kill", "-9", str(pid)], check=False)
    return len(left)


def _timeout(where: Path, shape: str) -> Outcome:
    """The command must be cut at its 1 s timeout, and leave nothing running."""
    tag = new_tag()
    project = project_in(where)
    command = shape.format(tag=tag)
    with FakeModelServer() as server:
        call = ToolCallSpec("bash", {"command": command, "timeout": 1}, id="toolu_t")
        server.queue(Reply("Running.", tool_calls=[call]))
        server.default = Reply(DONE)
        start = time.monotonic()
        proc = agent(("-p", "run it", "--yes"), project, env_for(where, server), timeout=60)
        seconds = time.monotonic() - start
        text, _ = tool_results(server.requests).get("toolu_t", ("(no result)", False))
    left = _survivors(tag)
    problems = []
    if "timed out after 1s" not in text:
        problems.append(f"no timeout in the result: {text[-80:]!r}")
    if left:
        problems.append(f"{left} processes outlived the timeout")
    outcome = judge(proc, {"finished"}, check="; ".join(problems))
    detail = f"{outcome.detail}; cut at the timeout, run took {seconds:.1f}s, {left} left"
    return Outcome(outcome.ok, detail, outcome.traceback, outcome.internal, orphans=left)


def _killed(where: Path, shape: str, count: int) -> Outcome:
    """kill -9 of the agent while the command runs; every `sleep <tag>` must be gone within 10 s."""
    tag = new_tag()
    project = project_in(where)
    command = shape.format(tag=tag)
    with FakeModelServer() as server:
        server.queue(Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": command})]), Reply("ok"))
        proc = start_headless(project, env_for(where, server), "-p", "run it", "--yes")
        started = wait_for(lambda: len(processes("sleep", tag)) == count)
        proc.kill()  # SIGKILL: no handler of the agent runs
        proc.communicate(timeout=90)
    left = _survivors(tag)
    if not started:
        return Outcome(False, "the command never started", orphans=left)
    detail = f"killed -9 with {count} sleeps running; {left} survived"
    return Outcome(left == 0, detail, orphans=left)


KILLED = {
    "children in the command's group": ("sleep {tag} & sleep {tag} & wait", 2),
    "a child that left with setsid": ("setsid sleep {tag} & sleep {tag}; wait", 2),
    "a daemon's double fork": ("(setsid sh -c 'sleep {tag} &' &); sleep {tag}", 2),
    "a command that closed its output": ("exec >&- 2>&-; sleep {tag} & sleep {tag}; wait", 2),
}
TIMEOUTS = {
    "closes its output and runs on": "echo $$; exec >&- 2>&-; sleep {tag}",
    "closes its output in a child that runs on": "exec >&- 2>&-; (sleep {tag}; echo late) & wait",
    "has a setsid child": "setsid sleep {tag} & echo started; wait",
}


def cases() -> list[Case]:
    found = [
        Case(
            "processes",
            f"timeout: a command that {name}",
            partial(_timeout, shape=shape),
            sample=name == "closes its output and runs on",
        )
        for name, shape in TIMEOUTS.items()
    ]
    found += [
        Case(
            "processes",
            f"kill -9 of the agent: {name}",
            partial(_killed, shape=shape, count=count),
            sample=name == "a child that left with setsid",
        )
        for name, (shape, count) in KILLED.items()
    ]
    return found

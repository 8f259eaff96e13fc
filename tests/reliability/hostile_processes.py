"""Commands that outlive their limits (issue "Found from outside", the bash part of item 7).

Each case is a real `agent -p --yes` run whose model starts one command through the bash tool,
tagged `sleep <tag>` so its processes can be found in /proc:

- a command that closes its output and runs on (`exec >&- 2>&-; sleep ...`) still ends at its
  timeout: the run finishes, the result says "timed out", nothing is left;
- `kill -9` of the agent while the command runs, with children in the command's group, one that
  left with `setsid`, a daemon's double fork, and a command that closed its output: no survivor
  within 10 s (the watchdog: TERM, a grace of 1 s, KILL);
- a timeout while the command has a `setsid` child: the child goes too;
- a daemon the command left running when it returned (`setsid`, `nohup`, a double fork, `env -i
  setsid`, a child calling `os.setsid()`): gone once the agent exits, and once it is killed -9.
- an MCP server that floods its stderr at every start: its log stays under 512 KiB, in the
  project's own folder (issue 35, item 5).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import tool_results
from tests.mcp_servers.helpers import stdio_table
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


def _daemon(where: Path, shape: str, kill: bool) -> Outcome:
    """The command leaves a daemon and returns; the agent then exits (or, holding a second command,
    is killed -9): the daemon must be gone within 30 s."""
    tag, hold = new_tag(), new_tag()
    project = project_in(where)
    start = shape.format(tag=tag, python=shlex.quote(sys.executable))
    wait = f"for i in $(seq 200); do pgrep -fx 'sleep {tag}' >/dev/null && break; sleep 0.05; done; "
    wait += f"pgrep -fx 'sleep {tag}' >/dev/null && echo DAEMON-UP"
    with FakeModelServer() as server:
        first = ToolCallSpec("bash", {"command": f"{start} {wait}"}, id="toolu_daemon")
        calls = [Reply("Starting.", tool_calls=[first])]
        if kill:
            calls.append(Reply("Holding.", tool_calls=[ToolCallSpec("bash", {"command": f"sleep {hold}"})]))
        server.queue(*calls)
        server.default = Reply(DONE)
        proc = start_headless(project, env_for(where, server), "-p", "run it", "--yes")
        if kill:
            wait_for(lambda: processes("sleep", hold), 60.0)
            proc.kill()  # SIGKILL: no handler of the agent runs
        proc.communicate(timeout=120)
        text, _ = tool_results(server.requests).get("toolu_daemon", ("", False))
    gone = wait_for(lambda: not processes("sleep", tag), 30.0)
    left = _survivors(tag) + _survivors(hold)
    if "DAEMON-UP" not in text:
        return Outcome(False, "the daemon never started", orphans=left)
    how = "killed -9" if kill else "exited"
    return Outcome(gone and left == 0, f"agent {how}; {left} survived", orphans=left)


QUIET = ">/dev/null 2>&1"
DAEMONS = {
    "setsid": "setsid sleep {tag} " + QUIET + " &",
    "nohup": "nohup sleep {tag} " + QUIET + " &",
    "a double fork": "(sleep {tag} " + QUIET + " &) &",
    "env -i setsid": "env -i setsid sleep {tag} " + QUIET + " &",
    "os.setsid() in python": (
        '{python} -c \'import os; os.setsid(); os.execvp("sleep", ["sleep", "{tag}"])\' ' + QUIET + " &"
    ),
}


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


def _chatty_mcp(where: Path) -> Outcome:
    """Three runs of a server that writes ~1 MB to stderr as it starts: its log stays bounded."""
    from agent_cli.mcp_client.errlog import CAP, errlog_dir

    project = project_in(where)
    config = where / "chatty.toml"
    config.write_text(stdio_table("chatty", "--stderr-lines", "12000"))
    with FakeModelServer() as server:
        server.default = Reply(DONE)
        env = env_for(where, server)
        for _ in range(3):
            proc = agent(("-p", "hi", "--config", str(config)), project, env, timeout=120)
    folder = errlog_dir(Path(env["XDG_STATE_HOME"]) / "agent-cli", project)
    log = folder / "chatty.log"
    wait_for(lambda: log.is_file() and b"log line 011999" in log.read_bytes(), 30.0)
    kept = sum(p.stat().st_size for p in folder.iterdir()) if folder.is_dir() else -1
    problems = []
    if not 0 < kept <= 2 * CAP:
        problems.append(f"the server's log holds {kept} bytes (at most {2 * CAP})")
    outcome = judge(proc, {"finished"}, check="; ".join(problems))
    return Outcome(
        outcome.ok, f"{outcome.detail}; the log keeps {kept} bytes", outcome.traceback, outcome.internal
    )


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
    for kill in (False, True):
        found += [
            Case(
                "processes",
                f"a daemon the command left ({name}): the agent {'killed -9' if kill else 'exits'}",
                partial(_daemon, shape=shape, kill=kill),
                sample=name == "env -i setsid",
            )
            for name, shape in DAEMONS.items()
        ]
    found.append(
        Case("processes", "an MCP server that floods its stderr: its log stays bounded", _chatty_mcp)
    )
    return found

"""Ctrl-C, SIGTERM and SIGHUP while a command runs, headless and in the REPL, then a look for
orphans: the command (`sleep <tag> & sleep <tag>; wait`, a background child included) must be gone
within 10 s of the agent's exit (a second or so on a busy machine). `kill -9` runs no handler; the
kernel still ends the shell (PR_SET_PDEATHSIG), which is what that case checks.
"""

from __future__ import annotations

import signal
import subprocess
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.reliability.harness import Case, Outcome, env_for, project_in
from tests.reliability.procs import new_tag, processes, spawn_repl, start_headless, wait_for

HEADLESS = {
    "Ctrl-C": (signal.SIGINT, 130, "agent: interrupted by the user"),
    "SIGTERM": (signal.SIGTERM, 143, "agent: stopped by SIGTERM; its running command was killed"),
    "SIGHUP": (signal.SIGHUP, 129, "agent: stopped by SIGHUP; its running command was killed"),
}
WIRES = {"anthropic": ("anthropic", []), "responses": ("openai", ["--wire", "responses"])}


def _command(tag: str) -> str:
    return f"sleep {tag} & sleep {tag}; wait"


def _orphans(tag: str) -> int:
    wait_for(lambda: not processes("sleep", tag), 10.0)
    left = processes("sleep", tag)
    for pid in left:  # never leave one behind for the next case
        subprocess.run(["kill", "-9", str(pid)], check=False)
    return len(left)


def _headless(where: Path, how: str, wire: str) -> Outcome:
    sig, code, said = HEADLESS[how]
    provider, flags = WIRES[wire]
    tag = new_tag()
    project = project_in(where)
    with FakeModelServer() as server:
        server.queue(
            Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": _command(tag)})]), Reply("ok")
        )
        proc = start_headless(
            project, env_for(where, server, provider), "-p", "run it", "--yes", "--provider", provider, *flags
        )
        started = wait_for(lambda: len(processes("sleep", tag)) == 2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=90)
    orphans = _orphans(tag)
    lines = err.strip().splitlines()
    ok = started and proc.returncode == code and lines == [said] and orphans == 0
    detail = f"exit {proc.returncode}: {lines[-1] if lines else '(nothing said)'}; {orphans} orphans"
    return Outcome(ok, detail if started else "the command never started", orphans=orphans)


def _repl(where: Path, how: str) -> Outcome:
    import pexpect

    from tests.test_repl_pty import expect

    tag = new_tag()
    project = project_in(where)
    with FakeModelServer() as server:
        server.queue(Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": _command(tag)})]))
        server.default = Reply("Done.")
        child = spawn_repl(project, env_for(where, server))
        try:
            expect(child, "auto-compact at ")
            child.send("run it\r")
            expect(child, r"allow\? \[y\]es")
            child.send("y")
            started = wait_for(lambda: len(processes("sleep", tag)) == 2)
            if how == "Ctrl-C":  # the turn stops, the REPL stays; then the user leaves
                child.send("\x03")
                expect(child, "interrupted by the user")
                gone_before_exit = wait_for(lambda: not processes("sleep", tag), 10.0)
                child.send("/exit\r")
            else:
                gone_before_exit = True
                child.kill(HEADLESS[how][0])
            child.expect(pexpect.EOF, timeout=90)
        finally:
            child.close(force=True)
    orphans = _orphans(tag)
    code = 0 if how == "Ctrl-C" else HEADLESS[how][1]
    ok = started and gone_before_exit and child.exitstatus == code and orphans == 0
    detail = f"exit {child.exitstatus}; {orphans} orphans" + (
        "" if gone_before_exit else "; outlived the turn"
    )
    return Outcome(ok, detail if started else "the command never started", orphans=orphans)


def _killed(where: Path) -> Outcome:
    tag = new_tag()
    project = project_in(where)
    command = _command(tag)
    with FakeModelServer() as server:
        server.queue(Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": command})]), Reply("ok"))
        proc = start_headless(project, env_for(where, server), "-p", "run it", "--yes")
        started = wait_for(lambda: processes("bash", "-c", command))
        proc.kill()
        proc.communicate(timeout=90)
    shell_gone = wait_for(lambda: not processes("bash", "-c", command), 10.0)
    _orphans(tag)  # a grandchild may outlive SIGKILL (documented); reaped, not counted
    ok = started and shell_gone
    return Outcome(ok, "the shell died with the agent" if ok else "the shell outlived a kill -9")


def cases() -> list[Case]:
    found = [
        Case(
            "signals",
            f"headless {how} · {wire}",
            partial(_headless, how=how, wire=wire),
            sample=False,  # tests/test_signals.py covers these in CI
        )
        for how in HEADLESS
        for wire in WIRES
    ]
    found += [
        Case("signals", f"REPL {how}", partial(_repl, how=how), sample=how == "Ctrl-C") for how in HEADLESS
    ]
    found.append(Case("signals", "kill -9 (Linux): the shell dies with the agent", _killed, sample=False))
    return found

"""The sandbox suite's escapes through `agent` itself (issue 38, item 6): `agent -p --yes --sandbox
MODE` against the fake model server, the model asking the bash tool for each escape. A case passes
when the escape is refused under `workspace-write` AND works with `--sandbox off` (so it can fail):
a write outside the project, a read of a planted `~/.ssh` key, a connection to the case's own
listener on 127.0.0.1, a daemon that outlives the command that started it, git running what
`.git/config` names (`core.fsmonitor`) for an approved `git status`. The fork bomb case holds in
both modes (the bound is the session's cgroup, not the sandbox): a bomb with its own stop is
refused at `[sandbox] max_processes` and the next command runs.

Where bubblewrap (or, for the bomb, a pids controller) does not work here, a case passes with the
reason in its detail, as `hostile_sandbox.py` does. "Outside" is under /var/tmp: the sandbox
leaves the system's temporary directory writable by design.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import tool_results
from tests.reliability.harness import Case, Outcome, agent, env_for, project_in
from tests.sandbox_support import VERDICT
from tests.test_fork_bomb import BOMB, WHY_NOT

SUITE = "sandbox"
MODES = ("workspace-write", "off")
KEY = "PLANTED-KEY-MATERIAL"
BOUND, HARD_STOP = 300, 600


def _session(where: Path, mode: str, commands: list[str], config: str = "") -> tuple[list[str], str]:
    """The bash results of one `agent -p` run whose model asks for `commands` in turn, and a
    problem with the run itself ("" when it finished)."""
    project = project_in(where)
    user = where / "user.toml"
    user.write_text(config)
    with FakeModelServer() as server:
        calls = [Reply(tool_calls=[ToolCallSpec("bash", {"command": c})]) for c in commands]
        server.queue(*calls, Reply("done"))
        done = agent(
            ["-p", "go", "--yes", "--sandbox", mode, "--config", str(user)], project, env_for(where, server)
        )
        texts = [text for text, _ in tool_results(server.requests).values()]
    err = done.stderr.decode("utf-8", "replace")
    problem = (
        "" if done.returncode == 0 and "Traceback" not in err else f"exit {done.returncode}: {err[-200:]}"
    )
    return texts, problem


def _both(
    where: Path, escape: Callable[[Path, Path], list[str]], got_out: Callable[[Path, list[str]], bool]
) -> Outcome:
    """`escape(project_dir, outside)` is the model's commands; `got_out(outside, results)` whether
    they got out. Refused in the sandbox, working with it off."""
    if not VERDICT.works:
        return Outcome(True, f"skipped: {VERDICT.reason}")
    seen: dict[str, bool] = {}
    for mode in MODES:
        outside = Path(tempfile.mkdtemp(prefix="agent-outside-", dir="/var/tmp"))
        try:
            run = where / mode
            run.mkdir()
            texts, problem = _session(run, mode, escape(run / "project", outside))
            if problem:
                return Outcome(False, f"{mode}: {problem}")
            seen[mode] = got_out(outside, texts)
        finally:
            shutil.rmtree(outside, ignore_errors=True)
    ok = not seen["workspace-write"] and seen["off"]
    return Outcome(ok, f"refused in the sandbox: {not seen['workspace-write']}, works off: {seen['off']}")


def _wrote(outside: Path, _texts: list[str]) -> bool:
    return (outside / "f").exists()


def _read_key(project: Path, _outside: Path) -> list[str]:
    key = project.parent / "home" / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text(KEY)
    return [f"cat {key}"]


def _connection(where: Path) -> Outcome:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('CONNECTED')"
        )
        return _both(
            where, lambda _p, _o: [f'{sys.executable} -c "{code}"'], lambda _o, t: "CONNECTED" in t[0]
        )


# A daemon that beats into the project (writable in both modes); the next command looks whether it
# still beats: a daemon left by a command that returned.
_DAEMON = "setsid sh -c 'while :; do date +%s%N > {p}/beat; sleep 0.2; done' >/dev/null 2>&1 < /dev/null &"
_BEATS = 'a=$(cat {p}/beat); sleep 2; b=$(cat {p}/beat); [ -n "$b" ] && [ "$a" != "$b" ] && echo ALIVE'


def _daemon(project: Path, _outside: Path) -> list[str]:
    return [_DAEMON.format(p=project), _BEATS.format(p=project)]


def _git(project: Path, outside: Path) -> list[str]:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    hook = f"echo x > {outside}/f; false"
    subprocess.run(["git", "-C", str(project), "config", "core.fsmonitor", hook], check=True)
    return ["git status >/dev/null 2>&1; true"]


def _fork_bomb(where: Path) -> Outcome:
    if WHY_NOT is not None:
        return Outcome(True, f"skipped: {WHY_NOT}")
    if not VERDICT.works:
        return Outcome(True, f"skipped: {VERDICT.reason}")
    project = where / "project"
    project.mkdir()
    (project / "bomb.py").write_text(BOMB)
    bomb = f"{sys.executable} bomb.py {HARD_STOP}"
    texts, problem = _session(
        where, "workspace-write", [bomb, "echo still-here"], f"[sandbox]\nmax_processes = {BOUND}\n"
    )
    if problem or len(texts) != 2:
        return Outcome(False, problem or f"{len(texts)} results")
    started = int(texts[0].split("started ", 1)[1].split(";", 1)[0]) if "started " in texts[0] else HARD_STOP
    ok = started < BOUND and "still-here" in texts[1]
    return Outcome(
        ok, f"started {started} of {HARD_STOP} (bound {BOUND}); next command ran: {'still-here' in texts[1]}"
    )


def cases() -> list[Case]:
    return [
        Case(
            SUITE,
            "agent: a write outside the project",
            partial(_both, escape=lambda _p, o: [f"echo out > {o}/f"], got_out=_wrote),
            sample=True,
        ),
        Case(
            SUITE,
            "agent: a read of ~/.ssh/id_ed25519",
            partial(_both, escape=_read_key, got_out=lambda _o, t: KEY in t[0]),
        ),
        Case(SUITE, "agent: a connection to 127.0.0.1", _connection),
        Case(
            SUITE,
            "agent: a daemon outlives the command that started it",
            partial(_both, escape=_daemon, got_out=lambda _o, t: len(t) == 2 and "ALIVE" in t[1]),
        ),
        Case(
            SUITE,
            "agent: git runs .git/config's core.fsmonitor (approved git status)",
            partial(_both, escape=_git, got_out=_wrote),
        ),
        Case(SUITE, "agent: a fork bomb stops at the session's bound, the agent goes on", _fork_bomb),
    ]

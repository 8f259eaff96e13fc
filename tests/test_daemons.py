"""What a command leaves running when it returns (a daemon) ends with the agent (issue 35, item 2):
after a normal exit and after `kill -9`, through the bash tool and through a hook; the session
cgroup (`tools/cgroups.py`) in each hierarchy this machine offers, and the subreaper without one.

Each daemon is `sleep <tag>` with a tag no other run uses: the test finds it in /proc by that exact
command line, and kills what it finds in the end, whatever the test saw."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.tools import cgroups, containment
from tests.e2e import agent_env, run_agent, tool_results
from tests.reliability import procs
from tests.reliability.procs import new_tag, processes, wait_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; cgroups are Linux's"),
]

QUIET = ">/dev/null 2>&1"
# Each way of leaving a process behind; {tag} names it, {python} is this interpreter.
SHAPES = {
    "setsid": "setsid sleep {tag} " + QUIET + " &",
    "nohup": "nohup sleep {tag} " + QUIET + " &",
    "double-fork": "(sleep {tag} " + QUIET + " &) &",
    "env-i-setsid": "env -i setsid sleep {tag} " + QUIET + " &",
    "python-setsid": '{python} -c \'import os; os.setsid(); os.execvp("sleep", ["sleep", "{tag}"])\' '
    + QUIET
    + " &",
}
# The command goes on until its daemon shows in /proc, then says so: the test knows it ran.
UP = "DAEMON-UP"
WAIT_UP = "for i in $(seq 200); do pgrep -fx 'sleep {tag}' >/dev/null && break; sleep 0.05; done; " + (
    "pgrep -fx 'sleep {tag}' >/dev/null && echo " + UP
)
DEADLINE = 60.0  # generous: only a failure waits this long


def daemon_command(shape: str, tag: str) -> str:
    start = SHAPES[shape].format(tag=tag, python=shlex.quote(sys.executable))
    return f"{start} {WAIT_UP.format(tag=tag)}"


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    try:
        yield value
    finally:
        for pid in processes("sleep", value):  # never leave one behind, whatever the test found
            os.kill(pid, signal.SIGKILL)


def _env(tmp_path: Path, server: FakeModelServer, container: str | None) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = agent_env(home, server)
    env.pop(containment.ENV_VAR, None)
    if container is not None:
        env[containment.ENV_VAR] = container
    return env


def _offered() -> list[str]:
    """The cgroup hierarchies this machine offers (the agent's own cgroup in each)."""
    try:
        with open("/proc/self/mountinfo") as f, open("/proc/self/cgroup") as g:
            return [kind for kind, _ in cgroups.places(f.read(), g.read())]
    except OSError:
        return []


CONTAINERS = [None, *(k for k in cgroups.KINDS if k in _offered()), "subreaper"]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_daemon_a_command_left_ends_when_the_agent_exits(tmp_path: Path, tag: str, shape: str) -> None:
    with FakeModelServer() as server:
        call = ToolCallSpec("bash", {"command": daemon_command(shape, tag)}, id="toolu_d")
        server.queue(Reply("Starting it.", tool_calls=[call]), Reply("Started."))
        result = run_agent(["-p", "start the server", "--yes"], tmp_path, _env(tmp_path, server, None))
        text, _ = tool_results(server.requests).get("toolu_d", ("(no result)", False))
    assert result.returncode == 0, result.stderr
    assert UP in text, f"the daemon never started: {text!r}"
    assert wait_for(lambda: not processes("sleep", tag), DEADLINE), f"survivors: {processes('sleep', tag)}"


@pytest.mark.parametrize("container", CONTAINERS, ids=lambda c: c or "chosen")
def test_every_container_ends_every_daemon_at_exit(tmp_path: Path, container: str | None) -> None:
    """Each kind of container the machine offers, forced, with all the shapes in one command."""
    tags = {shape: new_tag() for shape in SHAPES}
    try:
        command = " ".join(daemon_command(shape, tags[shape]) + ";" for shape in SHAPES)
        with FakeModelServer() as server:
            call = ToolCallSpec("bash", {"command": command}, id="toolu_d")
            server.queue(Reply("Starting them.", tool_calls=[call]), Reply("Started."))
            result = run_agent(["-p", "start them", "--yes"], tmp_path, _env(tmp_path, server, container))
            text, _ = tool_results(server.requests).get("toolu_d", ("(no result)", False))
        assert result.returncode == 0, result.stderr
        assert text.count(UP) == len(SHAPES), f"not every daemon started: {text!r}"
        for shape, tag in tags.items():
            assert wait_for(lambda t=tag: not processes("sleep", t), DEADLINE), f"{shape} survived"  # type: ignore[misc]
    finally:
        for tag in tags.values():
            for pid in processes("sleep", tag):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("shape", "container"),
    [*((shape, None) for shape in SHAPES), ("env-i-setsid", "subreaper"), ("double-fork", "subreaper")],
    ids=[*SHAPES, "env-i-setsid-subreaper", "double-fork-subreaper"],
)
def test_a_daemon_ends_when_the_agent_is_killed_outright(
    tmp_path: Path, tag: str, shape: str, container: str | None
) -> None:
    """`kill -9` of the agent after the command that left the daemon returned: no handler of the
    agent runs; the watchdog kills the session cgroup (as subreaper: the daemons it was told of)."""
    blocker = new_tag()
    try:
        with FakeModelServer() as server:
            start = ToolCallSpec("bash", {"command": daemon_command(shape, tag)}, id="toolu_d")
            hold = ToolCallSpec("bash", {"command": f"sleep {blocker}"}, id="toolu_hold")
            server.queue(Reply("Starting it.", tool_calls=[start]), Reply("Waiting.", tool_calls=[hold]))
            server.default = Reply("ok")
            env = _env(tmp_path, server, container)
            proc = procs.start_headless(tmp_path, env, "-p", "start it", "--yes")
            try:
                # The daemon's command has returned once the next one runs.
                assert wait_for(lambda: processes("sleep", blocker), DEADLINE), "the second command never ran"
                assert processes("sleep", tag), "the daemon never started"
            finally:
                proc.kill()  # SIGKILL: no handler runs
                proc.communicate(timeout=DEADLINE)
        assert wait_for(lambda: not processes("sleep", tag), DEADLINE), (
            f"survivors: {processes('sleep', tag)}"
        )
    finally:
        for pid in processes("sleep", blocker):
            os.kill(pid, signal.SIGKILL)


def test_a_daemon_a_hook_left_ends_when_the_agent_exits(tmp_path: Path, tag: str) -> None:
    config = tmp_path / "hooks.toml"
    hook = SHAPES["env-i-setsid"].format(tag=tag) + " " + WAIT_UP.format(tag=tag) + f" > {tmp_path / 'up'}"
    config.write_text("[[hooks.PreToolUse]]\nmatcher = \"bash\"\ncommand = '''" + hook + "'''\n")
    with FakeModelServer() as server:
        server.queue(
            Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": "true"})]), Reply("Done.")
        )
        result = run_agent(
            ["-p", "run it", "--yes", "--config", str(config)], tmp_path, _env(tmp_path, server, None)
        )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "up").read_text().strip() == UP, "the hook's daemon never started"
    assert wait_for(lambda: not processes("sleep", tag), DEADLINE), f"survivors: {processes('sleep', tag)}"


def test_a_stale_session_cgroup_is_removed_with_what_it_holds(tmp_path: Path, tag: str) -> None:
    """An agent killed together with its watchdog leaves its cgroup and daemons: the next agent's
    first command removes both."""
    if not _offered():
        pytest.skip("no cgroup hierarchy here")
    script = (
        "import os, signal\n"
        "from agent_cli.tools import children\n"
        "from agent_cli.tools.bash import run_command\n"
        f"run_command('setsid sleep {tag} {QUIET} &', '.', 30)\n"
        "os.kill(children._watch.pid, signal.SIGKILL)\n"  # the watchdog first, then the agent
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    first = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stderr=subprocess.PIPE)
    _, err = first.communicate(timeout=DEADLINE)
    assert first.returncode == -signal.SIGKILL, err
    assert wait_for(lambda: processes("sleep", tag), 5.0), "the daemon never started (or did not survive)"
    left = [d for d in _session_cgroups() if f"-{first.pid}-" in d]
    assert left, "the killed agent left no cgroup to sweep"
    second = subprocess.run(
        [sys.executable, "-c", "from agent_cli.tools.bash import run_command; run_command('true', '.', 30)"],
        cwd=tmp_path,
        timeout=DEADLINE,
        capture_output=True,
    )
    assert second.returncode == 0, second.stderr
    assert wait_for(lambda: not processes("sleep", tag), DEADLINE), "the stale cgroup's daemon survived"
    assert not [d for d in left if os.path.exists(d)], "the stale cgroup is still there"


def _session_cgroups() -> list[str]:
    with open("/proc/self/mountinfo") as f, open("/proc/self/cgroup") as g:
        places = cgroups.places(f.read(), g.read())
    return [
        os.path.join(parent, name)
        for _, parent in places
        for name in os.listdir(parent)
        if name.startswith(cgroups.PREFIX)
    ]


def test_a_daemon_an_mcp_server_left_ends_when_the_agent_exits(tmp_path: Path, tag: str) -> None:
    """A stdio MCP server (started by the MCP SDK, not by us) that leaves an `env -i` daemon."""
    from tests.mcp_servers.helpers import SERVER

    up = tmp_path / "up"
    start = SHAPES["env-i-setsid"].format(tag=tag) + " " + WAIT_UP.format(tag=tag) + f" > {up}; "
    shell = start + f"exec {shlex.quote(sys.executable)} {shlex.quote(str(SERVER))}"
    config = tmp_path / "mcp.toml"
    config.write_text(
        f"[mcp.servers.notes]\ncommand = \"sh\"\nargs = [\"-c\", '''{shell}''']\ntimeout = 20\n"
    )
    with FakeModelServer() as server:
        call = ToolCallSpec("mcp__notes__search", {"query": "alpha"}, id="c1")
        server.queue(Reply(tool_calls=[call]), Reply("Found it."))
        result = run_agent(
            ["-p", "look", "--yes", "--config", str(config)], tmp_path, _env(tmp_path, server, None)
        )
        text, is_error = tool_results(server.requests).get("c1", ("(no result)", True))
    assert result.returncode == 0, result.stderr
    assert not is_error, text
    assert up.read_text().strip() == UP, "the server's daemon never started"
    assert wait_for(lambda: not processes("sleep", tag), DEADLINE), f"survivors: {processes('sleep', tag)}"

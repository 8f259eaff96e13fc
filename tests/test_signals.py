"""The commands the agent starts end with it: Ctrl-C, SIGTERM and SIGHUP, headless and in the REPL,
exit, and the agent killed outright (the kernel and the watchdog). Each run starts `sleep <tag>`
through the bash tool, signals the agent while it runs, and looks for that sleep in /proc afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.tools import children
from agent_cli.tools.bash import run_command
from tests.e2e import agent_env
from tests.reliability import procs
from tests.reliability.procs import new_tag, processes, spawn_repl, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    for pid in processes("sleep", value):  # never leave one behind, whatever the test found
        os.kill(pid, signal.SIGKILL)


def start_headless(tmp_path: Path, server: FakeModelServer, tag: str) -> subprocess.Popen[str]:
    server.queue(
        Reply("", tool_calls=[ToolCallSpec("bash", {"command": f"sleep {tag}; echo done"})]), Reply("ok")
    )
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # The project holds the test's home here, which no sandbox can confine: the subject is signals.
    return procs.start_headless(
        tmp_path, agent_env(home, server), "-p", "run it", "--yes", "--sandbox", "off"
    )


@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted by the user"),
        (signal.SIGTERM, 143, "stopped by SIGTERM; its running command was killed"),
        (signal.SIGHUP, 129, "stopped by SIGHUP; its running command was killed"),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_headless_signal_kills_the_running_command(
    tmp_path: Path, tag: str, sig: signal.Signals, code: int, said: str
) -> None:
    with FakeModelServer() as server:
        proc = start_headless(tmp_path, server, tag)
        assert wait_for(lambda: processes("sleep", tag)), "the command never started"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=90)
    assert proc.returncode == code
    assert err.strip().splitlines() == [f"agent: {said}"]
    assert wait_for(lambda: not processes("sleep", tag), 30.0), "the command outlived the agent"


def test_repl_hangup_kills_the_running_command_and_exits(tmp_path: Path, tag: str) -> None:
    pexpect = pytest.importorskip("pexpect")
    from tests.test_repl_pty import expect

    with FakeModelServer() as server:
        server.queue(Reply("Sleeping.", tool_calls=[ToolCallSpec("bash", {"command": f"sleep {tag}"})]))
        env = agent_env(tmp_path / "home", server)
        child = spawn_repl(tmp_path, env, timeout=90)
        try:
            expect(child, "auto-compact at ")
            child.send("run the sleeper\r")
            expect(child, r"allow\? \[y\]es")
            child.send("y")
            assert wait_for(lambda: processes("sleep", tag)), "the command never started"
            child.kill(signal.SIGHUP)
            child.expect(pexpect.EOF, timeout=90)
        finally:
            child.close(force=True)
    assert child.exitstatus == 129 or child.signalstatus == signal.SIGHUP
    assert child.exitstatus == 129, "the REPL should exit 128 + SIGHUP after a clean stop"
    assert wait_for(lambda: not processes("sleep", tag), 30.0)


def test_exit_kills_what_a_tool_thread_still_runs(tmp_path: Path, tag: str) -> None:
    """An interpreter that exits while a command runs in a tool's thread leaves nothing behind."""
    script = (
        "import os, threading, time\n"
        "from agent_cli.tools.bash import run_command\n"
        "from agent_cli.ui import ending\n"
        "ending.install()\n"
        f"threading.Thread(target=run_command, args=('touch started; sleep {tag}; echo', '.', 60),\n"
        "                 daemon=True).start()\n"
        "for _ in range(6000):  # until the command runs, however busy the machine\n"
        "    if os.path.exists('started'):\n"
        "        break\n"
        "    time.sleep(0.01)\n"
        "raise SystemExit(3)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, timeout=120, capture_output=True, text=True
    )
    assert proc.returncode == 3, proc.stderr
    assert wait_for(lambda: not processes("sleep", tag), 30.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_kernel_kills_the_shell_when_the_agent_is_killed_outright(tmp_path: Path, tag: str) -> None:
    command = f"sleep {tag}; echo done"
    with FakeModelServer() as server:
        proc = start_headless(tmp_path, server, tag)
        assert wait_for(lambda: processes("bash", "-c", command)), "the command never started"
        proc.kill()  # SIGKILL: no handler runs
        proc.communicate(timeout=90)
    # The shell is gone (the kernel killed it), so "done" is never printed; its children go too (the
    # watchdog: see the next tests).
    assert wait_for(lambda: not processes("bash", "-c", command), 30.0)


def test_kill_all_stops_every_registered_group(tmp_path: Path, tag: str) -> None:
    cancel = threading.Event()
    worker = threading.Thread(target=run_command, args=(f"sleep {tag}", tmp_path, 60, cancel), daemon=True)
    worker.start()
    assert wait_for(lambda: processes("sleep", tag))
    assert len(children.live_groups()) >= 1
    assert children.kill_all(grace=0.5) >= 1
    assert wait_for(lambda: not processes("sleep", tag), 30.0)
    worker.join(5)
    assert not worker.is_alive() and children.live_groups() == []


# --- kill -9 of the agent: the whole command goes (issue 16, item 7) ------------------------------


def start_with(tmp_path: Path, server: FakeModelServer, command: str) -> subprocess.Popen[str]:
    server.queue(Reply("", tool_calls=[ToolCallSpec("bash", {"command": command})]), Reply("ok"))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return procs.start_headless(tmp_path, agent_env(home, server), "-p", "run it", "--yes")


@pytest.mark.parametrize(
    ("shape", "count"),
    [
        ("sleep {tag} & sleep {tag} & wait", 2),  # children in the shell's group
        ("setsid sleep {tag} & sleep {tag}; wait", 2),  # one left the group and the session
        ("(setsid sh -c 'sleep {tag} &' &); sleep {tag}", 2),  # a daemon's double fork
    ],
    ids=["group", "setsid", "double-fork"],
)
def test_kill_9_of_the_agent_leaves_no_child_of_the_command(
    tmp_path: Path, tag: str, shape: str, count: int
) -> None:
    command = shape.format(tag=tag)
    with FakeModelServer() as server:
        proc = start_with(tmp_path, server, command)
        assert wait_for(lambda: len(processes("sleep", tag)) == count), "the command never started"
        proc.kill()  # SIGKILL: no handler runs
        proc.communicate(timeout=90)
    # The watchdog sends TERM, waits its 1 s grace, then KILL: 30 s leaves room on a loaded machine.
    assert wait_for(lambda: not processes("sleep", tag), 30.0), f"survivors: {processes('sleep', tag)}"


def test_a_timeout_kills_what_the_command_started_with_setsid(tmp_path: Path, tag: str) -> None:
    # A timeout of 3 s: on a busy machine the shell may take a second to echo.
    result = run_command(f"setsid sleep {tag} & echo started; wait", tmp_path, 3.0)
    assert result.timed_out and result.output.startswith("started")
    assert wait_for(lambda: not processes("sleep", tag), 30.0)


def test_the_watchdog_starts_with_the_first_command_only(tmp_path: Path) -> None:
    """`agent --version` and a session that runs no command start no watchdog."""
    script = (
        "import os, sys\n"
        "from agent_cli.tools import children\n"
        "from agent_cli.tools.bash import run_command\n"
        "def parent(p):\n"
        "    try:  # a process may end between the listing and the reading\n"
        "        return open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1]\n"
        "    except (OSError, IndexError):\n"
        "        return None\n"
        "def kids():\n"
        "    me = str(os.getpid())\n"
        "    return [p for p in os.listdir('/proc') if p.isdigit() and parent(p) == me]\n"
        "before = kids()\n"
        "run_command('true', '.', 10)\n"
        "run_command('true', '.', 10)\n"
        "print(len(before), len(kids()))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.split() == ["0", "1"], proc.stderr  # one watchdog, for both commands


def test_a_kill_9_between_the_start_of_a_command_and_its_registration_leaves_nothing(
    tmp_path: Path, tag: str
) -> None:
    """The watchdog hears of a command's marker before the command starts: an agent killed after
    the start but before `register` (a loaded machine's window) still has the command stopped."""
    script = (
        "import os, signal, subprocess, time\n"
        "from agent_cli.tools import children\n"
        "marker = children.new_marker()\n"
        "env = dict(os.environ, **{children.MARKER_VAR: marker})\n"
        f"subprocess.Popen(['bash', '-c', 'sleep {tag} & sleep {tag} & touch started; wait'], env=env,\n"
        "                 start_new_session=True)\n"
        "for _ in range(6000):  # until the command runs, however busy the machine\n"
        "    if os.path.exists('started'):\n"
        "        break\n"
        "    time.sleep(0.01)\n"
        "os.kill(os.getpid(), signal.SIGKILL)  # never registered\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, timeout=120, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert wait_for(lambda: not processes("sleep", tag), 30.0), f"survivors: {processes('sleep', tag)}"


def test_a_command_that_never_started_is_withdrawn_from_the_watchdog(tmp_path: Path) -> None:
    marker = children.new_marker()
    children.withdraw(marker)
    with pytest.raises(FileNotFoundError):
        run_command("true", tmp_path / "missing", 10)  # the cwd does not exist: Popen fails
    assert children.live_groups() == [] and not children._announced

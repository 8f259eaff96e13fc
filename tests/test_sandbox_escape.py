"""Commands that try to get out of the sandbox, run through the launcher (`agent_cli.sandbox.launch`)
under bubblewrap: each is refused under "workspace-write" and works under "off" (so each test can fail).

Skipped, with the probe's reason, where bubblewrap does not work; .ci/run's install brings the wheel,
so CI runs them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.sandbox.policy import HIDDEN_IN_HOME, SandboxMode
from tests.sandbox_support import NOBODY, Tree, needs_bwrap, tree

pytestmark = needs_bwrap
__all__ = ["tree"]  # the fixture, imported for pytest

BOTH: list[SandboxMode] = ["workspace-write", "off"]


def _escaped(mode: SandboxMode) -> bool:
    return mode == "off"


def test_the_project_and_the_temp_dir_are_writable_inside(tree: Tree) -> None:
    done = tree.run("workspace-write", f"echo in > here && echo t > {tree.tmp}/t && cat here")
    assert done.returncode == 0, done.stderr
    assert (tree.project / "here").read_text() == "in\n"
    assert (tree.tmp / "t").exists()


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize(
    "how",
    ["absolute", "dotdot", "planted symlink", "proc self root"],
)
def test_a_write_outside_the_project(tree: Tree, mode: SandboxMode, how: str) -> None:
    target = {
        "absolute": f"{tree.outside}/f",
        "dotdot": "../outside/f",
        "planted symlink": "link/f",
        "proc self root": f"/proc/self/root{tree.outside}/f",
    }[how]
    (tree.project / "link").symlink_to(tree.outside)
    done = tree.run(mode, f"echo out > {target}")
    assert (tree.outside / "f").exists() is _escaped(mode), done.stderr
    if not _escaped(mode):
        assert "Read-only file system" in done.stderr


def test_read_only_mode_writes_nothing_but_a_private_temp(tree: Tree) -> None:
    done = tree.run("read-only", f"echo t > {tree.tmp}/t && cat {tree.tmp}/t; echo p > here")
    assert done.stdout == "t\n"  # the private temporary directory works...
    assert not (tree.tmp / "t").exists()  # ...and is not the real one
    assert not (tree.project / "here").exists()
    assert "Read-only file system" in done.stderr


def _plant(home: Path, rel: str, secret: str) -> str:
    """A fake credential at `home/rel`: a file, or a directory holding one. The path to `cat`."""
    path = home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if "." in path.name and path.name not in (".ssh", ".aws", ".gnupg", ".azure", ".kube", ".password-store"):
        path.write_text(secret)
        return str(path)
    path.mkdir(exist_ok=True)
    (path / "key").write_text(secret)
    return str(path / "key")


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize("rel", HIDDEN_IN_HOME)
def test_a_read_of_a_hidden_path(tree: Tree, mode: SandboxMode, rel: str) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    target = _plant(tree.home, rel, secret)
    done = tree.run(mode, f"cat {target}")
    assert (secret in done.stdout) is _escaped(mode), (done.stdout, done.stderr)


@pytest.mark.parametrize("mode", BOTH)
def test_a_read_of_the_agents_state_and_through_a_planted_symlink(tree: Tree, mode: SandboxMode) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    (tree.state / "session.key").write_text(secret)
    target = _plant(tree.home, ".ssh", secret + "-ssh")
    (tree.project / "keys").symlink_to(tree.home / ".ssh")
    done = tree.run(mode, f"cat {tree.state}/session.key; cat keys/key; cat /proc/self/root{target}")
    assert done.stdout.count(secret) == (3 if _escaped(mode) else 0), done.stdout


@pytest.mark.parametrize("mode", BOTH)
def test_a_user_added_hidden_path(tree: Tree, mode: SandboxMode) -> None:
    (tree.outside / "private.txt").write_text("MINE")
    policy = tree.policy(mode, hidden=[tree.outside / "private.txt"])
    done = tree.run(mode, f"cat {tree.outside}/private.txt", policy=policy)
    assert ("MINE" in done.stdout) is _escaped(mode)


@pytest.mark.parametrize("mode", BOTH)
def test_secret_variables_are_not_passed_in(tree: Tree, mode: SandboxMode) -> None:
    env = {"GITHUB_TOKEN": "ghp-secret-value-1234", "AWS_SECRET_ACCESS_KEY": "aws-secret-5678"}
    env["PLAIN"] = "kept"
    done = tree.run(mode, "env", env=env)
    assert "PLAIN=kept" in done.stdout
    assert ("ghp-secret-value-1234" in done.stdout) is _escaped(mode)
    assert ("aws-secret-5678" in done.stdout) is _escaped(mode)


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.sendall(b"HELLO\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        thread.join()
        server.close()


_CONNECT = (
    "import socket,sys; s=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10);"
    " print(s.recv(6).decode())"
)


@pytest.mark.parametrize("mode", BOTH)
def test_a_connection_to_loopback(tree: Tree, mode: SandboxMode, listener: int) -> None:
    done = tree.run(mode, f"{sys.executable} -c '{_CONNECT}' 127.0.0.1 {listener}")
    assert ("HELLO" in done.stdout) is _escaped(mode), done.stderr


def test_the_network_opened_by_the_policy(tree: Tree, listener: int) -> None:
    policy = tree.policy("workspace-write", network=True)
    done = tree.run(
        "workspace-write", f"{sys.executable} -c '{_CONNECT}' 127.0.0.1 {listener}", policy=policy
    )
    assert "HELLO" in done.stdout, done.stderr


@pytest.fixture
def netns() -> Iterator[str]:
    """A network namespace of the test's own with a veth pair, one end at 10.200.0.1 (an address that
    exists only inside it), torn down after. Never a host outside the machine. (A veth pair rather
    than a dummy interface: this machine's kernel has no dummy driver.)"""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("creating a network namespace needs root and iproute2's ip")
    name = f"agent-sbx-{os.getpid()}"
    steps = [
        ["ip", "netns", "add", name],
        ["ip", "-n", name, "link", "set", "lo", "up"],
        ["ip", "-n", name, "link", "add", "sbx0", "type", "veth", "peer", "name", "sbx1"],
        ["ip", "-n", name, "addr", "add", "10.200.0.1/24", "dev", "sbx0"],
        ["ip", "-n", name, "link", "set", "sbx0", "up"],
        ["ip", "-n", name, "link", "set", "sbx1", "up"],
    ]
    try:
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                said = done.stderr.strip()
                pytest.skip(f"cannot set up a network namespace here: {' '.join(step)}: {said}")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


_SERVE_ONCE = (
    "import socket; s=socket.create_server(('10.200.0.1', 0)); print(s.getsockname()[1], flush=True);"
    " s.settimeout(30); c,_=s.accept(); c.sendall(b'HELLO\\n'); c.close()"
)


@pytest.mark.parametrize("mode", BOTH)
def test_a_connection_to_a_non_loopback_address(tree: Tree, mode: SandboxMode, netns: str) -> None:
    inside = ["ip", "netns", "exec", netns]
    server = subprocess.Popen([*inside, sys.executable, "-c", _SERVE_ONCE], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        done = tree.run(mode, f"{sys.executable} -c '{_CONNECT}' 10.200.0.1 {port}", prefix=inside)
        assert ("HELLO" in done.stdout) is _escaped(mode), done.stderr
    finally:
        server.kill()
        server.wait()


def _alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("mode", BOTH)
def test_a_daemon_left_behind_dies_with_the_sandbox(tree: Tree, mode: SandboxMode) -> None:
    marker = f"agent-sbx-daemon-{uuid.uuid4().hex}"
    daemon = f"{sys.executable} -c 'import time; time.sleep(120)' {marker}"
    done = tree.run(mode, f"setsid nohup {daemon} >/dev/null 2>&1 & sleep 0.5; echo started")
    assert "started" in done.stdout, done.stderr
    try:
        if _escaped(mode):
            assert _alive(marker), "the daemon outlives the command without a sandbox"
        else:
            # The PID namespace is gone once `run` returned: its processes were killed with it.
            deadline = time.monotonic() + 30
            while _alive(marker) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _alive(marker) == []
    finally:
        for pid in _alive(marker):
            os.kill(pid, 9)


_BOMB = (
    "import subprocess\n"
    "n = 0\n"
    "for _ in range(120):\n"
    "    try:\n"
    "        subprocess.Popen(['sleep', '3']); n += 1\n"
    "    except OSError:\n"
    "        pass\n"
    "print('STARTED', n)\n"
)


@pytest.mark.parametrize("mode", BOTH)
def test_a_fork_bomb_is_bounded(tree: Tree, mode: SandboxMode) -> None:
    """As nobody: root is exempt from RLIMIT_NPROC (the session's cgroup bounds root). A bounded bomb
    (120 children), so that "off" can show it unbounded without hurting the machine."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("switching to nobody needs root and util-linux's setpriv")
    if not Path("/usr/bin/python3").exists():
        pytest.skip("nobody runs the system's /usr/bin/python3 (the venv may be closed to it)")
    script = tree.base / "bomb.py"
    script.write_text(_BOMB)
    script.chmod(0o755)
    policy = tree.policy(mode, max_processes=40)
    done = tree.run(mode, f"/usr/bin/python3 {script}", prefix=NOBODY, policy=policy)
    started = int(done.stdout.split()[-1]) if "STARTED" in done.stdout else -1
    if _escaped(mode):
        assert started == 120, done.stderr
    else:
        assert 0 <= started < 40, (done.stdout, done.stderr)


@pytest.mark.parametrize("mode", BOTH)
def test_the_sandbox_works_for_a_user_without_root(tree: Tree, mode: SandboxMode) -> None:
    """As nobody (user namespaces, no setuid bwrap): writes outside, a hidden key, the loopback."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("switching to nobody needs root and util-linux's setpriv")
    key = _plant(tree.home, ".ssh", "NOBODYS-KEY")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('CONN')"
        script = f'echo x > {tree.outside}/f; echo y > here; cat {key}; /usr/bin/python3 -c "{connect}"'
        done = tree.run(mode, script, prefix=NOBODY)
    assert (tree.project / "here").exists(), done.stderr
    assert (tree.outside / "f").exists() is _escaped(mode)
    assert ("NOBODYS-KEY" in done.stdout) is _escaped(mode)
    assert ("CONN" in done.stdout) is _escaped(mode)


@pytest.mark.parametrize("mode", BOTH)
def test_what_gits_own_config_runs_writes_nothing_outside(tree: Tree, mode: SandboxMode) -> None:
    """A repository's `.git/config` names a command git runs by itself (core.fsmonitor, on `git status`)."""
    subprocess.run(["git", "init", "-q", str(tree.project)], check=True)
    subprocess.run(
        ["git", "-C", str(tree.project), "config", "core.fsmonitor", f"echo x > {tree.outside}/pwned; false"],
        check=True,
    )
    tree.run(mode, "git status >/dev/null 2>&1; true", env={"GIT_CONFIG_GLOBAL": "/dev/null"})
    assert (tree.outside / "pwned").exists() is _escaped(mode)


@pytest.mark.parametrize("mode", BOTH)
def test_the_ssh_agent_socket_is_out_of_reach(tree: Tree, mode: SandboxMode) -> None:
    """The variable goes, and the socket (in the writable temp dir, found by its path) is hidden too."""
    path = tree.tmp / "ssh-XXXX" / "agent.1"
    path.parent.mkdir()
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(path))
    agent.listen(1)
    try:
        connect = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); print('CONNECTED')"
        done = tree.run(
            mode,
            f'echo "sock=$SSH_AUTH_SOCK"; {sys.executable} -c "{connect}"',
            env={"SSH_AUTH_SOCK": str(path)},
        )
        assert (f"sock={path}" in done.stdout) is _escaped(mode)
        assert ("CONNECTED" in done.stdout) is _escaped(mode), done.stderr
    finally:
        agent.close()


@pytest.mark.parametrize("mode", BOTH)
def test_no_nested_user_namespace(tree: Tree, mode: SandboxMode) -> None:
    """Inside a user namespace of its own a command is root enough to mount over what it sees."""
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux's unshare")
    done = tree.run(mode, "unshare -Ur true && echo NESTED")
    assert ("NESTED" in done.stdout) is _escaped(mode), done.stderr


@pytest.mark.parametrize("mode", BOTH)
def test_a_hard_link_to_a_file_outside(tree: Tree, mode: SandboxMode) -> None:
    """Linked into the project, an outside file would be written through the writable mount; a link
    across mounts is refused (EXDEV), though the two directories share one file system here."""
    (tree.outside / "f").write_text("original\n")
    done = tree.run(mode, f"ln {tree.outside}/f hl && echo changed > hl")
    assert ((tree.outside / "f").read_text() == "changed\n") is _escaped(mode), done.stderr

"""Running one hook command: its JSON on stdin, in its own process group, bounded in time and size.

The command runs as `bash -c` (`sh -c` where there is no bash) in the project root, in a session
of its own (so its own process group), with `AGENT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` set. Its
stdin gets the event's JSON and is closed; stdout and stderr are read apart, each keeping its first
`OUTPUT_CAP` bytes and counting the rest. At the timeout (or Ctrl-C) the whole group goes: TERM,
a short grace, KILL, as the bash tool does (`tools/children.py`), and while it runs it is
registered there, so the agent ending any other way stops it too. A project's hook (once approved)
runs under the session's sandbox when it is on (`sandbox`: bubblewrap, the policy's environment).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.text import decode
from agent_cli.tools import children
from agent_cli.tools.confine import Confinement

__all__ = ["OUTPUT_CAP", "HookRun", "run_hook"]

OUTPUT_CAP = 64 * 1024  # bytes of each stream kept
CHUNK = 64 * 1024
POLL_SECONDS = 0.05
KILL_GRACE_SECONDS = 1.0
# After the shell exits, something it left in the background may hold the pipes: read for this long.
DRAIN_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one run ended: its exit code (None: it did not exit by itself), what it printed."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    failed: str = ""  # it could not be started: why
    duration: float = 0.0


class _Capped:
    def __init__(self) -> None:
        self.data = bytearray()
        self.total = 0

    def write(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = OUTPUT_CAP - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    def text(self) -> str:
        text = decode(bytes(self.data))
        more = self.total - len(self.data)
        return text + (f"\n… [{more:,} more bytes not kept]" if more > 0 else "")


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def run_hook(
    command: str,
    payload: bytes,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    sandbox: Confinement | None = None,
) -> HookRun:
    """Run one hook command with `payload` on its stdin; never raises for the command's own failure.
    `sandbox`: the session's, for a project's hook or one with `sandbox = true` (None: as the user)."""
    environ = dict(os.environ if env is None else env)
    project = str(cwd)
    environ.update(AGENT_PROJECT_DIR=project, CLAUDE_PROJECT_DIR=project)
    marker = children.new_marker()
    environ[children.MARKER_VAR] = marker
    argv = [_shell(), "-c", command]
    if sandbox is not None:
        launch = sandbox.launch(argv, cwd, environ)
        argv, environ = launch.argv, launch.env
    started = time.monotonic()
    try:
        proc = children.popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=environ,
        )
    except OSError as exc:
        children.withdraw(marker)
        return HookRun(None, "", "", failed=f"cannot start: {exc.strerror or exc}")
    children.register(proc.pid, marker)
    try:
        return _collect(proc, payload, started, timeout)
    finally:
        children.unregister(proc.pid)


def _feed(proc: subprocess.Popen[bytes], payload: bytes) -> threading.Thread:
    """Write the payload in a thread (a hook that reads nothing must not stall the agent)."""
    assert proc.stdin is not None
    stdin = proc.stdin

    def write() -> None:
        with contextlib.suppress(OSError):  # the hook exited or closed stdin without reading
            stdin.write(payload)
        with contextlib.suppress(OSError):
            stdin.close()

    thread = threading.Thread(target=write, name="hook-stdin", daemon=True)
    thread.start()
    return thread


def _collect(proc: subprocess.Popen[bytes], payload: bytes, started: float, timeout: float) -> HookRun:
    assert proc.stdout is not None and proc.stderr is not None
    sinks = {proc.stdout.fileno(): _Capped(), proc.stderr.fileno(): _Capped()}
    out, err = sinks[proc.stdout.fileno()], sinks[proc.stderr.fileno()]
    feeder = _feed(proc, payload)
    deadline = started + timeout
    timed_out = False
    exited_at: float | None = None
    with selectors.DefaultSelector() as sel:
        for fd in sinks:
            sel.register(fd, selectors.EVENT_READ)
        try:
            while True:
                if sel.get_map():
                    for key, _ in sel.select(POLL_SECONDS):
                        chunk = os.read(key.fd, CHUNK)
                        if chunk:
                            sinks[key.fd].write(chunk)
                        else:
                            sel.unregister(key.fd)
                else:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(POLL_SECONDS)
                now = time.monotonic()
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and (not sel.get_map() or now - exited_at > DRAIN_SECONDS):
                    break
                if now >= deadline:
                    timed_out = True
                    break
        except BaseException:  # Ctrl-C while a hook runs: leave nothing running
            _kill(proc)
            raise
        finally:
            if timed_out:
                _kill(proc)
            proc.stdout.close()
            proc.stderr.close()
    feeder.join(1.0)
    code = None if timed_out else proc.wait()
    return HookRun(code, out.text(), err.text(), timed_out=timed_out, duration=time.monotonic() - started)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """TERM the hook's process group, a moment's grace, KILL what is left; reap the leader."""
    children.kill_group(proc.pid, proc.poll, KILL_GRACE_SECONDS)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)

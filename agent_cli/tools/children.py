"""The commands the tools started, so every way the agent ends can stop them and all they started.

A command starts here (`popen`): in its own process group (its own session), out of reach of the
terminal's Ctrl-C, with a marker of its own in its environment (`watchdog.MARKER_VAR`), so that
what it starts with `setsid` is still found, and inside the session's container
(`tools/containment.py`: a cgroup the agent moved into, where the system offers one, so its
children are born in it). `register` records it while it runs; `kill_all` sends TERM to every
recorded command, gives them a moment, then KILL: the CLI calls it on Ctrl-C, SIGTERM and SIGHUP.
`end`, at interpreter exit, does that and then ends everything the session's commands left behind
(daemons): the cgroup killed whole, or the agent's descendants (as subreaper), and whatever carries
one of the session's markers. The agent killed outright runs none of that: on Linux the kernel
kills a running command's shell (`pdeathsig`), and the watchdog (`tools/watchdog.py`), started
with the first command and told of each one and of the container, does the rest when its pipe
from the agent closes.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from agent_cli.tools import cgroups, containment, process_cap, watchdog
from agent_cli.tools.watchdog import group_alive

__all__ = [
    "MARKER_VAR",
    "end",
    "enter",
    "group_alive",
    "kill_all",
    "kill_group",
    "live_groups",
    "new_marker",
    "pdeathsig",
    "popen",
    "register",
    "unregister",
    "withdraw",
]

KILL_GRACE_SECONDS = 1.0
MARKER_VAR = watchdog.MARKER_VAR
_PR_SET_PDEATHSIG = 1

_lock = threading.RLock()  # kill_all may run in a signal handler while this thread holds it
_groups: dict[int, str] = {}  # pgid -> marker
_announced: set[str] = set()  # markers of commands about to start (or that failed to)
_markers = itertools.count(1)
_watch: _Watchdog | None = None
_adopted: set[int] = set()  # descendants the watchdog was told of (subreaper)
_session = ""  # what every marker of this agent begins with; made with the first command


def _prefix() -> str:
    global _session
    if not _session:
        _session = f"{os.getpid()}-{secrets.token_hex(4)}."
    return _session


def new_marker() -> str:
    """A value for `MARKER_VAR` no other command of any agent has: this process's id, a random
    token and a count. The watchdog hears of it before the command starts, so an agent killed
    between the start and `register` still has what the command started found by its marker."""
    with _lock:
        marker = f"{_prefix()}{next(_markers)}"
        _announced.add(marker)
        _tell(f"+ 0 {marker}")
    return marker


def register(pgid: int, marker: str = "") -> None:
    with _lock:
        _groups[pgid] = marker
        _announced.discard(marker)
        _tell(f"+ {pgid} {marker}")


def unregister(pgid: int) -> None:
    with _lock:
        marker = _groups.pop(pgid, None)
        if marker is not None and _watch is not None:
            _watch.send(f"- {pgid} {marker}")
            _tell_adopted()


def _tell_adopted() -> None:
    """As subreaper, a command that ended may have left daemons, now the agent's children: the
    watchdog is told of each (pid and start time), so that after a `kill -9` of the agent, when
    they go to init, it still finds them and what they started. Called with `_lock` held."""
    container = containment.chosen()
    if container is None or container.kind != "subreaper" or _watch is None:
        return
    spare = {_watch.pid, *_groups}
    for pid in containment.children_of():
        if pid not in _adopted and pid not in spare:
            _adopted.add(pid)
            _watch.send(f"d {pid} {cgroups.start_time(pid)}")


def withdraw(marker: str) -> None:
    """The command announced with `marker` did not start."""
    with _lock:
        if marker in _announced:
            _announced.discard(marker)
            if _watch is not None:
                _watch.send(f"- 0 {marker}")


def _tell(line: str) -> None:
    """Send `line` to the watchdog, starting one (told of everything live) if there is none or the
    last one died. Called with `_lock` held."""
    global _watch
    if _watch is None or not _watch.send(line):
        if _watch is not None:
            _watch.close()
        _watch = _Watchdog.start(_groups, _announced)  # the first command, or the last watchdog died


def live_groups() -> list[int]:
    with _lock:
        return sorted(_groups)


def _commands(pgids: list[int]) -> dict[int, str]:
    with _lock:
        return {g: _groups.get(g, "") for g in pgids}


def kill_all(grace: float = KILL_GRACE_SECONDS) -> int:
    """TERM every recorded command, wait up to `grace` seconds for them to go, KILL what is left.
    Returns how many were signalled. Safe from a signal handler and at exit."""
    commands = _commands(live_groups())
    watchdog.stop(commands.items(), grace)
    for pgid in commands:
        unregister(pgid)
    return len(commands)


def kill_group(pgid: int, reap: Callable[[], object], grace: float = KILL_GRACE_SECONDS) -> None:
    """TERM one command, give it `grace` seconds (calling `reap` so the leader's zombie goes), KILL."""
    watchdog.stop(_commands([pgid]).items(), grace, reap)


def popen(args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen(args, **kwargs)` inside the session's container (the agent is in it, so
    the child is, from its first instruction), killed by the kernel if the thread that started it
    dies (Linux)."""
    enter()
    return subprocess.Popen(args, preexec_fn=pdeathsig(), **kwargs)


def enter() -> None:
    """Choose the session's container (the first time) and have the watchdog told of the session:
    before anything is started that must end with the agent (a command, an MCP server)."""
    containment.current()
    with _lock:
        if _watch is None:
            _tell(f"s {_prefix()}")  # starts the watchdog, which is told of the container


def _container_line(container: containment.Container) -> str:
    cgroup = container.cgroup
    return f"c {cgroup.kind} {cgroup.path}" if cgroup is not None else "c -"


def end(grace: float = KILL_GRACE_SECONDS) -> None:
    """The agent ends: stop its running commands, then everything the session's commands left
    behind (daemons): TERM, up to `grace` seconds, KILL. Safe at exit; nothing if no command ran."""
    kill_all(grace)
    container = containment.chosen()
    if container is None or not _session:
        return
    spare = {_watch.pid} if _watch is not None else set()
    me = os.getpid()
    extra: Callable[[], list[int]] = lambda: []  # noqa: E731
    cgroup = container.cgroup
    if cgroup is not None and not containment.leave():
        # Still inside (the move out was refused): kill its members one by one, never the whole.
        inside = cgroup
        extra = lambda: cgroups.members(inside.path)  # noqa: E731
        cgroup = None
    elif container.kind == "subreaper":
        extra = lambda: containment.descendants(me, spare)  # noqa: E731
    watchdog.finish(_session, cgroup, extra, grace)
    if cgroup is not None:
        cgroups.remove(cgroup, grace)
    process_cap.release(grace)
    if container.kind == "subreaper":
        containment.reap_adopted(spare)


class _Watchdog:
    """The agent's end of the watchdog's pipe."""

    def __init__(self, proc: subprocess.Popen[bytes], fd: int) -> None:
        self._proc = proc  # kept so it is reaped if it ends first; never waited for
        self._fd = fd

    @classmethod
    def start(cls, groups: dict[int, str], announced: set[str]) -> _Watchdog | None:
        """Start a watchdog told of `groups`; None where it cannot start (the commands still run,
        with every other way of stopping them)."""
        read_end, write_end = os.pipe()  # both close-on-exec: no command inherits the write end
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", watchdog.__file__, str(read_end)],
                pass_fds=(read_end,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,  # no terminal's signal reaches it
                preexec_fn=containment.outside(),  # out of the session cgroup: it kills that
            )
        except OSError:
            os.close(write_end)
            return None
        finally:
            os.close(read_end)
        watch = cls(proc, write_end)
        watch.send(f"s {_prefix()}")
        watch.send(_container_line(containment.current()))
        for marker in announced:
            watch.send(f"+ 0 {marker}")
        for pgid, marker in groups.items():
            watch.send(f"+ {pgid} {marker}")
        return watch

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def send(self, line: str) -> bool:
        try:
            os.write(self._fd, f"{line}\n".encode("utf-8", "surrogateescape"))
        except OSError:  # EPIPE: it was killed; the caller starts another
            return False
        return True


@functools.cache
def pdeathsig() -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel KILL the child when the thread that started it ends (Linux),
    else None. The tool's thread waits for its command, so in practice: when the agent dies."""
    prctl = containment.libc_prctl()
    if prctl is None:
        return None
    import ctypes

    args = (ctypes.c_int(_PR_SET_PDEATHSIG), *(ctypes.c_ulong(v) for v in (int(signal.SIGKILL), 0, 0, 0)))

    def set_pdeathsig() -> None:  # runs in the child between fork and exec: nothing but the call
        prctl(*args)

    return set_pdeathsig

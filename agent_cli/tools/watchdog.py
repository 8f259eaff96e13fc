"""The watchdog: a small process that stops the agent's running commands when the agent dies however.

The agent's own handlers (Ctrl-C, SIGTERM, SIGHUP, exit) stop its commands, and the kernel kills a
command's shell when the agent dies (`PR_SET_PDEATHSIG`); but `kill -9` of the agent runs no handler,
and the shell's children live on. So with its first command the agent starts this program
(`python -I -S watchdog.py FD`, stdlib only, in a session of its own so no terminal signal reaches it,
SIGINT and SIGHUP ignored) holding the read end of a pipe whose write end only the agent holds. The
agent writes a line for each command about to start (`+ 0 MARKER`), started (`+ PGID MARKER`) and
ended (`- PGID MARKER`): a command is known by its marker before it exists. When the
pipe reaches EOF, the agent is gone, however it went: the watchdog stops every command still listed
(TERM, a grace, KILL) and exits.

A command is its process group and every process carrying its *marker* in its environment
(`MARKER_VAR=MARKER`, set for the command's shell and inherited by what it starts), which finds the
ones that left the group with `setsid` or a daemon's double fork. A process that clears its whole
environment (`env -i`) escapes the marker; the session cgroup holds it.

The agent also tells it of the whole session (`s PREFIX`: every marker of the session begins so;
`c KIND PATH`: the session cgroup, `tools/containment.py`; `d PID START`: a daemon the agent adopted
as subreaper, which goes to init when the agent dies): at EOF, after the running commands, it
ends everything the session left behind, daemons included (`finish`), and removes the cgroup.

This module is also where the agent finds and signals a command's processes (`stop`), so the two
never disagree about what a command is. It imports nothing but the standard library, `cgroups` and
`containment` (standard library only too; run as a script, it finds the package beside this file).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable

if __name__ == "__main__":  # run as `python -I -S watchdog.py`: the package is the one beside this file
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from agent_cli.tools import cgroups, containment  # (after the line above)

__all__ = ["MARKER_VAR", "finish", "group_alive", "main", "marked", "stop"]

MARKER_VAR = "AGENT_CLI_COMMAND_ID"
GRACE_SECONDS = 1.0


def _pids() -> list[str]:
    try:
        return [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return []


def group_alive(pgid: int) -> bool:
    """Whether any member of the group still runs. Zombies do not count: where init does not
    reap orphans promptly (containers), they would otherwise hold us for the whole grace."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc"):
        return True  # no /proc: trust killpg
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields: state, ppid, pgrp, ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def marked(markers: set[str], prefix: str = "") -> list[int]:
    """Live processes whose environment carries one of `markers` (those outside the group included),
    or, with `prefix`, any marker that begins with it."""
    wanted = {f"{MARKER_VAR}={m}".encode() for m in markers if m}
    begins = f"{MARKER_VAR}={prefix}".encode() if prefix else b""
    if not wanted and not begins:
        return []
    me = os.getpid()
    found = []
    for pid in _pids():
        if int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                variables = set(f.read().split(b"\0"))
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # gone, or another user's
        hit = bool(variables & wanted) or (bool(begins) and any(v.startswith(begins) for v in variables))
        if hit and state not in (b"Z", b"X"):
            found.append(int(pid))
    return found


def _signal_all(groups: list[int], markers: set[str], sig: int) -> None:
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid in marked(markers):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def stop(
    commands: Iterable[tuple[int, str]],
    grace: float = GRACE_SECONDS,
    reap: Callable[[], object] | None = None,
) -> None:
    """TERM every command (`(pgid, marker)`, pgid 0 where it is not known yet), give them up to
    `grace` seconds (calling `reap`, so a shell's zombie goes), then KILL whatever is left."""
    pairs = list(commands)
    groups = [pgid for pgid, _ in pairs if pgid > 0]
    markers = {marker for _, marker in pairs if marker}
    if not groups and not markers:
        return
    _signal_all(groups, markers, signal.SIGTERM)
    end = time.monotonic() + grace
    while time.monotonic() < end:
        if reap is not None:
            reap()
        if not any(group_alive(g) for g in groups) and not marked(markers):
            break
        time.sleep(0.02)
    _signal_all(groups, markers, signal.SIGKILL)  # a member may have ignored TERM


def finish(
    prefix: str,
    cgroup: cgroups.Cgroup | None,
    extra: Callable[[], Iterable[int]] = tuple,
    grace: float = GRACE_SECONDS,
) -> list[int]:
    """End everything the session started that still runs: what its cgroup holds, what carries a
    marker beginning with `prefix`, and `extra()` (the agent's descendants, as subreaper): TERM, up
    to `grace` seconds, then KILL, the cgroup killed whole. The pids found first."""
    me = os.getpid()

    def found() -> set[int]:
        pids = set(marked(set(), prefix)) | set(extra())
        if cgroup is not None:
            pids.update(cgroups.members(cgroup.path))
        pids.discard(me)
        return pids

    first = found()
    for pid in first:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + grace
    while first and time.monotonic() < end and found():
        time.sleep(0.02)
    if cgroup is not None:
        cgroups.kill(cgroup)
    for _ in range(50):  # what a killed process's children were doing as it died (outside a cgroup)
        left = found()
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    return sorted(first)


def _adopted_trees(adopted: dict[int, str]) -> list[int]:
    """The adopted daemons still alive (the same process: its start time unchanged), and every
    process below them."""
    alive = [pid for pid, start in adopted.items() if start and cgroups.start_time(pid) == start]
    return [*alive, *(p for pid in alive for p in containment.descendants(pid))]


def main(argv: list[str]) -> int:
    """Read `+ PGID MARKER` / `- PGID MARKER` (a command), `s PREFIX` and `c KIND PATH` (the session)
    lines from the pipe `argv[1]` until EOF, then stop what is left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    live: dict[str, int] = {}  # marker -> pgid (0: about to start)
    prefix = ""
    cgroup: cgroups.Cgroup | None = None
    adopted: dict[int, str] = {}  # pid -> start time: daemons the agent adopted as subreaper
    with open(int(argv[1]), "rb", buffering=0) as pipe:
        pending = b""
        while chunk := pipe.read(4096):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                op, _, rest = line.decode("utf-8", "surrogateescape").partition(" ")
                first, _, second = rest.partition(" ")
                if op == "+" and first.isdigit() and second:
                    live[second] = int(first)
                elif op == "-":
                    live.pop(second, None)
                elif op == "s":
                    prefix = rest
                elif op == "d" and first.isdigit():
                    adopted[int(first)] = second
                elif op == "c":
                    cgroup = cgroups.Cgroup(second, first) if first in cgroups.KINDS and second else None
    stop((pgid, marker) for marker, pgid in live.items())
    finish(prefix, cgroup, lambda: _adopted_trees(adopted))
    if cgroup is not None:
        cgroups.remove(cgroup, GRACE_SECONDS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

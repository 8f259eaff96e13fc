"""The process groups the tools started, so every way the agent ends can stop them.

A command runs in its own process group (its own session), out of reach of
the terminal's Ctrl-C. `register` records the group while it runs; `kill_all`
sends TERM to every recorded group, gives them a moment, then KILL: the CLI
calls it on Ctrl-C, SIGTERM and SIGHUP, and at interpreter exit. On Linux the
kernel is also asked to KILL the command's shell if the agent dies without a
word (`pdeathsig`), the one ending no handler sees.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["kill_all", "kill_group", "live_groups", "pdeathsig", "register", "unregister"]

KILL_GRACE_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1

_lock = threading.Lock()
_groups: set[int] = set()


def register(pgid: int) -> None:
    with _lock:
        _groups.add(pgid)


def unregister(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


def live_groups() -> list[int]:
    with _lock:
        return sorted(_groups)


def kill_all(grace: float = KILL_GRACE_SECONDS) -> int:
    """TERM every recorded group, wait up to `grace` seconds for them to go, KILL what is left.
    Returns how many groups were signalled. Safe from a signal handler and at exit."""
    groups = live_groups()
    for pgid in groups:
        _signal(pgid, signal.SIGTERM)
    end = time.monotonic() + grace
    while groups and time.monotonic() < end and any(group_alive(g) for g in groups):
        time.sleep(0.02)
    for pgid in groups:
        _signal(pgid, signal.SIGKILL)  # a member may have ignored TERM
        unregister(pgid)
    return len(groups)


def kill_group(pgid: int, reap: Callable[[], object], grace: float = KILL_GRACE_SECONDS) -> None:
    """TERM one group, give it `grace` seconds (calling `reap` so the leader's zombie goes), KILL."""
    _signal(pgid, signal.SIGTERM)
    end = time.monotonic() + grace
    while time.monotonic() < end:
        reap()
        if not group_alive(pgid):
            break
        time.sleep(0.02)
    _signal(pgid, signal.SIGKILL)


def _signal(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether any member of the group still runs. Zombies do not count: where init does not
    reap orphans promptly (containers), they would otherwise hold us for the whole grace."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return True  # no /proc: trust killpg
    for pid in entries:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields: state, ppid, pgrp, ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


@functools.cache
def pdeathsig() -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel KILL the child when the thread that started it ends (Linux),
    else None. The tool's thread waits for its command, so in practice: when the agent dies."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)  # glibc; elsewhere the C library's own name
    except OSError:
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        except OSError:
            return None
    prctl = getattr(libc, "prctl", None)
    if prctl is None:
        return None
    args = (ctypes.c_int(_PR_SET_PDEATHSIG), *(ctypes.c_ulong(v) for v in (int(signal.SIGKILL), 0, 0, 0)))

    def set_pdeathsig() -> None:  # runs in the child between fork and exec: nothing but the call
        prctl(*args)

    return set_pdeathsig

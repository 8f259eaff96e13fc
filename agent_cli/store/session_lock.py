"""One writer per session: `.transcripts/<id>/session.lock`, held with `flock` while a log is open.

The kernel drops the lock when its holder ends, however it ends (`kill -9` too), so a lock is
never stale; the file only keeps the holder's pid for the message a second agent gets.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from agent_cli.core.errors import SessionBusyError
from agent_cli.store.layout import FILE_MODE, LOCK_FILE

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock, as before
    fcntl = None  # type: ignore[assignment]

__all__ = ["hold_session"]


def hold_session(directory: Path, session_id: str) -> int:
    """Take the session's lock; the descriptor to keep open (closing it lets go).

    SessionBusyError when another agent holds it. O_CLOEXEC: a command the agent
    runs must not inherit the lock and keep the session busy after the agent ends.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(directory / LOCK_FILE, flags, FILE_MODE)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                raise SessionBusyError(
                    f"session {session_id} is open in another agent{holder}; one agent writes a "
                    "session at a time: end that one first, or start a new session (without --continue)"
                ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode().strip())
        return f" (pid {pid})"
    return ""

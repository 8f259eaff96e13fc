"""Where a stdio MCP server's stderr goes: a log per project and server, bounded.

    errlog_dir(state, project) -> <state>/mcp-logs/<project name>-<hash of its path>/
    open_errlog(folder, name) -> the file object the server's stderr is given

The server writes into a pipe; a thread copies what comes into `<folder>/NAME.log` (private, in a
private folder). When the log passes `CAP` bytes it becomes `NAME.log.1` (the older one goes) and
a new one starts, so a server's log never takes more than twice `CAP`, however long it runs
or chatty it is, and one project's servers never write into another's. Its text is the server's,
untrusted: it goes to the file only, never to the terminal. A log that cannot be made is /dev/null.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from pathlib import Path
from typing import TextIO

__all__ = ["CAP", "errlog_dir", "open_errlog"]

CAP = 256 * 1024  # bytes in one log before it turns over: the last 256-512 KiB are kept
_CHUNK = 64 * 1024
_NOT_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def errlog_dir(state: Path, project: Path) -> Path:
    """This project's folder of server logs in the state dir: its name for a person, its path's hash
    so that two projects of one name stay apart."""
    raw = os.fsencode(str(project))
    name = _NOT_NAME.sub("_", project.name)[:40] or "root"
    return state / "mcp-logs" / f"{name}-{hashlib.sha256(raw).hexdigest()[:12]}"


class _BoundedLog:
    def __init__(self, path: Path, cap: int) -> None:
        self.path, self.cap = path, cap
        self._fd = -1
        self._size = 0
        self._open()
        if self._size > cap:
            self._turn_over()

    def _open(self) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        self._fd = os.open(self.path, flags, 0o600)
        self._size = os.fstat(self._fd).st_size

    def _turn_over(self) -> None:
        os.close(self._fd)
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        self._open()

    def write(self, data: bytes) -> None:
        data = data[-self.cap :]  # (what a bigger piece has before its last CAP would turn over at once)
        if self._size and self._size + len(data) > self.cap:
            self._turn_over()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        self._size += len(data)

    def close(self) -> None:
        os.close(self._fd)


def _copy(read_fd: int, log: _BoundedLog) -> None:
    try:
        while True:
            data = os.read(read_fd, _CHUNK)
            if not data:
                return
            log.write(data)
    except OSError:  # a full disk: the rest is dropped (the pipe is still read below, so it never blocks)
        with contextlib.suppress(OSError):
            while os.read(read_fd, _CHUNK):
                pass
    finally:
        os.close(read_fd)
        with contextlib.suppress(OSError):
            log.close()


def open_errlog(folder: Path, name: str, *, cap: int = CAP) -> TextIO:
    """The file object a server's stderr is given (closed by the caller when the server stops)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        log = _BoundedLog(folder / f"{name}.log", cap)
    except OSError:
        return open(os.devnull, "w")  # closed with the servers
    read_fd, write_fd = os.pipe()
    threading.Thread(target=_copy, args=(read_fd, log), name=f"mcp-log-{name}", daemon=True).start()
    return os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")

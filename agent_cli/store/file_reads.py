"""Reading the small files agent-cli reads for itself, bounded: the project's and the user's.

A *project file* (`.agent/config.toml`, `AGENTS.md`, `CLAUDE.md`) came with the repository, so
it is read only if it is a regular file whose real path is inside the project: a symlink to
`~/.aws/credentials` or to `/dev/zero`, a FIFO or a device is refused with the reason, and never
opened in a way that could block (the final open is `O_NOFOLLOW | O_NONBLOCK` on the resolved
path, and `fstat` of what was opened decides).

A *user file* (the user config, `--config`) is trusted, and may be a pipe (`--config <(...)`) or
`/dev/null`; it still must not hang start-up or eat memory, so what is read is capped in bytes
and, for anything that is not a regular file, in time.

Either way at most `limit` bytes are returned, and `Read.more` says whether the file had more.
"""

from __future__ import annotations

import os
import select
import stat
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Read", "UnreadableFile", "describe_size", "read_project_file", "read_user_file"]

_CHUNK = 64 * 1024


class UnreadableFile(Exception):
    """Why a file was not read, as a phrase that follows its name ("is a FIFO, not a file")."""


@dataclass(frozen=True, slots=True)
class Read:
    data: bytes  # at most the limit
    more: bool  # the file had more than the limit


def describe_size(limit: int) -> str:
    """`262144` -> `256 KiB`, for the messages that state a cap."""
    if limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit:,} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def read_project_file(root: Path, path: Path, *, limit: int) -> Read:
    """The first `limit` bytes of `path`, a file the repository shipped; UnreadableFile if it is a
    link leading outside `root`, not a regular file, or cannot be read."""
    try:
        real_root = root.resolve(strict=True)
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
        raise UnreadableFile(f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    if not real.is_relative_to(real_root):
        raise UnreadableFile(f"leads outside the project (to {real}); only files inside it are read")
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise UnreadableFile(f"cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableFile(f"is {_kind(mode)}, not a regular file; only regular files are read")
        return _read_fd(fd, limit, deadline=None)
    finally:
        os.close(fd)


def read_user_file(path: Path, *, limit: int, timeout: float = 5.0) -> Read:
    """The first `limit` bytes of the user's own file `path`; a pipe or a device is read too, but
    for at most `timeout` seconds (a FIFO nobody writes to must not hang start-up)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except IsADirectoryError:
        raise UnreadableFile("is a directory, not a config file") from None
    except OSError as exc:
        raise UnreadableFile(f"cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UnreadableFile("is a directory, not a config file")
        if stat.S_ISREG(mode):
            return _read_fd(fd, limit, deadline=None)
        return _read_fd(fd, limit, deadline=time.monotonic() + timeout, waited=timeout)
    finally:
        os.close(fd)


def _read_fd(fd: int, limit: int, *, deadline: float | None, waited: float = 0.0) -> Read:
    """Read until end of file or `limit + 1` bytes; with a deadline, wait for data only that long."""
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
        except BlockingIOError:  # a pipe whose writer has not written yet: wait, but not for ever
            left = 0.0 if deadline is None else deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                reason = f"did not reach its end within {waited:g} s (a FIFO no one writes to?)"
                raise UnreadableFile(reason) from None
            continue
        except OSError as exc:
            raise UnreadableFile(f"cannot be read: {exc.strerror or exc}") from None
        if not chunk:  # the end (a FIFO that no one has opened for writing reads as empty)
            break
        parts.append(chunk)
        size += len(chunk)
    data = b"".join(parts)
    return Read(data[:limit], len(data) > limit)

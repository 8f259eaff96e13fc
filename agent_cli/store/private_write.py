"""Writing a file only this user may read, whole or not at all.

    write_private(path, data)

The bytes go to a temporary file beside `path` (created 0600, never through a link), are fsynced,
and the temporary file is renamed over `path`; on any failure (a full disk above all) it is
removed, so no half-written file is ever taken for the real one. The folder must exist.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = ["write_private"]

PRIVATE_MODE = 0o600


def write_private(path: Path, data: bytes) -> None:
    temp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, PRIVATE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)

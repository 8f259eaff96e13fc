"""Replacing a file's content so that a failure leaves the old content whole.

    replace_file(path, data, shown)

The new content goes to a temporary file in the same folder (so the rename stays on one
filesystem), is fsynced, and is renamed over `path`; the folder is then fsynced so the rename
survives a crash. Until the rename the original is untouched, and on any failure (a full disk
above all) the temporary file is removed and the ToolError says, in one line, what failed and
that the file is unchanged.

What the new file keeps of the old one: its mode (set on the open file, so the umask does not
change it), and its owner and group where the process may set them (root, or a group it is in);
otherwise the file becomes the writer's, as with `sed -i`. A new file gets 0666 less the umask,
as `open()` gives. `path` is the sandbox's resolved path: a symlink in the project is written
through to its target, and a hard link is replaced by a file of its own (the other name keeps
the old content, which is what stops a link made by bash from writing outside the project).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from agent_cli.tools.base import ToolError

__all__ = ["replace_file"]

_NEW_FILE_MODE = 0o666  # less the umask, as open() creates files
_FAILURES = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


def replace_file(path: Path, data: bytes, shown: str) -> None:
    """Make `path` hold exactly `data`, all or nothing (see the module docstring)."""
    try:
        old = os.stat(path)
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise ToolError(_failed(exc, shown, None, len(data))) from exc
    if old is not None and not os.access(path, os.W_OK):
        # A rename would replace a read-only file the user could not write in place: refuse, as before.
        raise ToolError(f"permission denied: {shown} is read-only for this user; {shown} is unchanged")
    temp: Path | None = None
    try:
        temp, fd = _create_temp(path, old)
        try:
            if old is not None:
                _keep_owner_and_mode(fd, old)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
        temp = None
        _fsync_dir(path.parent)
    except OSError as exc:
        raise ToolError(_failed(exc, shown, old, len(data))) from exc
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _create_temp(path: Path, old: os.stat_result | None) -> tuple[Path, int]:
    # Private until its mode is set: the old file's mode may be stricter than the umask's.
    mode = 0o600 if old is not None else _NEW_FILE_MODE
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(8):
        temp = path.with_name(f".{path.name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            return temp, os.open(temp, flags, mode)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path.parent))


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        for uid in (old.st_uid, -1):  # the owner needs privilege; the group, membership
            try:
                os.fchown(fd, uid, old.st_gid)
                break
            except PermissionError:
                continue
    os.fchmod(fd, stat.S_IMODE(old.st_mode))  # after chown, which clears set-id bits


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(folder: Path) -> None:
    # The rename is done; a folder that cannot be fsynced (some network filesystems) is no failure.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _failed(exc: OSError, shown: str, old: os.stat_result | None, size: int) -> str:
    what = _FAILURES.get(exc.errno or 0) or (exc.strerror or type(exc).__name__).lower()
    why = ""
    if exc.errno in (errno.EACCES, errno.EPERM):
        why = " (its folder must be writable: the file is replaced through a temporary file next to it)"
    kept = f"{shown} is unchanged" if old is not None else f"{shown} was not created"
    return f"{what}: could not write {size} bytes to {shown}{why}; {kept}"

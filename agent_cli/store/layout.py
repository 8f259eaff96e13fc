"""Where a project's sessions live on disk, and how their files are protected.

    <project>/.transcripts/                 0700
    <project>/.transcripts/<session id>/    0700, one per session
        session.jsonl                       0600, the session log (session_log.py)
        session.lock                        0600, held by the one agent writing the log; its pid
        span-NNN-<label>.jsonl, output-...  0600, the archive (archive.py)
        tasks/<task id>/                    0700, a sub-agent's own log and archive, the same layout

    <project>/.transcripts/.gitignore       `*`: sessions are not committed by accident (as venv does)

A session id is one plain path component: `20261130-142501-3fa2c1`.

`.transcripts/` and the session folders in it arrive with a clone too: a folder that is a
symbolic link (`.transcripts -> /somewhere/outside`) or that another user owns is refused with
one line (a ConfigError), before anything is changed or written there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path

from agent_cli.core.errors import ConfigError, DiskFullError, disk_full_reason

__all__ = [
    "ARCHIVE_NAME_RE",
    "DIR_MODE",
    "FILE_MODE",
    "ID_RE",
    "LOCK_FILE",
    "SESSION_FILE",
    "TASKS_DIR",
    "TRANSCRIPTS_DIR",
    "check_private_dir",
    "ensure_private_dir",
    "ensure_transcripts_dir",
    "new_session_id",
    "no_session_on_a_full_disk",
    "session_dir",
    "transcripts_dir",
]

TRANSCRIPTS_DIR = ".transcripts"
SESSION_FILE = "session.jsonl"
LOCK_FILE = "session.lock"
TASKS_DIR = "tasks"  # a session's sub-agents (the task tool): one folder each, under the session's
DIR_MODE = 0o700
FILE_MODE = 0o600
# The archive's files, numbered in the order written: span-NNN-<label>.jsonl, output-NNN-<id>.txt.
ARCHIVE_NAME_RE = re.compile(r"^(?:span|output)-(\d+)-")
# A session id is one plain path component (no separators, no leading dot).
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def transcripts_dir(root: Path | str) -> Path:
    """`<root>/.transcripts`."""
    return Path(root) / TRANSCRIPTS_DIR


def session_dir(root: Path | str, session_id: str) -> Path:
    """`<root>/.transcripts/<session_id>`; ConfigError for an id that is not a plain name."""
    if not ID_RE.fullmatch(session_id):
        raise ConfigError(f"invalid session id {session_id!r} (ids look like 20261130-142501-3fa2c1)")
    return transcripts_dir(root) / session_id


def new_session_id(now: datetime) -> str:
    """A sortable, unique-enough id: UTC time to the second plus 6 random hex digits."""
    return f"{now.astimezone(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def check_private_dir(path: Path, *, owner: bool = True) -> bool:
    """Whether `path` exists as a folder agent-cli may use: ConfigError if it is a symbolic link
    or (`owner`) another user's, so nothing is written through it; NotADirectoryError if it is
    something else. Reading a
    listing of another user's sessions (`agent transcripts` after `sudo agent`) passes
    `owner=False`: it writes nothing there."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        try:
            target = f" (to {os.readlink(path)})"
        except OSError:
            target = ""
        raise ConfigError(
            f"{path} is a symbolic link{target}; agent-cli keeps sessions only in a real folder "
            "of the project: remove the link"
        )
    if not stat.S_ISDIR(info.st_mode):  # a file in its place: cannot be written, as before (exit 1)
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    if owner and hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise ConfigError(
            f"{path} belongs to another user (uid {info.st_uid}); agent-cli writes sessions only "
            "in a folder of yours"
        )
    return True


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and its parents) if needed and make it 0700, whatever the umask;
    ConfigError, with nothing changed, if it is a symbolic link or not the user's (see above)."""
    if not check_private_dir(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # made meanwhile: checked below like any other
            path.mkdir(mode=DIR_MODE)
        check_private_dir(path)
    # Opened without following links, then changed through the descriptor: a link swapped in
    # after the check is not followed either.
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    try:
        if (os.fstat(fd).st_mode & 0o777) != DIR_MODE:
            os.fchmod(fd, DIR_MODE)
    finally:
        os.close(fd)


def ensure_transcripts_dir(root: Path | str) -> Path:
    """`<root>/.transcripts`, made private, with a `.gitignore` of `*` when this call creates it."""
    base = transcripts_dir(root)
    existed = check_private_dir(base)
    ensure_private_dir(base)
    if not existed:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(base / ".gitignore", flags, FILE_MODE)  # private like everything here
        except FileExistsError:
            return base  # another agent made the folder at the same moment and wrote it
        try:
            os.write(fd, b"# Written by agent-cli: its session logs stay out of git.\n*\n")
        except OSError as exc:
            os.close(fd)
            with contextlib.suppress(OSError):  # not an empty .gitignore that ignores nothing
                os.unlink(base / ".gitignore")
            full = disk_full_reason(exc)
            if full is None:
                raise
            raise no_session_on_a_full_disk(full, base) from exc
        os.close(fd)
    return base


def no_session_on_a_full_disk(full: str, base: Path) -> DiskFullError:
    """The line for a session that cannot start because `full` ("the disk is full")."""
    return DiskFullError(f"{full}: no session log can be started in {base}; free space and run agent again")

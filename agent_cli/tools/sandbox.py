"""Path confinement: what a file tool may touch, decided in one place.

- A path argument becomes an absolute path inside the project root. The root check runs on the
  resolved path, so neither `../` nor a symlink pointing out of the project gets past it.
  `tools.allow_outside_root` lifts that check (the user's choice, never a project's config).
- The session store (`.transcripts/`) is off-limits to every file tool, for reading too: a
  rewritten log would put words in the user's mouth on `--resume`, and the model reads the
  archive through `recall`. Any path component named `.transcripts` (in any letter case) is
  refused after resolution, so a symlink or `..` does not get in either.
- A file tool reads and replaces regular files only: `open_regular` never blocks on a FIFO
  (it opens without waiting, then checks what it opened), and `writable_path` refuses an
  existing FIFO, socket, device or directory before anything is written.

Hard links are not refused: writes replace a file through a rename (`replace.py`), which swaps
the link for a new file and leaves the other name's content alone; and a read through a link
shows nothing bash could not show.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from agent_cli.core.text import clean
from agent_cli.store.layout import TRANSCRIPTS_DIR
from agent_cli.tools.base import ToolContext, ToolError

__all__ = ["NotRegularFile", "display_path", "file_kind", "open_regular", "resolve_path", "writable_path"]


class NotRegularFile(ToolError):
    """The path names a FIFO, socket, device or directory; `kind` says which ('a socket')."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def resolve_path(ctx: ToolContext, raw: str, *, name: str = "path") -> Path:
    """An absolute, symlink-resolved path for `raw`, refused if it leaves the project root or
    enters the session store.

    Relative paths are taken against `ctx.root`; `~` is expanded. The target need
    not exist (write_file creates it), but every existing symlink on the way is
    followed before the checks.
    """
    if "\0" in raw:
        raise ToolError(f"argument {name!r} contains a NUL character")
    root = ctx.root.resolve()
    candidate = Path(raw.strip()).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise ToolError(f"cannot resolve {raw!r}: {exc}") from exc
    via = "" if resolved == candidate else f" (it resolves to {clean(str(resolved))})"
    inside = resolved.is_relative_to(root)
    if not ctx.allow_outside_root and not inside:
        raise ToolError(
            f"path is outside the project root {root}: {raw!r}{via}. "
            "Use a path inside the project, or ask the user to enable tools.allow_outside_root."
        )
    if _in_session_store(resolved.relative_to(root) if inside else resolved, root):
        raise ToolError(
            f"{raw!r} is in the session store ({TRANSCRIPTS_DIR}/){via}, which the file tools do "
            "not read or change. Use recall to search earlier parts of the conversation."
        )
    return resolved


def _in_session_store(path: Path, root: Path) -> bool:
    """A component named like the store; or, on a case-insensitive or bind-mounted filesystem,
    a first component that is the store's own directory under another name."""
    if any(part.casefold() == TRANSCRIPTS_DIR for part in path.parts):
        return True
    if path.is_absolute() or not path.parts:
        return False
    try:
        return os.path.samestat(os.stat(root / path.parts[0]), os.stat(root / TRANSCRIPTS_DIR))
    except OSError:  # either one missing: not the same directory
        return False


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message: 'a FIFO (named pipe)' ..."""
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ]
    return next((said for test, said in kinds if test(mode)), "not a regular file")


def writable_path(ctx: ToolContext, raw: str, *, name: str = "path") -> Path:
    """`resolve_path`, and the target is a regular file or does not exist yet. A FIFO, socket or
    device is refused without being opened (opening a FIFO to write waits for a reader)."""
    path = resolve_path(ctx, raw, name=name)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise ToolError(f"cannot write {display_path(ctx, path)}: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        shown = display_path(ctx, path)
        hint = "; give a file path" if stat.S_ISDIR(mode) else "; the file tools write regular files only"
        raise ToolError(f"{shown} is {file_kind(mode)}{hint}")
    return path


def open_regular(path: Path, shown: str) -> BinaryIO:
    """`path` opened for reading if it is a regular file, else a ToolError saying what it is.

    Opened with O_NONBLOCK, so a FIFO does not wait for a writer, and checked with fstat on the
    open file, so nothing can be swapped in between the check and the read."""
    try:
        # O_NOFOLLOW: a link swapped in after the path was resolved is not followed out of the project.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode)
            raise NotRegularFile(f"{shown} is {kind}; the file tools read regular files only", kind)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def display_path(ctx: ToolContext, path: Path) -> str:
    """`path` relative to the root when it is inside it (what the model should type back), else absolute.
    A name that is not UTF-8 shows its undecodable bytes as U+FFFD."""
    root = ctx.root.resolve()
    if path.is_relative_to(root):
        rel = path.relative_to(root).as_posix()
        return clean(rel) or "."
    return clean(str(path))

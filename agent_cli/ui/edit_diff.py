"""The diff an edit would make, for the approval question and the line after the edit.

    proposed_diff(root, name, args)   the unified diff `edit_file` or `write_file` would make to the
                                       file as it is now (a new file: its first lines and its size);
                                       None for another tool, or where the call would fail anyway
    diff_text(diff, limit, dim=...)    the diff as rich Text: + green, - red, @@ cyan, cut to `limit`
                                       lines with a count of the rest

Read-only and display-only: the tool itself decides what is written (its own checks and errors
stand). The file is read only inside `root`, only when it is a regular file of reasonable size.
Every line is shown `visible`: a file's control characters never reach the terminal.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text

from agent_cli.core.events import ToolCallEvent, ToolResultEvent
from agent_cli.core.text import visible
from agent_cli.tools.registry import EDIT_FILE, WRITE_FILE

__all__ = ["EditDiff", "EditDiffs", "diff_text", "proposed_diff"]

MAX_BYTES = 2_000_000  # a larger file is not diffed for the screen
NEW_FILE_LINES = 20  # of a new file, the first lines shown
_STYLES = {"+": "green", "-": "red", "@": "cyan"}


@dataclass(frozen=True, slots=True)
class EditDiff:
    path: str
    lines: tuple[str, ...]  # the diff's lines, or a new file's first lines as + lines
    summary: str  # "+3 -1 lines", "new file: 12 lines, 340 bytes"


def proposed_diff(root: Path, name: str, args: Mapping[str, Any]) -> EditDiff | None:
    raw = args.get("path")
    if name not in (EDIT_FILE, WRITE_FILE) or not isinstance(raw, str) or not raw:
        return None
    path = _inside(root, raw)
    if path is None:
        return None
    old = _read(path)
    if name == WRITE_FILE:
        new = args.get("content")
        if not isinstance(new, str):
            return None
        if old is None:
            return _new_file(raw, new)
    else:
        before, after = args.get("old_string"), args.get("new_string")
        if old is None or not isinstance(before, str) or not isinstance(after, str) or not before:
            return None
        count = old.count(before)
        if count == 0 or (count > 1 and args.get("replace_all") is not True):
            return None  # the tool refuses it: nothing would change
        new = old.replace(before, after)
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=f"a/{raw}", tofile=f"b/{raw}", lineterm="", n=3
        )
    )
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return EditDiff(raw, tuple(lines), f"+{added} -{removed} lines")


def diff_text(diff: EditDiff, limit: int | None, *, dim: bool = False, fancy: bool = True) -> Text:
    """The diff, `limit` lines at most (None: all of it), with a note of what was left out."""
    text = Text()
    shown = diff.lines if limit is None else diff.lines[:limit]
    for line in shown:
        style = "bold" if line.startswith(("+++", "---")) else _STYLES.get(line[:1], "")
        if dim:
            style = f"dim {style}".strip()
        text.append("  " + visible(line).replace("\n", "\\n") + "\n", style=style if fancy else "")
    left = len(diff.lines) - len(shown)
    note = f"  {diff.summary}" + (f" · {left} more diff lines: v shows all" if left > 0 else "")
    text.append(note, style="dim" if fancy else "")
    return text


def _inside(root: Path, raw: str) -> Path | None:
    try:
        base = root.resolve()
        path = (base / raw).resolve()
    except (OSError, RuntimeError):
        return None
    return path if path.is_relative_to(base) else None


def _read(path: Path) -> str | None:
    """The file's text, or None when it does not exist, is no regular file, is too big or binary."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _new_file(raw: str, content: str) -> EditDiff:
    lines = content.splitlines()
    first = tuple(f"+{line}" for line in lines[:NEW_FILE_LINES])
    more = len(lines) - len(first)
    size = len(content.encode("utf-8"))
    tail = (f"+… {more} more lines",) if more > 0 else ()
    return EditDiff(
        raw, (f"+++ b/{raw} (new file)", *first, *tail), f"new file: {len(lines)} lines, {size:,} bytes"
    )


class EditDiffs:
    """The diffs of a turn's edit calls, each made when its call arrives (before it is asked about or
    runs): the question shows the last call's, and the line after an edit that went through its own."""

    def __init__(self, root: Callable[[], Path]) -> None:
        self._root = root
        self._by_call: dict[str, EditDiff] = {}
        self.last: EditDiff | None = None  # the newest call's diff: the one an approval asks about

    def called(self, event: ToolCallEvent) -> None:
        self.last = proposed_diff(self._root(), event.name, event.input)
        if self.last is not None:
            self._by_call[event.id] = self.last

    def done(self, event: ToolResultEvent) -> EditDiff | None:
        """The diff of the call that ended, when it went through."""
        diff = self._by_call.pop(event.id, None)
        return None if event.is_error else diff

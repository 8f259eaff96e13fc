"""What a running tool has printed so far, for the screen: its last bytes, its size, how it ended.

A *tap* (`LiveOutput`) is what a tool writes its raw output to as it arrives (the bash tool's
reader writes every chunk to it beside its `HeadTail`); the tool runner, in another thread, reads
a `snapshot()` a few times a second. Only the last `TAIL_BYTES` are kept, so a command printing
gigabytes costs a few KiB here too. `end(status)` says in a few words how the tool ended
(`exit 0`, `timed out after 5s`), for the one line shown after it.

`last_lines(text, n)` is what a terminal would show of that text's end: its last `n` lines, each
as its last carriage return left it (a progress bar redraws its line with `\\r`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["TAIL_BYTES", "LiveOutput", "LiveSnapshot", "last_lines"]

TAIL_BYTES = 4096


@dataclass(frozen=True, slots=True)
class LiveSnapshot:
    """The tap at one moment: the end of the output as text (it may begin mid-line), its size in
    bytes, and how the tool ended (None while it runs)."""

    text: str
    size: int
    status: str | None = None


class LiveOutput:
    """A thread-safe tap: the tool writes, the runner reads snapshots."""

    def __init__(self, keep: int = TAIL_BYTES) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._tail = bytearray()
        self._size = 0
        self._status: str | None = None

    def write(self, data: bytes) -> None:
        with self._lock:
            self._size += len(data)
            self._tail += data[-self._keep :]
            # Trim only when twice the room, so appends stay amortised O(1).
            if len(self._tail) > 2 * self._keep:
                del self._tail[: len(self._tail) - self._keep]

    def end(self, status: str) -> None:
        """The tool is done; `status` says how, in a few words."""
        with self._lock:
            self._status = status

    @property
    def used(self) -> bool:
        """The tool wrote to the tap or said how it ended (a tool that does neither has no tap view)."""
        with self._lock:
            return self._size > 0 or self._status is not None

    def snapshot(self) -> LiveSnapshot:
        with self._lock:
            tail, size, status = bytes(self._tail[-self._keep :]), self._size, self._status
        return LiveSnapshot(tail.decode("utf-8", errors="replace"), size, status)


def last_lines(text: str, n: int) -> tuple[str, ...]:
    """The last `n` lines of `text` as a terminal would leave them (the part after each line's
    last carriage return); a final newline ends a line, it does not start an empty one."""
    if n <= 0 or not text:
        return ()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    shown = []
    for line in lines[-n:]:
        line = line.rstrip("\r")  # a CR before the newline (Windows line ends) redraws nothing
        shown.append(line.rsplit("\r", 1)[-1])
    return tuple(shown)

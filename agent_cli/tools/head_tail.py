"""HeadTail: a command's output capped to its first and last bytes, never cutting a secret in two.

A command may print gigabytes; the bash tool and the background commands keep only the first
`HEAD_BYTES` and the last `TAIL_BYTES` of it and count the rest, so its output costs 32 KiB
whatever it prints. The text handed on has a marker where bytes were dropped, telling the model
how to see them. With `spans` (where the redactor finds secrets) neither cut falls inside a
secret: half a key matches no pattern, so it would reach the model and the log unredacted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["HEAD_BYTES", "OVERLAP", "TAIL_BYTES", "HeadTail", "Spans"]

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 16 * 1024
# Bytes kept beyond each cut, so a secret at a cut is seen whole: longer than any key or token.
OVERLAP = 1024
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")

# Where a text holds secrets: (start, end) character spans (`store.redact.Redactor.spans`).
Spans = Callable[[str], list[tuple[int, int]]]


class HeadTail:
    """A byte sink that keeps the first `head` and last `tail` bytes and counts the rest.

    It also keeps `OVERLAP` bytes beyond each cut, so that `text(spans)` can move a cut out of a
    secret (found by `spans`) instead of cutting one in two: half a key matches no pattern, so it
    would reach the model and the log unredacted.
    """

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self._head_cap = head
        self._tail_cap = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_cap + OVERLAP - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            # Trim only when twice the cap, so appends stay amortised O(1).
            if len(self._tail) > 2 * (self._tail_cap + OVERLAP):
                del self._tail[: len(self._tail) - self._tail_cap - OVERLAP]

    def _end(self, n: int) -> bytes:
        """The stream's last `n` bytes (some may still sit in the head buffer)."""
        if n <= 0:
            return b""
        whole = len(self._head) + len(self._tail) == self.total  # nothing dropped in between
        source = bytes(self._head) + bytes(self._tail) if whole else bytes(self._tail)
        return source[-n:]

    @property
    def omitted(self) -> int:
        return max(0, self.total - self._head_cap - self._tail_cap)

    def text(self, spans: Spans | None = None) -> str:
        """The kept output as text; a marker stands where bytes were dropped. With `spans`, neither
        cut falls inside a secret: the secret is kept whole (redacted later) or left out whole."""
        if not self.omitted:  # everything is still here
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", errors="replace")
        head_bytes = bytes(self._head[: self._head_cap])
        tail_bytes = self._end(self._tail_cap)
        head = head_bytes.decode("utf-8", errors="replace")
        tail = tail_bytes.decode("utf-8", errors="replace")
        dropped = self.omitted
        if spans is not None:
            # The overlaps stop short of each other: no byte is shown twice.
            wide_head = bytes(self._head[: min(self._head_cap + OVERLAP, self.total - self._tail_cap)])
            wide_head_text = wide_head.decode("utf-8", errors="replace")
            cut = _head_cut(wide_head_text, len(head), spans(wide_head_text))
            wide_tail_text = self._end(min(self._tail_cap + OVERLAP, self.total - self._head_cap)).decode(
                "utf-8", errors="replace"
            )
            start = len(wide_tail_text) - len(tail)
            begin = _tail_cut(wide_tail_text, start, spans(wide_tail_text))
            if cut != len(head) or begin != start:  # a cut moved out of a secret
                head, tail = wide_head_text[:cut], wide_tail_text[begin:]
                dropped = max(self.total - _size(head) - _size(tail), 0)
        marker = (
            f"\n[... {dropped} bytes of output omitted ({self.total} in all); to see them, "
            "rerun with the output redirected to a file and read it with read_file or grep ...]\n"
        )
        return head + marker + tail


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _head_cut(text: str, cut: int, secrets: list[tuple[int, int]]) -> int:
    """Where the head ends: `cut`, moved past a secret it falls in (or before one that runs on)."""
    for start, end in secrets:
        if start < cut < end:
            return end if end < len(text) else start
    return cut


def _tail_cut(text: str, start: int, secrets: list[tuple[int, int]]) -> int:
    """Where the tail begins: `start`, moved before a secret it falls in (or after one cut short)."""
    for begin, end in secrets:
        if begin < start < end:
            return begin if begin > 0 else end
    # A private key whose BEGIN line fell in the omitted part: its END line starts nothing the
    # patterns know, so everything up to that line goes.
    block_end = _PEM_END.search(text, start)
    if block_end is not None and _PEM_BEGIN.search(text, start, block_end.start()) is None:
        return block_end.end()
    return start

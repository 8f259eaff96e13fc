"""read_file's window: the lines a call asks for, numbered like `cat -n`, and the note after a cut.

The file is streamed: a huge file costs the window it shows, and a single enormous line is read
with a bounded `readline` and cut to MAX_LINE_CHARS. The note after a cut names how many lines the
file has; counting them reads the rest of the file, so the count stops at MAX_COUNT_BYTES and at the
file's size when the count begins (a file a writer keeps growing cannot keep it going): past that
the note says the file has more than the lines counted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO

from agent_cli.tools.base import ToolError

__all__ = [
    "MAX_COUNT_BYTES",
    "MAX_LINE_CHARS",
    "MAX_OUTPUT_BYTES",
    "count_lines",
    "number_line",
    "read_window",
]

MAX_OUTPUT_BYTES = 64 * 1024
MAX_LINE_CHARS = 2000  # a minified line must not eat the whole window
MAX_COUNT_BYTES = 16 * 1024 * 1024  # of the rest of a file, read to count its lines


def number_line(number: int, text: str) -> str:
    """One line as `cat -n` prints it: the number right-aligned in six columns, a tab, the text."""
    return f"{number:6d}\t{text}"


def _iter_lines(f: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """(line bytes without the newline, cut to a bounded length; full length; byte offset).

    Reads with a bounded readline so a single enormous line never sits in memory.
    """
    cap = MAX_LINE_CHARS * 4 + 4  # enough bytes for MAX_LINE_CHARS characters of UTF-8
    offset = 0
    while True:
        start = offset
        piece = f.readline(cap)
        if not piece:
            return
        offset += len(piece)
        kept = piece
        while not piece.endswith(b"\n"):
            piece = f.readline(1 << 16)
            if not piece:
                break
            offset += len(piece)
        length = offset - start
        kept = kept.rstrip(b"\n")
        if kept.endswith(b"\r"):
            kept = kept[:-1]
        yield kept, length, start


def read_window(f: BinaryIO, shown: str, offset: int, limit: int) -> str:
    """Lines `offset` to `offset + limit - 1` of `f`, numbered, within MAX_OUTPUT_BYTES; a cut ends with
    a note naming the offset to read on from. ToolError for an offset past the end or bytes not UTF-8."""
    out: list[str] = []
    size = 0
    number = 0
    last_shown = 0
    stopped_early = False
    for kept, length, start in _iter_lines(f):
        number += 1
        if number < offset:
            continue
        if number >= offset + limit:
            stopped_early = True
            break
        text = _decode_line(kept, length, start, number, shown)
        line = number_line(number, text)
        cost = len(line.encode("utf-8")) + 1
        if out and size + cost > MAX_OUTPUT_BYTES:
            stopped_early = True
            break
        out.append(line)
        size += cost
        last_shown = number
    # When stopped early, the line that stopped us is not shown: count it and the rest undecoded,
    # up to a bound (a huge or growing file must not be read to its end for a number).
    more = False
    total = number
    if stopped_early:
        rest, more = count_lines(f, _count_budget(f))
        total += rest
    if not out:
        raise ToolError(f"offset {offset} is past the end of {shown}, which has {total} lines")
    if last_shown < total or more:
        of = f"more than {total:,}" if more else str(total)
        read_on = f"call read_file with offset={last_shown + 1} to read on"
        out.append(f"[lines {offset}-{last_shown} of {of} shown; {read_on}]")
    return "\n".join(out)


def _count_budget(f: BinaryIO) -> int:
    """How far past the current position the count may read: to the file's size now, and at most
    MAX_COUNT_BYTES."""
    try:
        left = os.fstat(f.fileno()).st_size - f.tell()
    except (OSError, ValueError):  # not a real file (a test's buffer): the cap alone
        left = MAX_COUNT_BYTES
    return max(0, min(left, MAX_COUNT_BYTES))


def _decode_line(kept: bytes, length: int, start: int, number: int, shown: str) -> str:
    cut = len(kept) < length - 2  # more than the newline was dropped
    try:
        text = kept.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut line may end inside a character; only an error before the end is real.
        if not (cut and exc.start >= len(kept) - 3):
            raise ToolError(
                f"{shown} is not valid UTF-8 (byte offset {start + exc.start}, line {number}); "
                "read_file shows UTF-8 text only. Use bash (e.g. `iconv -f latin1 -t utf-8` "
                "or `xxd`) to inspect it."
            ) from exc
        text = kept[: exc.start].decode("utf-8")
    if len(text) > MAX_LINE_CHARS or cut:
        text = text[:MAX_LINE_CHARS]
        text += f" [... line cut at {MAX_LINE_CHARS} characters of {length} bytes; use bash to see it all]"
    return text


def count_lines(f: BinaryIO, budget: int | None = None) -> tuple[int, bool]:
    """The lines from here to the end, reading at most `budget` bytes (None: to the end); and
    whether the file goes on past what was read."""
    count = 0
    last = b"\n"
    left = budget
    while left is None or left > 0:
        chunk = f.read(1 << 20 if left is None else min(1 << 20, left))
        if not chunk:
            return count + (0 if last == b"\n" else 1), False
        count += chunk.count(b"\n")
        last = chunk[-1:]
        if left is not None:
            left -= len(chunk)
    more = bool(f.read(1))
    if not more:
        return count + (0 if last == b"\n" else 1), False
    return count, True

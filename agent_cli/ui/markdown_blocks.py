"""Split streaming Markdown into finished blocks and an unfinished tail (pure, no rich).

The REPL prints each finished block once and for good, and redraws only the
tail, so a long answer never re-renders what is already on the screen. A
block is finished when

- a blank line follows it outside a code fence and the next line has started
  and is not indented (an indented line may continue a list item or an
  indented code block, which a blank line does not end), or
- it ends with the closing line of a code fence (``` or ~~~, at least as long
  as the opening one).

Only whole lines are ever committed; a partial last line stays in the tail.
Feeding the same text in any chunking yields the same blocks.
"""

from __future__ import annotations

import re

__all__ = ["MarkdownStream", "split_blocks"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def split_blocks(text: str) -> tuple[list[str], str]:
    """(finished blocks, tail) for `text`. Blocks carry no leading or trailing blank lines."""
    blocks: list[str] = []
    current: list[str] = []  # lines of the open block, blank separators excluded until continued
    blanks = 0  # blank lines seen after `current`, outside a fence
    start = 0  # offset in `text` where the open block (or the tail) begins
    fence: str | None = None  # the opening run of ` or ~ while inside a code fence
    lines = text.split("\n")
    partial = lines.pop()  # text after the last newline: never committed
    pos = 0
    for line in lines:
        line_start, pos = pos, pos + len(line) + 1
        if fence is not None:
            current.append(line)
            if _closes(line, fence):
                fence = None
                blocks.append("\n".join(current))
                current, start = [], pos
            continue
        if not line.strip():
            if current:
                blanks += 1
            else:
                start = pos
            continue
        if blanks:
            if line[:1].isspace():
                current.extend([""] * blanks)  # a continuation: the blank lines belong to the block
            else:
                blocks.append("\n".join(current))
                current, start = [], line_start
            blanks = 0
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in line[match.end() :]):
            fence = match.group(1)  # (a backtick fence's info string has no backtick: "```x```" is inline)
        current.append(line)
    if blanks and partial[:1] not in ("", " ", "\t"):
        # The next block has visibly begun: the open one is finished.
        blocks.append("\n".join(current))
        start = len(text) - len(partial)
    return blocks, text[start:]


def _closes(line: str, fence: str) -> bool:
    match = _FENCE.match(line)
    if match is None:
        return False
    run = match.group(1)
    return run[0] == fence[0] and len(run) >= len(fence) and not line.strip()[len(run) :].strip()


class MarkdownStream:
    """Incremental `split_blocks`: `feed(delta)` returns the blocks that just finished."""

    def __init__(self) -> None:
        self._pending = ""

    @property
    def tail(self) -> str:
        """What has not been returned as a finished block yet."""
        return self._pending

    def feed(self, delta: str) -> list[str]:
        line_began = self._pending.endswith("\n")
        self._pending += delta
        if "\n" not in delta and not line_began:
            return []  # a block finishes only at a line end or as the next line begins
        blocks, self._pending = split_blocks(self._pending)
        return blocks

    def finish(self) -> str:
        """The stream ended: whatever is left is the last block."""
        rest, self._pending = self._pending, ""
        return rest.strip("\n")

"""The glob pattern language: a glob over '/'-separated relative paths becomes a regex.

    `*`, `?`   within one path segment
    `[...]`    a character class (`[!...]` negated; never the separator)
    `**`       as a whole segment: zero or more directories

The regex is built so it does not backtrack on hostile patterns (see `glob_to_regex`); the glob
tool still bounds each match in time.
"""

from __future__ import annotations

from functools import lru_cache

import regex

__all__ = ["glob_to_regex"]


@lru_cache(maxsize=64)
def glob_to_regex(pattern: str) -> regex.Pattern[str]:
    """Compile a glob over '/'-separated relative paths.

    `*` and `?` stay within one path segment, `[...]` is a character class,
    `**` as a whole segment matches zero or more directories. Matching is
    case-sensitive, like the filesystem.

    The regex is built not to backtrack: repeated `**` segments and runs of `*`
    collapse to one (`**/**/x` is `**/x`), and every `*` but a segment's last
    finds the next literal piece at its first occurrence, in an atomic group
    (what CPython's fnmatch does): `*a*a*a*b` then costs one pass, not one per
    way of placing the `a`s. The walk still bounds each match in time.
    """
    segments: list[str] = []
    for segment in pattern.split("/"):
        if segment == "**" and segments and segments[-1] == "**":
            continue
        segments.append(segment)
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment_regex(segment))
        if not last:
            out.append("/")
    return regex.compile("".join(out) + r"\Z", regex.V0)


def _segment_regex(segment: str) -> str:
    """One segment: its pieces between stars, the stars as `[^/]*` (all but the last atomic)."""
    pieces: list[list[str]] = [[]]
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            if segment[i - 1 : i] != "*":  # a run of stars is one star
                pieces.append([])
        elif ch == "?":
            pieces[-1].append("[^/]")
        elif ch == "[":
            first = i + 2 if segment[i + 1 : i + 2] == "!" else i + 1
            end = segment.find("]", first + 1 if segment[first : first + 1] == "]" else first)
            if end == -1:
                pieces[-1].append(regex.escape(ch))
            else:
                body = segment[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:] + "/"  # a negated class never matches the separator
                pieces[-1].append("[" + body + "]")
                i = end
        else:
            pieces[-1].append(regex.escape(ch))
        i += 1
    head, *starred = ["".join(p) for p in pieces]
    if not starred:
        return head
    *middle, tail = starred
    return head + "".join(f"(?>[^/]*?{piece})" for piece in middle) + "[^/]*" + tail

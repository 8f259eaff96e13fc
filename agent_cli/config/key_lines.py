"""Where a key is set in a config file: the line scan behind every `file:line` in a config error.

    find_key_lines(text)         dotted key -> the first line that sets it or opens its table
    key_place(path, lines, key)  "path:line" for a key (a key inside an inline table: its parent's line)

Pure functions over the file's text; `load.py` reads the file and parses it with tomllib.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["find_key_lines", "key_place", "line_of"]

_PART = r'(?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\')'
_HEADER_RE = re.compile(rf"^\s*\[\[?\s*({_PART}(?:\s*\.\s*{_PART})*)\s*\]\]?\s*(?:#.*)?$")
_KEY_RE = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")
_PART_RE = re.compile(_PART)


def _dotted(text: str) -> str:
    return ".".join(p.strip("\"'") for p in _PART_RE.findall(text))


def find_key_lines(text: str) -> dict[str, int]:
    """Dotted key -> first 1-based line where it is set or its table opens.

    A line scan, not a parser: it knows tables, dotted and quoted keys and skips
    the inside of multi-line strings; keys inside inline tables are found
    through their parent key (see `line_of`).
    """
    lines: dict[str, int] = {}
    table = ""
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        header = _HEADER_RE.match(line)
        if header:
            table = _dotted(header.group(1))
            lines.setdefault(table, number)
            continue
        key = _KEY_RE.match(line)
        if key:
            parts = _dotted(key.group(1)).split(".")
            for n in range(1, len(parts) + 1):  # `a.b.c = 1` also opens `a` and `a.b` here
                full = ".".join(parts[:n])
                lines.setdefault(f"{table}.{full}" if table else full, number)
            rest = line[key.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_string = quote
    return lines


def line_of(lines: Mapping[str, int], key: str) -> int | None:
    parts = key.split(".")
    for n in range(len(parts), 0, -1):
        found = lines.get(".".join(parts[:n]))
        if found is not None:
            return found
    return None


def key_place(path: Path, lines: Mapping[str, int], key: str) -> str:
    """`path:line` where `key` is set in the file at `path` (or its table opens), else the path."""
    line = line_of(lines, key)
    return f"{path}:{line}" if line is not None else str(path)

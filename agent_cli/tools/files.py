"""The file tools: read_file, write_file and edit_file.

read_file shows a window of the file (`read_window.py`): numbered like `cat -n`,
capped, and a cut always ends with the exact call that reads on. edit_file
does exact string replacement and explains every refusal in terms the model
can act on (how many matches, on which lines, a whitespace-only near miss).
What a tool may open, and how a file is replaced, is decided in `sandbox.py` and
`replace.py`: a write never truncates the old file before the new one is whole.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools.args import optional_bool, optional_int, require_str
from agent_cli.tools.base import Approval, CallView, FileEffect, ToolContext, ToolError, ToolOutput
from agent_cli.tools.images import MAX_FILE_BYTES, image_type, load_image
from agent_cli.tools.read_window import (
    MAX_LINE_CHARS,
    MAX_OUTPUT_BYTES,
    count_lines,
    number_line,
    read_window,
)
from agent_cli.tools.replace import replace_file
from agent_cli.tools.sandbox import display_path, file_kind, open_regular, resolve_path, writable_path

__all__ = [
    "BINARY_SNIFF_BYTES",
    "MAX_LINE_CHARS",
    "MAX_OUTPUT_BYTES",
    "EditFile",
    "ReadFile",
    "WriteFile",
    "looks_binary",
]

DEFAULT_LIMIT = 2000
BINARY_SNIFF_BYTES = 8192
MAX_EDIT_BYTES = 10 * 1024 * 1024
SNIPPET_CONTEXT = 3
SNIPPET_MAX_LINES = 40


def looks_binary(head: bytes) -> bool:
    """Binary means a NUL byte in the first 8 KiB: the rule git and grep use."""
    return b"\0" in head[:BINARY_SNIFF_BYTES]


class ReadFile:
    spec = ToolSpec(
        name="read_file",
        description=(
            "Read a UTF-8 text file, or look at an image (PNG, JPEG, GIF, WebP: it comes back as "
            "an image). Lines come back numbered like `cat -n` (number, tab, text); "
            "the numbers are not part of the file, so leave them out of edit_file's old_string. "
            f"Shows at most {DEFAULT_LIMIT} lines or 64 KiB per call; when cut, the output ends "
            "with the offset to pass next. Use offset/limit to read part of a large file."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the project root."},
                "offset": {"type": "integer", "minimum": 1, "description": "1-based first line to show."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show."},
            },
            "required": ["path"],
        },
    )
    approval: Approval = "never"
    view = CallView(main="path", lines=("offset", "limit"))

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        raw = require_str(args, "path")
        offset = optional_int(args, "offset", 1, minimum=1)
        limit = optional_int(args, "limit", DEFAULT_LIMIT, minimum=1)
        path = resolve_path(ctx, raw)
        shown = display_path(ctx, path)
        check_readable_file(path, shown, ctx)
        with open_regular(path, shown) as f:
            head = f.read(BINARY_SNIFF_BYTES)
            if not head:
                return ToolOutput(f"[{shown} is empty (0 bytes)]")
            if image_type(head[:16]) is not None:
                return _image(head + f.read(MAX_FILE_BYTES + 1 - len(head)), shown, ctx)
            if looks_binary(head):
                nul = head.index(b"\0")
                raise ToolError(
                    f"{shown} looks like a binary file (NUL byte at offset {nul}); "
                    "read_file shows text only. Use bash (e.g. `file` or `xxd | head`) to inspect it."
                )
            f.seek(0)
            return ToolOutput(read_window(f, shown, offset, limit))


def _image(data: bytes, shown: str, ctx: ToolContext) -> ToolOutput:
    """An image file: shown to a model that takes images; to one that does not, said so."""
    loaded = load_image(data, shown)
    if not ctx.images:
        raise ToolError(
            f"{loaded.line[1:-1]}: the model in use does not take images, so it cannot be shown to you "
            "(ask the user what it shows, or switch to a model that takes images with /model)"
        )
    return ToolOutput(f"{loaded.line} (attached below)", images=(loaded.block,))


def check_readable_file(path: Path, shown: str, ctx: ToolContext) -> None:
    """Errors for a path that is missing or not a regular file, with close matches when missing."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file. List it with glob (e.g. '{shown}/*').")
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}{_suggestions(path, ctx)}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        raise ToolError(f"{shown} is {file_kind(mode)}; the file tools read regular files only")


def _suggestions(path: Path, ctx: ToolContext) -> str:
    parent = path.parent
    if not parent.is_dir():
        return f" (directory {display_path(ctx, parent)} does not exist either)"
    try:
        names = [p.name for p in parent.iterdir()]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if not close:
        return ""
    listed = ", ".join(display_path(ctx, parent / name) for name in close)
    return f". Did you mean: {listed}?"


class WriteFile:
    spec = ToolSpec(
        name="write_file",
        description=(
            "Create a file, or replace a file's whole content. Parent directories are created. "
            "To change part of an existing file, prefer edit_file."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the project root."},
                "content": {"type": "string", "description": "The complete new content of the file."},
            },
            "required": ["path", "content"],
        },
    )
    approval: Approval = "ask"
    effect: FileEffect = "path"
    view = CallView(main="path", sized=("content",))

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        raw = require_str(args, "path")
        content = require_str(args, "content", allow_empty=True)
        path = writable_path(ctx, raw)
        shown = display_path(ctx, path)
        existed = path.exists()
        before = _line_count_of_file(path, shown) if existed else 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"cannot create the folder for {shown}: {exc.strerror}") from exc
        replace_file(path, content.encode("utf-8"), shown)  # byte for byte: no newline translation
        lines = line_count(content)
        size = len(content.encode("utf-8"))
        if existed:
            was = _n(before, "line")
            return ToolOutput(f"Overwrote {shown}: {_n(lines, 'line')}, {_n(size, 'byte')} (was {was}).")
        return ToolOutput(f"Created {shown}: {_n(lines, 'line')}, {_n(size, 'byte')}.")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def line_count(text: str) -> int:
    """Lines as an editor counts them: a last line without a newline still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _line_count_of_file(path: Path, shown: str) -> int:
    try:
        with open_regular(path, shown) as f:
            return count_lines(f)[0]
    except (OSError, ToolError):  # only for the message; the write decides
        return 0


class EditFile:
    spec = ToolSpec(
        name="edit_file",
        description=(
            "Replace an exact piece of text in a file. old_string must match the file exactly "
            "(indentation and whitespace included, without read_file's line-number prefixes) and "
            "occur once, unless replace_all is true. Include a few surrounding lines to make it unique."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the project root."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence instead of requiring exactly one.",
                },
            },
            "required": ["path", "old_string", "new_string"],
        },
    )
    approval: Approval = "ask"
    effect: FileEffect = "path"
    view = CallView(main="path", sized=("new_string",))

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        raw = require_str(args, "path")
        old = require_str(args, "old_string", allow_empty=True)
        new = require_str(args, "new_string", allow_empty=True)
        replace_all = optional_bool(args, "replace_all")
        if not old:
            raise ToolError("old_string is empty; to create a file or replace all of it use write_file")
        if old == new:
            raise ToolError("old_string and new_string are identical; nothing would change")
        path = writable_path(ctx, raw)
        shown = display_path(ctx, path)
        if not path.exists() and not path.is_dir():
            hint = _suggestions(path, ctx)
            raise ToolError(f"file not found: {shown}{hint} (to create a file use write_file)")
        check_readable_file(path, shown, ctx)
        text = _read_text_for_edit(path, shown)
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
            # The file uses CRLF; read_file showed the lines without the \r.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
        if count == 0:
            raise ToolError(f"old_string not found in {shown}.{_near_miss_hint(text, old)}")
        if count > 1 and not replace_all:
            lines = _match_lines(text, old)
            raise ToolError(
                f"old_string occurs {count} times in {shown} (at lines {_list_numbers(lines)}); "
                "include more surrounding lines to make it unique, or pass replace_all=true."
            )
        first = text.index(old)
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        replace_file(path, updated.encode("utf-8"), shown)
        what = f"Replaced {count} occurrences" if count > 1 else "Replaced 1 occurrence"
        return ToolOutput(f"{what} in {shown}. Around the first change:\n{_snippet(updated, first, new)}")


def _read_text_for_edit(path: Path, shown: str) -> str:
    with open_regular(path, shown) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_EDIT_BYTES:
            raise ToolError(
                f"{shown} is {size} bytes, over edit_file's {MAX_EDIT_BYTES} byte limit; use bash"
            )
        data = f.read()
    if looks_binary(data):
        raise ToolError(f"{shown} looks like a binary file (it has NUL bytes); edit_file edits text only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not valid UTF-8 (byte offset {exc.start}); edit_file edits UTF-8 text only"
        ) from exc


_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


def _near_miss_hint(text: str, old: str) -> str:
    old_lines = old.split("\n")
    if all(_LINE_NUMBER_PREFIX.match(line) for line in old_lines if line):
        return " old_string seems to include read_file's line-number prefixes (number + tab); leave them out."
    words = old.split()
    if not words:
        return " old_string is only whitespace; include some text."
    loose = re.compile(r"\s+".join(re.escape(w) for w in words))
    match = loose.search(text)
    if match is None:
        return " Read the file again to copy the current text exactly."
    line = text.count("\n", 0, match.start()) + 1
    return (
        f" A match that differs only in whitespace starts at line {line}: copy the exact "
        "indentation, tabs/spaces and line breaks from read_file."
    )


def _match_lines(text: str, old: str) -> list[int]:
    lines: list[int] = []
    pos = text.find(old)
    line = 1
    scanned = 0
    while pos != -1:
        line += text.count("\n", scanned, pos)
        scanned = pos
        lines.append(line)
        pos = text.find(old, pos + len(old))
    return lines


def _list_numbers(numbers: list[int], most: int = 20) -> str:
    shown = ", ".join(str(n) for n in numbers[:most])
    return shown + (f", ... ({len(numbers) - most} more)" if len(numbers) > most else "")


def _snippet(text: str, start: int, inserted: str) -> str:
    """The changed lines plus a few either side, numbered like read_file, bounded in length."""
    first_line = text.count("\n", 0, start) + 1
    last_line = first_line + inserted.count("\n")
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the newline ending the last line does not start another
    lo = max(1, first_line - SNIPPET_CONTEXT)
    hi = min(len(lines), last_line + SNIPPET_CONTEXT, lo + SNIPPET_MAX_LINES - 1)
    body = [number_line(n, lines[n - 1].rstrip("\r")[:MAX_LINE_CHARS]) for n in range(lo, hi + 1)]
    if hi < last_line + SNIPPET_CONTEXT and hi < len(lines):
        body.append(f"[... snippet cut; read_file with offset={hi + 1} shows the rest]")
    return "\n".join(body)

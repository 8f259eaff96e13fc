"""The search tools: glob (find paths) and grep (find lines).

Both walk the project with `os.walk`, pruning directories nobody wants
searched (.git, .transcripts, node_modules, __pycache__, .venv), never follow
directory symlinks (so they cannot leave the root or loop), stop on
`ctx.cancel`, and cap their output with a note saying what was left out.
Every match runs under a time budget (`matching.Budget`): a pattern that
backtracks stops with a note in the result instead of hanging the agent.
The glob pattern language is `globs.glob_to_regex`, a pure function tested on its own.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import regex

from agent_cli.core.requests import ToolSpec
from agent_cli.core.text import clean
from agent_cli.tools.args import optional_str, require_str
from agent_cli.tools.base import Approval, CallView, ToolContext, ToolError, ToolOutput
from agent_cli.tools.files import BINARY_SNIFF_BYTES, looks_binary
from agent_cli.tools.globs import glob_to_regex
from agent_cli.tools.matching import Budget, SearchLimits, SearchStopped, compile_model_regex
from agent_cli.tools.sandbox import NotRegularFile, display_path, open_regular, resolve_path

__all__ = ["SKIP_DIRS", "Glob", "Grep", "glob_to_regex", "walk_files"]

SKIP_DIRS = frozenset({".git", ".transcripts", "node_modules", "__pycache__", ".venv"})
GLOB_MAX_RESULTS = 200
GREP_MAX_MATCHES = 200
GREP_MAX_FILE_BYTES = 2 * 1024 * 1024
GREP_MAX_LINE_CHARS = 300
GREP_MAX_OUTPUT_BYTES = 48 * 1024


def walk_files(top: Path, ctx: ToolContext, *, dirs_too: bool = False) -> Iterator[Path]:
    """Every file under `top` in a stable order, skipping SKIP_DIRS; stops when cancelled."""
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        if ctx.cancel.is_set():
            return
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        base = Path(dirpath)
        if dirs_too:
            for name in dirnames:
                yield base / name
        for name in sorted(filenames):
            yield base / name


class Glob:
    spec = ToolSpec(
        name="glob",
        description=(
            "Find files by name pattern, relative to the project root: `*` and `?` match within one "
            "path segment, `**` matches any number of directories (e.g. '**/*.py', 'src/**/test_*'). "
            f"Newest first, at most {GLOB_MAX_RESULTS} paths; directories end with '/'. "
            ".git, node_modules, .venv, __pycache__ and .transcripts are skipped."
        ),
        input_schema={
            "type": "object",
            "properties": {"pattern": {"type": "string", "description": "Glob pattern, e.g. '**/*.py'."}},
            "required": ["pattern"],
        },
    )
    approval: Approval = "never"
    view = CallView(main="pattern")

    def __init__(self, limits: SearchLimits | None = None) -> None:
        self.limits = limits or SearchLimits()

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        pattern = require_str(args, "pattern").strip()
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/") or "*"
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ToolError(f"glob patterns are relative to the project root; got {pattern!r}")
        root = ctx.root.resolve()
        start = _literal_prefix(root, pattern)
        if start != root:  # a literal folder may be a symlink out of the project: the walk follows it
            resolve_path(ctx, start.relative_to(root).as_posix(), name="pattern")
        compiled = glob_to_regex(pattern)
        budget = Budget(self.limits, ctx.cancel)
        matched = 0
        newest: list[tuple[float, str]] = []
        stopped: SearchStopped | None = None
        try:
            for path in walk_files(start, ctx, dirs_too=True) if start.is_dir() else ():
                rel = path.relative_to(root).as_posix()
                budget.start_file()
                if not budget.match(compiled, rel):
                    continue
                try:
                    stat = path.lstat()
                except OSError:
                    continue
                matched += 1
                entry = (stat.st_mtime, rel + "/" if path.is_dir() and not path.is_symlink() else rel)
                # A bounded heap: a million matches cost GLOB_MAX_RESULTS entries of memory.
                if len(newest) < GLOB_MAX_RESULTS:
                    heapq.heappush(newest, entry)
                else:
                    heapq.heappushpop(newest, entry)
        except SearchStopped as exc:
            stopped = exc
        note = _glob_note(stopped, budget) if stopped or ctx.cancel.is_set() else ""
        if not matched:
            hint = " (patterns without '/' match only the top level; try '**/" + pattern + "')"
            said = f"No paths match {pattern!r}" + (hint if "/" not in pattern and not note else "") + "."
            return ToolOutput("\n".join(filter(None, [said, note])))
        lines = [clean(rel) for _, rel in sorted(newest, key=lambda e: (-e[0], e[1]))]  # odd bytes: U+FFFD
        if matched > len(lines):
            lines.append(
                f"[{len(lines)} of {matched} matches shown, newest first; narrow the pattern to see others]"
            )
        return ToolOutput("\n".join(filter(None, [*lines, note])))


def _glob_note(stopped: SearchStopped | None, budget: Budget) -> str:
    if stopped is None or stopped.scope == "cancelled":
        return "[cancelled: the listing is incomplete]"
    if stopped.scope == "total":
        return f"[listing stopped after {budget.elapsed():.0f} s (the limit); narrow the pattern]"
    return (
        f"[listing stopped after {budget.elapsed():.1f} s: the pattern backtracks; "
        "simplify it (fewer '*' and '**')]"
    )


def _literal_prefix(root: Path, pattern: str) -> Path:
    """The deepest directory named literally at the start of the pattern: where walking can begin."""
    start = root
    for segment in pattern.split("/")[:-1]:
        if any(c in segment for c in "*?["):
            break
        start = start / segment
    return start


class Grep:
    spec = ToolSpec(
        name="grep",
        description=(
            "Search file contents with a Python regular expression (use (?i) for case-insensitive). "
            "path is a file or a directory (default: the project root), searched recursively. "
            "Prints 'path:line:text' per matching line, at most "
            f"{GREP_MAX_MATCHES} matches. Binary files, files over 2 MiB, .git, node_modules, "
            ".venv, __pycache__ and .transcripts are skipped."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Python regex, e.g. 'def \\w+_tool'."},
                "path": {"type": "string", "description": "File or directory to search; default '.'."},
            },
            "required": ["pattern"],
        },
    )
    approval: Approval = "never"
    view = CallView(main="pattern", where="path")

    def __init__(self, limits: SearchLimits | None = None) -> None:
        self.limits = limits or SearchLimits()

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        pattern = require_str(args, "pattern", allow_empty=True)
        if not pattern:
            raise ToolError("argument 'pattern' is empty")
        compiled = compile_model_regex(pattern)
        raw_path = optional_str(args, "path") or "."
        target = resolve_path(ctx, raw_path)
        shown = display_path(ctx, target)
        if not target.exists():
            raise ToolError(f"path not found: {shown}")
        budget = Budget(self.limits, ctx.cancel)
        if not target.is_dir():  # a file, or a FIFO or device that _load names and refuses
            return ToolOutput(_grep_one_file(compiled, target, ctx, budget))
        return ToolOutput(_grep_tree(compiled, target, ctx, budget, pattern))


def _grep_one_file(compiled: regex.Pattern[str], path: Path, ctx: ToolContext, budget: Budget) -> str:
    shown = display_path(ctx, path)
    text, skipped = _load(path)
    if text is None:
        raise ToolError(f"{shown} is {skipped}; grep searches text files only")
    found = _Found()
    try:
        _search_text(compiled, text, shown, found, budget)
    except SearchStopped as exc:
        return "\n".join(filter(None, [found.render(), _stopped_note(exc, budget, [exc.where])]))
    if not found.lines:
        return f"No matches for {compiled.pattern!r} in {shown}."
    return found.render()


def _grep_tree(
    compiled: regex.Pattern[str], top: Path, ctx: ToolContext, budget: Budget, pattern: str
) -> str:
    found = _Found()
    searched = 0
    skipped_big: list[str] = []
    backtracking: list[str] = []  # where a file was given up on: "path:line"
    stopped: SearchStopped | None = None
    try:
        for path in walk_files(top, ctx):
            budget.check()
            if found.full:
                break
            if path.is_symlink() or not path.is_file():
                continue  # a symlink may point outside the root: only real files are searched
            text, why = _load(path)
            if text is None:
                if why.startswith("over"):
                    skipped_big.append(display_path(ctx, path))
                continue
            searched += 1
            try:
                _search_text(compiled, text, display_path(ctx, path), found, budget)
            except SearchStopped as exc:
                if exc.scope not in ("call", "file"):
                    raise
                backtracking.append(exc.where)
                if len(backtracking) >= budget.limits.slow_files:
                    raise
    except SearchStopped as exc:
        stopped = exc
    notes: list[str] = []
    if found.full:
        notes.append(
            f"[stopped at {len(found.lines)} matching lines; more may exist: narrow the pattern or the path]"
        )
    if skipped_big:
        listed = ", ".join(skipped_big[:5]) + (" ..." if len(skipped_big) > 5 else "")
        files = "1 file" if len(skipped_big) == 1 else f"{len(skipped_big)} files"
        notes.append(f"[skipped {files} over 2 MiB: {listed}; use bash to search them]")
    if stopped is not None:
        notes.append(_stopped_note(stopped, budget, backtracking, searched))
    elif backtracking:
        notes.append(
            f"[gave up on {_files(backtracking)}: the pattern backtracks there ({', '.join(backtracking)}); "
            "simplify it]"
        )
    elif ctx.cancel.is_set():
        notes.append("[cancelled: the search is incomplete]")
    if not found.lines:
        head = f"No matches for {pattern!r} in {display_path(ctx, top)} ({_files_searched(searched)})."
        return "\n".join([head, *notes])
    return "\n".join([found.render(), *notes])


def _stopped_note(stopped: SearchStopped, budget: Budget, backtracking: list[str], searched: int = 1) -> str:
    """What the model reads when the search stopped before its end, and why."""
    if stopped.scope == "cancelled":
        return "[cancelled: the search is incomplete]"
    seconds = budget.elapsed()
    if stopped.scope == "total":
        return (
            f"[search stopped after {seconds:.0f} s (the limit), {_files_searched(searched)}; "
            "narrow the path or simplify the pattern]"
        )
    where = ", ".join(backtracking)
    return f"[search stopped after {seconds:.1f} s: the pattern backtracks (at {where}); simplify it]"


def _files(paths: list[str]) -> str:
    return "1 file" if len(paths) == 1 else f"{len(paths)} files"


def _files_searched(count: int) -> str:
    return f"{count} file searched" if count == 1 else f"{count} files searched"


class _Found:
    """Matching lines collected under both a line cap and a byte cap."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.full = False

    def add(self, line: str) -> None:
        cost = len(line.encode("utf-8")) + 1
        if len(self.lines) >= GREP_MAX_MATCHES or self.size + cost > GREP_MAX_OUTPUT_BYTES:
            self.full = True
            return
        self.lines.append(line)
        self.size += cost

    def render(self) -> str:
        return "\n".join(self.lines)


def _search_text(compiled: regex.Pattern[str], text: str, shown: str, found: _Found, budget: Budget) -> None:
    """Add the matching lines of one file; SearchStopped, naming the line, when the budget runs out."""
    budget.start_file()
    # Split on \n only, as read_file does, so line numbers agree (splitlines also breaks on \f, \u2028).
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline ending the last line does not start another (grep '^$' agrees)
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        try:
            hit = budget.search(compiled, line)
        except SearchStopped as exc:
            raise SearchStopped(exc.scope, f"{shown}:{number}") from None
        if hit:
            if len(line) > GREP_MAX_LINE_CHARS:
                line = line[:GREP_MAX_LINE_CHARS] + " [...]"
            found.add(f"{shown}:{number}:{line}")
            if found.full:
                return


def _load(path: Path) -> tuple[str | None, str]:
    """The file's text, or None and why it was skipped (a FIFO swapped in is never waited on)."""
    try:
        with open_regular(path, path.name) as f:
            size = os.fstat(f.fileno()).st_size
            if size > GREP_MAX_FILE_BYTES:
                return None, f"over 2 MiB ({size} bytes)"
            data = f.read(GREP_MAX_FILE_BYTES + 1)
    except NotRegularFile as exc:
        return None, exc.kind
    except (ToolError, OSError) as exc:
        return None, f"unreadable ({getattr(exc, 'strerror', None) or exc})"
    if looks_binary(data[:BINARY_SNIFF_BYTES]):
        return None, "a binary file"
    # A stray invalid byte should not hide the rest of the file from a search.
    return data.decode("utf-8", errors="replace"), ""

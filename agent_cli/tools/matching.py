"""Pattern matching under a time budget: the model's regexes (grep) and globs run here.

A regex from the model is untrusted input that can backtrack for ever (`^(\\w+\\s?)*$` on a
sentence). Python's `re` cannot be stopped: it holds the GIL in C, so neither Ctrl-C nor SIGTERM
is handled while it runs. The `regex` engine (V0, compatible with `re` syntax) takes a timeout
per call and, with `concurrent=True`, releases the GIL while it matches, so the main thread
still takes signals. A `Budget` gives every call the least of three limits:

- *call*: one match (one line, one path). It is short, because the cancel event (Ctrl-C) is
  checked between calls, so it is also how late a Ctrl-C can be honoured.
- *file*: all the matching in one file.
- *total*: the whole search, walking included.

When a limit runs out the budget raises `SearchStopped` naming which one; the tools turn that
into a note in their result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import regex

from agent_cli.tools.base import ToolError

__all__ = ["Budget", "SearchLimits", "SearchStopped", "compile_model_regex"]

Scope = Literal["call", "file", "total", "cancelled"]


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """Seconds each scope may spend (the call limit also bounds how late Ctrl-C is honoured),
    and how many files grep gives up on for backtracking before it stops altogether."""

    call: float = 0.25
    file: float = 2.0
    total: float = 10.0
    slow_files: int = 3


class SearchStopped(Exception):
    """A limit ran out (or the search was cancelled): `scope` says which, `where` (when the
    caller knows) on what, e.g. "path:line"."""

    def __init__(self, scope: Scope, where: str = "") -> None:
        super().__init__(scope, where)
        self.scope: Scope = scope
        self.where = where


def compile_model_regex(pattern: str) -> regex.Pattern[str]:
    """The model's pattern on the `regex` engine in its `re`-compatible mode, or a ToolError
    saying where the pattern is wrong."""
    try:
        return regex.compile(pattern, regex.V0)
    except regex.error as exc:
        pos, msg = getattr(exc, "pos", None), getattr(exc, "msg", str(exc))  # not in the stubs
        where = f" at position {pos}" if pos is not None else ""
        raise ToolError(
            f"bad regex {pattern!r}: {msg}{where}. grep takes Python `re` syntax; "
            "escape literal ( ) [ ] { } . * + ? | \\ with a backslash."
        ) from exc


class Budget:
    """The clock of one search: each match gets what is left of its call, file and total limits."""

    def __init__(
        self,
        limits: SearchLimits,
        cancel: threading.Event,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self._cancel = cancel
        self._clock = clock
        self._start = clock()
        self._file_start = self._start

    def elapsed(self) -> float:
        return self._clock() - self._start

    def start_file(self) -> None:
        """The file limit counts from here."""
        self._file_start = self._clock()

    def check(self) -> None:
        """SearchStopped when cancelled or out of total time; between files and lines."""
        if self._cancel.is_set():
            raise SearchStopped("cancelled")
        if self.elapsed() >= self.limits.total:
            raise SearchStopped("total")

    def search(self, compiled: regex.Pattern[str], text: str) -> bool:
        """Whether `compiled` matches somewhere in `text`, within the budget."""
        return self._run(compiled.search, text)

    def match(self, compiled: regex.Pattern[str], text: str) -> bool:
        """Whether `compiled` matches at the start of `text`, within the budget."""
        return self._run(compiled.match, text)

    def _run(self, call: Callable[..., regex.Match[str] | None], text: str) -> bool:
        self.check()
        now = self._clock()
        left: dict[Scope, float] = {
            "call": self.limits.call,
            "file": self.limits.file - (now - self._file_start),
            "total": self.limits.total - (now - self._start),
        }
        scope = min(left, key=lambda s: left[s])
        if left[scope] <= 0:
            raise SearchStopped(scope)
        try:
            # concurrent=True releases the GIL while matching: signals reach the main thread.
            return call(text, timeout=left[scope], concurrent=True) is not None
        except TimeoutError:
            # A Ctrl-C during the call is why the search ends, whatever limit also ran out.
            raise SearchStopped("cancelled" if self._cancel.is_set() else scope) from None

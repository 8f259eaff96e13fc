"""Output on a terminal or pipe that cannot encode every character (`PYTHONIOENCODING=ascii`, Latin-1).

`install()` makes stdout and stderr replace what their encoding cannot hold
instead of raising in the middle of an answer: the glyphs the agent itself
draws get ASCII stand-ins (`✓` -> `+`, `∴` -> `:.`, `·` -> `-`, `…` -> `...`),
anything else becomes `?`. A UTF-8 stream is left as it is. `ascii_only`
tells the renderer to pick a spinner drawn in ASCII.
"""

from __future__ import annotations

import codecs
import contextlib
import sys
from typing import IO

__all__ = ["ERRORS", "FALLBACKS", "ascii_only", "fit", "install"]

ERRORS = "agent-cli-fallback"  # the codec error handler's name
FALLBACKS = {
    "✓": "+",
    "⏵": ">",
    "⏸": "||",
    "✗": "x",
    "∴": ":.",
    "·": "-",
    "…": "...",
    "⟳": "~",
    "◎": "(o)",
    "›": ">",
    "→": "->",
    "←": "<-",
    "−": "-",
    "•": "*",
    "│": "|",
    "—": "--",
    "–": "-",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "\u00a0": " ",
    "─": "-",
    "━": "=",
    "▌": "|",
}


def _fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return "".join(FALLBACKS.get(c, "?") for c in bad), exc.end


def install() -> None:
    """Replace, never raise, on stdout and stderr when their encoding is not UTF-8."""
    codecs.register_error(ERRORS, _fallback)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and ascii_only(stream):
            with contextlib.suppress(AttributeError, ValueError):  # not a TextIOWrapper, or closed
                stream.reconfigure(errors=ERRORS)  # type: ignore[union-attr]


def ascii_only(stream: IO[str] | None) -> bool:
    """Whether `stream` cannot encode UTF-8 text (its encoding is not a UTF codec)."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    return not encoding.startswith("utf")


def fit(text: str, stream: IO[str] | None) -> str:
    """`text` with the agent's glyphs in their ASCII stand-ins when `stream` cannot encode UTF-8
    (for what is drawn by prompt_toolkit, which writes `?` for what its output cannot encode)."""
    return "".join(FALLBACKS.get(c, c) for c in text) if ascii_only(stream) else text

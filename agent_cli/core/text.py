"""Text that can cross every boundary: no lone surrogates, and no control characters on a screen.

Python hands undecodable bytes over as lone surrogates: a file name or a
project directory that is not UTF-8 (`os.fsdecode`), a prompt on the command
line with stray bytes (argv is decoded with `surrogateescape`). Such a string
cannot be encoded as UTF-8, so the first JSON body, log line or token count
would fail. `clean` turns each undecodable byte into U+FFFD, the way a
tolerant decoder would have read it; valid text is returned as it is.

Text from a model, a tool or a file is shown to a person only through
`visible`: a terminal obeys the control characters in what it is sent (ESC
starts sequences that move the cursor, erase a line, set the title or write
the clipboard; a C1 byte such as U+009B is a CSI of its own), so each of them
is written out instead, as `\\x1b`. Newline and tab stay (they are layout);
a CR before a newline is dropped (Windows line ends), any other CR is shown,
since a bare CR redraws the line from its start. Bidi overrides and isolates
are shown too: they reorder what follows, so a reader sees other text than
what is there.

`visible_exact` is for what a person approves (a command): every character
that does not show as itself is written out as well (NBSP and the other
spaces that are not U+0020, zero-width characters, every format character of
category Cf, line and paragraph separators, unassigned and private-use code
points), so two commands that look the same on the screen never are different.
"""

from __future__ import annotations

import re

__all__ = ["clean", "decode", "escape_char", "one_line", "visible", "visible_exact", "visible_parts"]

# C0 controls but tab and newline, DEL, C1 controls; bidi embeddings, overrides and isolates.
_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when there is none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:  # surrogate-escaped bytes: decode the original bytes, each bad one becomes one U+FFFD
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # other lone surrogates (from JSON, say)
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def decode(data: bytes) -> str:
    """Bytes from outside (stdin, a pipe) as text: UTF-8, undecodable bytes as U+FFFD."""
    return data.decode("utf-8", "replace")


def escape_char(char: str) -> str:
    """How one character is written out: `\\x1b`, `\\u200b`, `\\U000e0001`."""
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _sub(match: re.Match[str]) -> str:
    found = match.group()
    return "\n" if found == "\r\n" else escape_char(found)


def visible(text: str) -> str:
    """`text` safe to write to a terminal: controls (but newline and tab) and bidi controls written out."""
    return _UNSAFE.sub(_sub, text)  # the same object when nothing matches


def one_line(text: str) -> str:
    """`visible(text)` on one line: newlines and tabs written out too."""
    return visible(text).replace("\n", "\\x0a").replace("\t", "\\x09")


def visible_exact(text: str) -> str:
    """`text` as a person must see what they approve: also every invisible or look-alike space shown."""
    return "".join(part for part, _ in visible_parts(text))


def _unseen(char: str) -> bool:
    # str.isprintable is False for exactly the Unicode categories Other (Cc, Cf, Cs, Co, Cn) and
    # Separator (Zs but U+0020, Zl, Zp): everything that does not show as itself.
    return not char.isprintable() and char not in "\n\t"


def visible_parts(text: str) -> list[tuple[str, bool]]:
    """`visible_exact(text)` as pieces, each with whether it is a written-out character (to style it)."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return [(text, False)]
    parts: list[tuple[str, bool]] = []
    run: list[str] = []
    for char in text:
        if _unseen(char):
            if run:
                parts.append(("".join(run), False))
                run = []
            parts.append((escape_char(char), True))
        else:
            run.append(char)
    if run:
        parts.append(("".join(run), False))
    return parts

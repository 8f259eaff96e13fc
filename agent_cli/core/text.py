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
category Cf, line and paragraph separators), so two commands that look the
same on the screen never are different.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clean", "decode", "escape_char", "visible", "visible_exact", "visible_parts"]

# C0 controls but tab and newline, DEL, C1 controls; bidi embeddings, overrides and isolates.
_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SPACES = "\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_FORMAT = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf")
_UNSEEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_SPACES}{re.escape(_FORMAT)}]")


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
    return _UNSAFE.sub(_sub, text) if _UNSAFE.search(text) else text


def visible_exact(text: str) -> str:
    """`text` as a person must see what they approve: also every invisible or look-alike space shown."""
    return _UNSEEN.sub(lambda m: escape_char(m.group()), text)


def visible_parts(text: str) -> list[tuple[str, bool]]:
    """`visible_exact(text)` as pieces, each with whether it is a written-out character (to style it)."""
    parts: list[tuple[str, bool]] = []
    pos = 0
    for match in _UNSEEN.finditer(text):
        if match.start() > pos:
            parts.append((text[pos : match.start()], False))
        parts.append((escape_char(match.group()), True))
        pos = match.end()
    if pos < len(text) or not parts:
        parts.append((text[pos:], False))
    return parts

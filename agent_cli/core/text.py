"""Text that can cross every boundary: no lone surrogates.

Python hands undecodable bytes over as lone surrogates: a file name or a
project directory that is not UTF-8 (`os.fsdecode`), a prompt on the command
line with stray bytes (argv is decoded with `surrogateescape`). Such a string
cannot be encoded as UTF-8, so the first JSON body, log line or token count
would fail. `clean` turns each undecodable byte into U+FFFD, the way a
tolerant decoder would have read it; valid text is returned as it is.
"""

from __future__ import annotations

__all__ = ["clean", "decode"]


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

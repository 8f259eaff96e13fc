"""Token counts of texts kept across counters: a text counted once in a process is not encoded again.

    kept_count(encoder, text) -> len(encoder.encode_ordinary(text))

A `TokenCounter` keeps its counts by message id; a new counter (a sub-agent's, the next run of a
benchmark) would encode the same tool outputs again, which is most of counting's cost. Counts are
kept by (encoder, text), the least recently used dropped once the kept texts pass `KEPT_CHARS`
characters (the texts are held: the bound is their size). Guarded by a lock: the REPL counts in a
background thread too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol

__all__ = ["KEPT_CHARS", "MIN_CHARS", "kept_count"]

KEPT_CHARS = 16_000_000  # about 16 MB of ASCII text held at most
MIN_CHARS = 64  # a shorter text is encoded again: keeping it would cost about as much


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


_lock = threading.Lock()
_kept: OrderedDict[tuple[_Encoder, str], int] = OrderedDict()
_chars = 0


def kept_count(encoder: _Encoder, text: str) -> int:
    """`encoder`'s token count of `text`, encoded only if it is not kept."""
    global _chars
    if len(text) < MIN_CHARS:
        return len(encoder.encode_ordinary(text))
    key = (encoder, text)
    with _lock:
        got = _kept.get(key)
        if got is not None:
            _kept.move_to_end(key)
            return got
    got = len(encoder.encode_ordinary(text))
    with _lock:
        if key not in _kept:
            _kept[key] = got
            _chars += len(text)
            while _chars > KEPT_CHARS and _kept:
                (_, old), _ = _kept.popitem(last=False)
                _chars -= len(old)
    return got

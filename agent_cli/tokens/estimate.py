"""The last-resort token estimate: a CJK-aware character count, no vocabulary needed.

Used only when no tiktoken encoding can be loaded. BPE vocabularies spend far
more tokens per character on CJK text than on Latin text, so a flat
chars/4 rule undercounts Chinese or Japanese three- to four-fold; that is the
mistake this module exists to avoid. It errs high rather than low: an
overestimate compacts a little early, an underestimate overflows the window.

Rates (characters per token):

- CJK ideographs, kana, Hangul, CJK punctuation and full-width forms: ~1.5
- emoji and other astral-plane symbols: ~1 (each is 4 UTF-8 bytes, which BPE
  vocabularies split into one to three tokens)
- everything else: ~4
"""

from __future__ import annotations

import math
import re

__all__ = ["estimate_tokens"]

CHARS_PER_TOKEN = 4.0
CJK_CHARS_PER_TOKEN = 1.5
WIDE_SYMBOL_CHARS_PER_TOKEN = 1.0

_CJK_RE = re.compile(
    "["
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3000-\u303f"  # CJK symbols and punctuation (、。「」 ...)
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3100-\u312f"  # Bopomofo
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3200-\u4dbf"  # enclosed CJK, CJK compatibility, extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended-A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo extended-B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\ufe30-\ufe4f"  # CJK compatibility forms
    "\uff00-\uffef"  # half-width and full-width forms
    "\U00020000-\U0003ffff"  # CJK extensions B and later
    "]"
)
# Emoji and other astral symbols; the CJK extension planes are matched above first.
_WIDE_SYMBOL_RE = re.compile("[\U00010000-\U0001ffff]")


def estimate_tokens(text: str) -> int:
    """An estimate of how many tokens `text` costs, rounded up; 0 only for empty text."""
    if not text:
        return 0
    if text.isascii():  # the common case, and the cheap one
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    cjk = len(_CJK_RE.findall(text))
    wide = len(_WIDE_SYMBOL_RE.findall(text))
    other = len(text) - cjk - wide
    tokens = cjk / CJK_CHARS_PER_TOKEN + wide / WIDE_SYMBOL_CHARS_PER_TOKEN + other / CHARS_PER_TOKEN
    return max(1, math.ceil(tokens))

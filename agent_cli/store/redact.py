"""Secret redaction: the last gate before anything is written to disk or shown to the model.

`Redactor` hides the configured API keys (found with `str.find`, whole or as a piece: the
first or last 16 characters or more, as an output cut in the middle of a key leaves them) and
the credential shapes of `secret_shapes.SHAPES` (detect-secrets' rules and a few of ours:
cloud, CI, payment and chat tokens, passwords in URLs, header values, private key blocks).
Every secret becomes `[REDACTED]`; a shape that marks a `secret` part keeps its context
(`postgres://user:[REDACTED]@host/db`). `spans` says where the secrets are, so a cut can be
placed around them rather than through them.

Speed matters because every log record passes through here. All shapes are one regex,
grouped by first character, and every shape starts with a literal character (a rare one
where it can: a look-behind checks what came before), so the regex engine skips cheaply
over text that holds no secrets. Word boundaries that a leading look-behind would express
are checked in Python instead, for the same reason. benchmarks/redact_speed.py measures it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from agent_cli.store.secret_shapes import SHAPES, Shape

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"

# Shorter configured "secrets" are ignored: redacting e.g. "test" or "abc123"
# would mangle ordinary text and protect nothing.
_MIN_SECRET_LEN = 8
# A configured key's first or last this many characters, found alone, are taken for a piece of
# it (an output cut in the middle of the key); keys shorter than twice this are matched whole only.
_FRAGMENT = 16


_SECRET_GROUP = re.compile(re.escape("(?P<secret>"))


@functools.cache
def _compiled_shapes() -> tuple[tuple[Shape, re.Pattern[str], re.Pattern[str] | None], ...]:
    """Each shape with its own regex (to tell which one matched) and its `left` class, compiled once,
    at the first match: a session start that sees no secret does not pay for them."""
    return tuple((s, re.compile(s.pattern), re.compile(s.left) if s.left else None) for s in SHAPES)


@functools.cache
def _alternation() -> re.Pattern[str]:
    """One regex finding every shape: `a(?:...|...)|b(?:...)|...`, grouped by first character.

    Grouped, a character that starts a shape costs one test per distinct first character rather than
    one per shape; and since each group starts with a literal, the engine skips every other character
    without entering the pattern. (The `secret` groups go: one name may appear once in a regex.)
    """
    groups: dict[str, list[str]] = {}
    for shape in SHAPES:
        first, rest = shape.pattern[0], _SECRET_GROUP.sub("(?:", shape.pattern[1:])
        assert first not in "\\()[]{}.*+?|^$", f"{shape.name}: a shape must start with a literal"
        groups.setdefault(first, []).append(rest)
    return re.compile("|".join(f"{re.escape(c)}(?:{'|'.join(rests)})" for c, rests in groups.items()))


def _glued(text: str, start: int) -> bool:
    """True when the match at `start` continues a word ("disk-0123..." is not an OpenAI key)."""
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans in order, overlapping or touching ones joined into one."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
            continue
        out.append((start, end))
    return out


class Redactor:
    """Replaces known secrets and credential-shaped strings with `[REDACTED]`.

    `secrets` are the configured API keys; values shorter than 8 characters
    (and empty/None-ish ones) are ignored.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._literals = frozenset(s for s in secrets if s and len(s) >= _MIN_SECRET_LEN)
        self._regex = _alternation()

    def redact(self, text: str) -> str:
        """`text` with every secret replaced; the same object when nothing matched."""
        found = self._matches(text)
        if not found:
            return text
        pieces: list[str] = []
        last = 0
        for start, end in found:
            pieces.append(text[last:start])
            pieces.append(REDACTED)
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets in `text` are (start, end), in order: what `redact` would replace."""
        return self._matches(text)

    def redact_json(self, obj: Any) -> Any:
        """A deep copy of a JSON-like value with every string (keys included) redacted."""
        if isinstance(obj, str):
            return self.redact(obj)
        if isinstance(obj, dict):
            if obj.get("type") == "image" and isinstance(obj.get("data"), str):
                # An image's base64 is its pixels, not text (and its digest names it): a pattern
                # would only corrupt them.
                kept = {k: obj[k] for k in ("data", "sha256") if k in obj}
                rest = {k: self.redact_json(v) for k, v in obj.items() if k not in kept}
                return {**rest, **kept}
            return {self.redact(k) if isinstance(k, str) else k: self.redact_json(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.redact_json(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.redact_json(v) for v in obj)
        return obj

    def _matches(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every secret, in order, not overlapping."""
        if not text:
            return []
        found: list[tuple[int, int]] = []
        pos = 0
        while (match := self._regex.search(text, pos)) is not None:
            span = self._secret(match, text)
            if span is None:
                # Rejected (glued to a longer word): look again one character on,
                # so a configured key inside the rejected span is still found.
                pos = match.start() + 1
                continue
            found.append(span)
            pos = match.end()
        if self._literals:
            found = found + self._configured(text)
        return _merge(found)

    def _secret(self, match: re.Match[str], text: str) -> tuple[int, int] | None:
        """The part of `match` to replace, or None when it is not a secret after all."""
        # Which shape matched: the first whose own regex matches here, as in the alternation.
        # Only matches pay for this, and text without secrets has none.
        for shape, own, left in _compiled_shapes():
            hit = own.match(text, match.start())
            if hit is None:
                continue
            if "secret" in own.groupindex:
                start, end = hit.span("secret")
            else:  # the secret may begin before the match (a look-behind saw it)
                start, end = hit.start() - shape.behind, hit.end()
            if left is not None:
                while start > 0 and left.match(text, start - 1):
                    start -= 1
            elif text[start].isalnum() and _glued(text, start):
                return None
            return start, end
        return match.span()  # not reached: some shape matched

    def _configured(self, text: str) -> list[tuple[int, int]]:
        """Where the configured keys are, whole or in pieces: a key's first or last `_FRAGMENT`
        characters or more, as a cut output leaves them (the rest fell in the part left out).
        `str.find` skips through text by the probe's length: far cheaper than a regex."""
        spans: list[tuple[int, int]] = []
        for key in self._literals:
            if len(key) < 2 * _FRAGMENT:  # matched whole only
                at = text.find(key)
                while at != -1:
                    spans.append((at, at + len(key)))
                    at = text.find(key, at + 1)
                continue
            head, tail = key[:_FRAGMENT], key[-_FRAGMENT:]
            for probe, from_end in ((head, False), (tail, True)):
                at = text.find(probe)
                while at != -1:
                    if from_end:  # grow leftwards while the text agrees with the key
                        start, n = at, len(key) - _FRAGMENT
                        while start > 0 and n > 0 and text[start - 1] == key[n - 1]:
                            start, n = start - 1, n - 1
                        spans.append((start, at + _FRAGMENT))
                    else:  # grow rightwards (a whole key is found this way too)
                        end, n = at + _FRAGMENT, _FRAGMENT
                        while end < len(text) and n < len(key) and text[end] == key[n]:
                            end, n = end + 1, n + 1
                        spans.append((at, end))
                    at = text.find(probe, at + 1)
        return spans

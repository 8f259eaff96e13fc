"""Secret redaction: the last gate before anything is written to disk.

`Redactor` owns one compiled regular expression made of the configured API
keys (as literals) and the shapes of common credentials (Anthropic, OpenAI,
AWS, GitHub, Slack and Google keys, `Bearer` / `x-api-key` header values and
PEM private key blocks). Every match becomes `[REDACTED]`, and so does a piece
of a configured key (its first or last 16 characters or more, as an output cut
in the middle of the key leaves it). `spans` says where the secrets are, so a
cut can be placed around them rather than through them.

Speed matters because every log record passes through here: every alternative
starts with a literal character or a small character class, so the regex
engine can skip ahead cheaply on text that holds no secrets. Word boundaries
that a look-behind would express are checked in the replacement function
instead, because a leading look-behind would disable that fast skip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"

# Shorter configured "secrets" are ignored: redacting e.g. "test" or "abc123"
# would mangle ordinary text and protect nothing.
_MIN_SECRET_LEN = 8
# A configured key's first or last this many characters, found alone, are taken for a piece of
# it (an output cut in the middle of the key); keys shorter than twice this are matched whole only.
_FRAGMENT = 16

# Credential shapes. Each must start with a literal (see the module docstring).
# The `(?=...\d)` look-aheads demand a digit so that ordinary hyphenated words
# ("sk-learn-style-identifier-names") are not taken for keys.
_PATTERNS: tuple[str, ...] = (
    # Anthropic (sk-ant-api03-..., sk-ant-admin01-...) and OpenAI (sk-..., sk-proj-..., sk-svcacct-...).
    r"sk-(?=[A-Za-z0-9_\-]{0,200}\d)[A-Za-z0-9_\-]{20,}",
    # AWS access key ids.
    r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}(?![0-9A-Za-z])",
    # GitHub tokens: classic personal, OAuth, user-to-server, server-to-server, refresh; fine-grained.
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{22,}",
    # Slack tokens.
    r"xox[abprse]-[A-Za-z0-9\-]{10,}",
    # Google API keys.
    r"AIza[0-9A-Za-z_\-]{35}",
    # Header values (the header name is kept, see _HEADER). One alternative per
    # first letter's case, so that each starts with a literal.
    r"B(?i:earer[ \t]+)[A-Za-z0-9._~+/\-]{16,}=*",
    r"b(?i:earer[ \t]+)[A-Za-z0-9._~+/\-]{16,}=*",
    r"X(?i:-api-key[\"']?[ \t]*[:=][ \t]*[\"']?)[A-Za-z0-9._~+/\-]{16,}=*",
    r"x(?i:-api-key[\"']?[ \t]*[:=][ \t]*[\"']?)[A-Za-z0-9._~+/\-]{16,}=*",
    # PEM private keys, including a block cut off before its END line (a truncated output).
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
)


# The part of a header match that is kept: the header name and separator.
_HEADER = re.compile(r"(?i)(?:bearer[ \t]+|x-api-key[\"']?[ \t]*[:=][ \t]*[\"']?)")


def _glued(text: str, start: int) -> bool:
    """True when the match at `start` continues a word ("disk-0123..." is not an OpenAI key)."""
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _merge(
    first: list[tuple[int, int, str]], second: list[tuple[int, int, str]]
) -> list[tuple[int, int, str]]:
    """Both lists of spans in order, an overlapping pair joined into one span."""
    out: list[tuple[int, int, str]] = []
    for start, end, replacement in sorted(first + second):
        if out and start < out[-1][1]:
            prev = out[-1]
            # Joined: a kept header name (in the earlier replacement) stays.
            out[-1] = (prev[0], max(prev[1], end), prev[2] if end <= prev[1] else REDACTED)
            continue
        out.append((start, end, replacement))
    return out


class Redactor:
    """Replaces known secrets and credential-shaped strings with `[REDACTED]`.

    `secrets` are the configured API keys; values shorter than 8 characters
    (and empty/None-ish ones) are ignored.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        literals = sorted({s for s in secrets if s and len(s) >= _MIN_SECRET_LEN}, key=len, reverse=True)
        self._literals = frozenset(literals)
        # Literals first and longest first: a configured key wins over a shape
        # that would match only part of it.
        parts = [re.escape(s) for s in literals] + list(_PATTERNS)
        self._regex = re.compile("|".join(parts))

    def redact(self, text: str) -> str:
        """`text` with every secret replaced; the same object when nothing matched."""
        found = self._matches(text)
        if not found:
            return text
        pieces: list[str] = []
        last = 0
        for start, end, replacement in found:
            pieces.append(text[last:start])
            pieces.append(replacement)
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets in `text` are (start, end), in order: what `redact` would replace."""
        return [(start, end) for start, end, _ in self._matches(text)]

    def _matches(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, replacement) of every secret, in order, not overlapping."""
        if not text:
            return []
        found: list[tuple[int, int, str]] = []
        pos = 0
        while (match := self._regex.search(text, pos)) is not None:
            replacement = self._replacement(match, text)
            if replacement is None:
                # Rejected (glued to a longer word): look again one character on,
                # so a configured key inside the rejected span is still found.
                pos = match.start() + 1
                continue
            found.append((match.start(), match.end(), replacement))
            pos = match.end()
        if self._literals:
            found = _merge(found, self._fragments(text))
        return found

    def _fragments(self, text: str) -> list[tuple[int, int, str]]:
        """Pieces of a configured key: its first or last `_FRAGMENT` characters or more, as a cut
        output leaves them (the rest of the key fell in the part that was left out)."""
        spans: list[tuple[int, int, str]] = []
        for key in self._literals:
            if len(key) < 2 * _FRAGMENT:
                continue
            head, tail = key[:_FRAGMENT], key[-_FRAGMENT:]
            for probe, from_end in ((head, False), (tail, True)):
                at = text.find(probe)
                while at != -1:
                    if from_end:  # grow leftwards while the text agrees with the key
                        start, n = at, len(key) - _FRAGMENT
                        while start > 0 and n > 0 and text[start - 1] == key[n - 1]:
                            start, n = start - 1, n - 1
                        spans.append((start, at + _FRAGMENT, REDACTED))
                    else:  # grow rightwards
                        end, n = at + _FRAGMENT, _FRAGMENT
                        while end < len(text) and n < len(key) and text[end] == key[n]:
                            end, n = end + 1, n + 1
                        spans.append((at, end, REDACTED))
                    at = text.find(probe, at + 1)
        return sorted(spans)

    def redact_json(self, obj: Any) -> Any:
        """A deep copy of a JSON-like value with every string (keys included) redacted."""
        if isinstance(obj, str):
            return self.redact(obj)
        if isinstance(obj, dict):
            return {self.redact(k) if isinstance(k, str) else k: self.redact_json(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.redact_json(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.redact_json(v) for v in obj)
        return obj

    def _replacement(self, match: re.Match[str], text: str) -> str | None:
        """What replaces `match`, or None when it is not a secret after all."""
        found = match.group(0)
        if found in self._literals:
            return REDACTED
        if found.startswith("-----BEGIN"):
            return REDACTED
        if _glued(text, match.start()):
            return None
        header = _HEADER.match(found)
        if header:
            return header.group(0) + REDACTED
        return REDACTED

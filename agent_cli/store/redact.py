"""Secret redaction: the last gate before anything is written to disk.

`Redactor` owns one compiled regular expression made of the configured API
keys (as literals) and the shapes of common credentials (Anthropic, OpenAI,
AWS, GitHub, Slack and Google keys, `Bearer` / `x-api-key` header values and
PEM private key blocks). Every match becomes `[REDACTED]`.

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
        if not text:
            return text
        pieces: list[str] = []
        last = pos = 0
        while (match := self._regex.search(text, pos)) is not None:
            replacement = self._replacement(match, text)
            if replacement is None:
                # Rejected (glued to a longer word): look again one character on,
                # so a configured key inside the rejected span is still found.
                pos = match.start() + 1
                continue
            pieces.append(text[last : match.start()])
            pieces.append(replacement)
            last = pos = match.end()
        if not pieces:
            return text
        pieces.append(text[last:])
        return "".join(pieces)

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

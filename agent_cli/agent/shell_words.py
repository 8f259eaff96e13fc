"""A command line as bash parses it, for the allow-list: one *plain* simple command, or nothing.

A line is *plain* when bash would run it as exactly one simple command that starts nothing else
and writes nowhere the command itself does not choose:

- no second command (`;` `&&` `||` `|` `&` a newline), no subshell, group, function, loop or `!`;
- no command or process substitution (`$(..)`, backquotes, `<(..)`, `>(..)`), no arithmetic
  (`$((..))`, `$[..]`: array subscripts in it can run substitutions), no parameter expansion
  other than a plain `$name` / `${name}` / `$1` / `$@` (operators such as `${x:-$(id)}` or
  `${x@P}` can run code);
- no redirection or here-document, no leading `name=value` (it could set PATH or LD_PRELOAD);
- no control character but tab (form feed, `\\x1c`, `\\v`, `\\r`, newline ...), and none of the
  invisible characters a person reading the line cannot see (NBSP and other non-ASCII spaces,
  zero-width and bidi format characters, lone surrogates).

The words are bashlex's (`bashlex` is a port of bash's own parser): `text` is the word after
quote removal, `source` what the line says. A word is *literal* when bash reads it as written:
its source is its text and holds only characters no shell expands (letters, digits, `_@%+=:,./-`).
Allow-list rules compare literal words only, so `"git" status`, `\\ls` and `ls${IFS}x` never
match `git status` or `ls`, and neither does `./ls`.

Anything the parser cannot read, or reads as something else (it raises on `time`, `coproc`,
`[[`, arithmetic and unbalanced quotes, and overflows its stack on deep nesting), is not plain:
not knowing how bash reads a line means asking. Lines over `MAX_CHARS` are not parsed at all.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_CHARS", "PlainCommand", "Word", "invisible_characters", "plain_command"]

# bashlex is pure Python (a 16 KiB line takes about 50 ms): this bounds what one check costs.
MAX_CHARS = 16 * 1024

_LITERAL = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
# The expansions that run nothing: a name, a positional parameter, or a special parameter.
_PLAIN_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]")
_HARMLESS_WORD_PARTS = frozenset({"tilde"})


@dataclass(frozen=True, slots=True)
class Word:
    text: str  # after quote removal, as bash passes it (expansions aside)
    source: str  # as written in the line

    @property
    def literal(self) -> bool:
        return self.source == self.text and _LITERAL.fullmatch(self.source) is not None


@dataclass(frozen=True, slots=True)
class PlainCommand:
    words: tuple[Word, ...]


def invisible_characters(text: str) -> bool:
    """Whether `text` holds a character bash or a reader would take differently from a space-free
    printable one: control characters but tab, format characters (zero-width, bidi), separators
    other than the ASCII space (NBSP, U+2028 ...) and lone surrogates."""
    for ch in text:
        if ch == "\t" or ch == " ":
            continue
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Zl", "Zp", "Zs"):
            return True
    return False


def plain_command(line: str) -> PlainCommand | None:
    """The words of `line` when it is one plain simple command (see the module docstring), else None."""
    if not line.strip() or len(line) > MAX_CHARS or invisible_characters(line):
        return None
    import bashlex  # 75 ms to import: only when a rule is checked

    try:
        nodes = bashlex.parse(line)
    except Exception:  # bashlex raises many types on what it cannot read (ParsingError,
        return None  # NotImplementedError, MatchedPairError, RecursionError ...): all mean "ask"
    if len(nodes) != 1 or nodes[0].kind != "command":
        return None
    words = []
    for part in nodes[0].parts:
        if part.kind != "word" or not _runs_nothing(part):
            return None  # an assignment, a redirection (here-documents included), or anything new
        start, end = part.pos
        words.append(Word(part.word, line[start:end]))
    return PlainCommand(tuple(words)) if words else None


def _runs_nothing(word: Any) -> bool:
    """Whether a bashlex word node expands nothing that can run code."""
    for part in getattr(word, "parts", None) or ():
        if part.kind == "parameter":
            # bashlex leaves the value out for `$'..'`, `$".."` and a lone `$` it half reads
            value = getattr(part, "value", None)
            if not isinstance(value, str) or _PLAIN_PARAMETER.fullmatch(value) is None:
                return False
        elif part.kind not in _HARMLESS_WORD_PARTS:
            return False  # command and process substitutions, and any kind bashlex adds later
    return True

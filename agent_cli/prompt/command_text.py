"""A Markdown command's text: its front matter, its body, and the body expanded for one invocation.

A *command file* is Markdown, optionally opened by *front matter*: a first line `---`, lines of
`key: value`, a closing line `---`. The *body* is the rest. The front matter is read the way
Claude Code's files are written rather than as full YAML: `argument-hint: [pr] [priority]` is a
string, not a YAML list (or a YAML error). A value may be quoted, or folded over indented lines
after `key: >` / `key: |`. Keys other than `description` and `argument-hint` are kept but mean
nothing here (`allowed-tools`, `model`: a file cannot approve tools or switch the model).

The *arguments* are what follows `/name` on the line. *Expanding* the body replaces, in one pass
over the body (a replacement is never scanned again):

    $ARGUMENTS       the arguments as typed
    $ARGUMENTS[N]    the word at index N, counting from 0
    $N               the N-th word, counting from 1 ($1 is the first); but when the body uses
                     $0 anywhere, it was written for Claude Code's newer convention, where $0 is
                     the first word, and $N counts from 0 throughout that body

Words are split as a shell would (quotes group, and are removed); unbalanced quotes fall back to
splitting at whitespace. A placeholder whose word is missing stays as it is written (a body that
says "$5 a month" keeps it). When arguments were given and no placeholder received any, they are
appended after a blank line as `ARGUMENTS: ...`, so nothing typed is lost (Claude Code does the
same). Nothing else in the body or the arguments is changed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

__all__ = ["CommandText", "Expansion", "expand", "parse_command_text", "shell_lines", "split_words"]

_FENCE = re.compile(r"---[ \t]*")
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)[ \t]*:(.*)")
_PLACEHOLDER = re.compile(r"\$(?:ARGUMENTS(?:\[(\d+)\])?|(\d+))")
_ZERO = re.compile(r"\$0(?!\d)")
# Claude Code runs `!`cmd`` (at a line start or after whitespace) and ```! fenced blocks.
_SHELL = re.compile(r"(?:^|(?<=\s))!`[^`\n]+`|^```!", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CommandText:
    """A command file's text split into its front matter (`meta`) and its `body`."""

    body: str
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def description(self) -> str:
        """The front matter's `description`, else the body's first line that holds words."""
        given = " ".join(self.meta.get("description", "").split())
        if given:
            return given
        for line in self.body.splitlines():
            words = " ".join(line.strip().lstrip("#").split())
            if words:
                return words
        return ""

    @property
    def argument_hint(self) -> str:
        return " ".join(self.meta.get("argument-hint", "").split())


@dataclass(frozen=True, slots=True)
class Expansion:
    text: str  # what is sent to the model
    appended: bool  # the arguments were appended as `ARGUMENTS: ...` (no placeholder took them)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _front_matter(lines: list[str]) -> dict[str, str]:
    meta: dict[str, str] = {}
    key = ""
    folded: list[str] = []
    for line in lines:
        if key and (line.startswith((" ", "\t")) or not line.strip()):
            folded.append(line.strip())
            continue
        if key:
            meta[key] = " ".join(w for w in folded if w)
            key = ""
        match = _KEY.fullmatch(line.rstrip())
        if match is None:
            continue  # a comment, a list item of a key we do not read: skipped
        name, value = match.group(1).lower(), match.group(2).strip()
        if value in (">", "|", ">-", "|-", ">+", "|+"):
            key, folded = name, []
        else:
            meta[name] = _unquote(value)
    if key:
        meta[key] = " ".join(w for w in folded if w)
    return meta


def parse_command_text(text: str) -> CommandText:
    """Front matter and body of a command file's text (a BOM already removed by the reader).

    The body keeps every character of the file after the front matter, but the blank lines that
    open it and the whitespace that ends it (an editor's last newline)."""
    lines = text.splitlines(keepends=True)
    meta: dict[str, str] = {}
    if lines and _FENCE.fullmatch(lines[0].rstrip("\r\n")):
        for i in range(1, len(lines)):
            if _FENCE.fullmatch(lines[i].rstrip("\r\n")) or lines[i].rstrip("\r\n") == "...":
                meta = _front_matter([ln.rstrip("\r\n") for ln in lines[1:i]])
                text = "".join(lines[i + 1 :])
                break
        # No closing line: not front matter, the whole file is the body.
    body = re.sub(r"\A(?:[ \t]*\r?\n)+", "", text).rstrip()
    return CommandText(body, meta)


def split_words(arguments: str) -> list[str]:
    """The arguments' words as a shell splits them; at whitespace when the quotes do not balance."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def expand(body: str, arguments: str) -> Expansion:
    """`body` with its placeholders replaced by `arguments` (see the module docstring)."""
    words = split_words(arguments) if _PLACEHOLDER.search(body) else []
    first = 0 if _ZERO.search(body) else 1
    received = False

    def replace(match: re.Match[str]) -> str:
        nonlocal received
        index, number = match.group(1), match.group(2)
        if index is None and number is None:
            received = True
            return arguments
        at = int(index) if index is not None else int(number) - first
        if 0 <= at < len(words):
            received = True
            return words[at]
        return match.group()

    text = _PLACEHOLDER.sub(replace, body)
    if arguments and not received:
        return Expansion((f"{text}\n\n" if text else "") + f"ARGUMENTS: {arguments}", True)
    return Expansion(text, False)


def shell_lines(body: str) -> bool:
    """Whether `body` holds Claude Code's shell injections (`` !`cmd` ``, a ```! block), which
    are sent as the text they are and never run."""
    return _SHELL.search(body) is not None

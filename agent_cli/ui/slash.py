"""Slash commands as typed: the command table, parsing a line, and the closest-match hint.

Pure values and functions, no terminal. `parse` reads a typed line; what each
command does is `commands.py`, what it shows is computed in `reports.py`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["COMMANDS", "CommandSpec", "SlashCommand", "closest", "parse"]


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    args: str
    help: str


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "", "show this help"),
    CommandSpec("compact", "[focus]", "summarize the conversation now, steered by an optional focus"),
    CommandSpec("context", "", "what fills the context window, and where auto-compaction fires"),
    CommandSpec("clear", "", "start over with an empty context (the transcript keeps everything)"),
    CommandSpec("model", "[name]", "show the current model and known models, or switch to another"),
    CommandSpec("cost", "", "tokens and dollars per model in this session"),
    CommandSpec("transcripts", "", "this project's sessions"),
    CommandSpec("resume", "[id]", "list sessions, or switch to the session with this id (or prefix)"),
    CommandSpec("exit", "", "leave (Ctrl-D works too)"),
)
_NAMES = tuple(c.name for c in COMMANDS)
_ALIASES = {"quit": "exit", "q": "exit", "?": "help", "h": "help"}


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A typed `/name arg`. `known` is False for a name no command has."""

    name: str
    arg: str = ""
    known: bool = True


def parse(line: str) -> SlashCommand | None:
    """The command on `line`, or None when the line is a message for the model.

    A line starting with a path (`/etc/hosts: what is this?`) is a message: its
    first word has a second `/` in it.
    """
    text = line.strip()
    if not text.startswith("/") or text == "/":
        return None
    head, _, arg = text[1:].partition(" ")
    if "/" in head or not head:
        return None
    name = _ALIASES.get(head.lower(), head.lower())
    return SlashCommand(name, arg.strip(), name in _NAMES)


def closest(name: str) -> str | None:
    """The command the user most likely meant by an unknown `name`."""
    prefixed = [n for n in _NAMES if n.startswith(name.lower())]
    if prefixed:
        return prefixed[0]
    matches = difflib.get_close_matches(name.lower(), _NAMES, n=1, cutoff=0.5)
    return matches[0] if matches else None

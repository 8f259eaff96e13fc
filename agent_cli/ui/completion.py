"""Completion at the REPL prompt: slash commands (built-in and Markdown) and their arguments, and paths.

Cheap by design: one directory listing per keystroke, capped, hidden files
only when asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from agent_cli.core.text import clean
from agent_cli.prompt.command_files import Catalog
from agent_cli.ui.commands import COMMANDS
from agent_cli.ui.custom_commands import completion_rows
from agent_cli.ui.reports import known_models

__all__ = ["MAX_PATH_COMPLETIONS", "PathAndCommandCompleter"]

MAX_PATH_COMPLETIONS = 200


class PathAndCommandCompleter(Completer):
    """Slash commands (and /model, /resume arguments) at the start; paths after `@` or with a `/`.

    A Markdown command shows its argument hint after its name and its description (and where it
    comes from) beside it; `/test` offers `/frontend:test` too."""

    def __init__(
        self,
        root: Path,
        sessions: Callable[[], Iterable[str]] = lambda: (),
        commands: Callable[[], Catalog] = Catalog,
    ) -> None:
        self.root = root
        self.sessions = sessions
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and "\n" not in text:
            head, space, arg = text[1:].partition(" ")
            if not space:
                for spec in COMMANDS:
                    if spec.name.startswith(head.lower()):
                        yield Completion(f"/{spec.name}", -len(text), display_meta=spec.help)
                for inserted, shown, meta in completion_rows(self.commands(), head):
                    yield Completion(inserted, -len(text), display=shown, display_meta=meta)
                return
            completes = next((c.completes for c in COMMANDS if c.name == head), "")
            if completes and " " not in arg:
                pool = known_models() if completes == "model" else list(self.sessions())
                for name in pool:
                    if name.startswith(arg):
                        yield Completion(name, -len(arg))
                return
        word = text.split()[-1] if text and not text[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])
        elif "/" in word or word.startswith(("./", "../", "~")):
            yield from self._paths(word)

    def _paths(self, word: str) -> Iterator[Completion]:
        folder, _, prefix = word.rpartition("/")
        base = Path(os.path.expanduser(folder)) if folder.startswith("~") else self.root / folder
        if word.startswith("/"):
            base = Path(folder or "/")
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            hidden = entry.name.startswith(".") and not prefix.startswith(".")
            # A name that is not UTF-8 cannot be typed back as text: not offered.
            if hidden or not entry.name.startswith(prefix) or clean(entry.name) != entry.name:
                continue
            name = entry.name + ("/" if entry.is_dir() else "")
            yield Completion(name, -len(prefix))
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return

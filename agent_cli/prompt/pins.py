"""Pins: the user's instructions that every request carries word for word, whatever the engine does.

A pin is text the user pinned (`/pin TEXT`, a REPL line starting with `#`, `--pin TEXT`) or that the
project's `.agent/pins.md` holds (`/pin --project TEXT` adds to it). The pins go in one section at
the end of the system prompt (`section`): the frame, which no layer clears, condenses, cuts or
drops, and a stable prefix the prompt cache keeps. Each pin is put there byte for byte.

The session's own pins live in its log (a "pins" state record with the list as it stands, so
`--continue` and `--resume` bring them back); the project's are read from the file each session.
`.agent/pins.md` is a Markdown list: every line that starts with `- ` is a pin, anything else
(a heading, a note) is left alone, so a person may keep it by hand. The file came with the
repository, so it is read as `AGENTS.md` is (`store/file_reads.py`): only a regular file inside the
project, at most `MAX_PINS_BYTES`; anything else (a link to `/dev/zero`, a FIFO, 23 MB) is not read
at all, and `PinBoard.notice` says so in one line. A pin is carried byte for byte, so a file over
the cap is refused whole rather than cut through a pin.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.errors import CommandError
from agent_cli.store.file_reads import UnreadableFile, describe_size, read_project_file
from agent_cli.store.log_records import LogRecord, StateRecord
from agent_cli.tools.base import ToolError
from agent_cli.tools.replace import replace_file

__all__ = [
    "MAX_PINS_BYTES",
    "PROJECT_PINS",
    "Pin",
    "PinBoard",
    "ProjectPins",
    "logged_pins",
    "read_project_pins",
    "section",
]

PROJECT_PINS = Path(".agent") / "pins.md"
MAX_PINS_BYTES = 64 * 1024  # every request carries the pins: a page of rules, not a book
TOPIC = "pins"  # the session log's state record
_ITEM = "- "
_FILE_HEAD = (
    "# Pinned instructions\n\nEvery agent-cli session in this project carries these, word for word.\n\n"
)
INTRO = (
    "Pinned instructions. The user pinned these; they hold for the whole conversation, word for "
    "word, whatever an earlier part of it or a condensed record says:"
)


@dataclass(frozen=True, slots=True)
class Pin:
    text: str
    project: bool = False  # from (or saved to) the project's .agent/pins.md


def section(pins: Sequence[Pin]) -> str:
    """The system prompt's pins section: "" without pins, else the intro and each pin, numbered."""
    if not pins:
        return ""
    items = "\n".join(f"{i}. {pin.text}" for i, pin in enumerate(pins, 1))
    return f"\n\n{INTRO}\n\n{items}"


@dataclass(frozen=True, slots=True)
class ProjectPins:
    lines: tuple[str, ...]  # the file's lines, as written (empty when there is no file)
    notice: str | None = None  # why the file was not read, one line for the user

    @property
    def pins(self) -> list[str]:
        lines = "".join(self.lines).splitlines()
        return [line[len(_ITEM) :] for line in lines if line.startswith(_ITEM) and line[2:].strip()]


def read_project_pins(root: Path) -> ProjectPins:
    """`.agent/pins.md` as a regular file inside `root` holds it; no lines when it does not exist,
    and a notice (nothing read) when it is not a regular file inside the project or is too large."""
    path = root / PROJECT_PINS
    if not os.path.lexists(path):
        return ProjectPins(())
    try:
        read = read_project_file(root, path, limit=MAX_PINS_BYTES)
    except UnreadableFile as exc:
        return ProjectPins((), f"{PROJECT_PINS} was not read: it {exc}")
    if read.more:
        cap = describe_size(MAX_PINS_BYTES)
        return ProjectPins((), f"{PROJECT_PINS} was not read: it is larger than {cap}, the cap on pins")
    text = read.data.decode("utf-8", errors="replace")
    return ProjectPins(tuple(text.splitlines(keepends=True)))


def logged_pins(records: Sequence[LogRecord]) -> list[str]:
    """The session's own pins as its log (`records`) last recorded them."""
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    if last is None:
        return []
    pins = last.data.get("pins")
    return [p for p in pins if isinstance(p, str)] if isinstance(pins, list) else []


class PinBoard:
    """A session's pins: the project's file, then the session's own, each text once."""

    def __init__(self, root: Path, own: Iterable[str] = ()) -> None:
        self._root = root
        self._pins: list[Pin] = []
        found = read_project_pins(root)
        self.notice = found.notice  # the project's file was not read, and why
        for text in found.pins:
            self._take(Pin(text, project=True))
        for text in own:
            self._take(Pin(text))

    @property
    def pins(self) -> tuple[Pin, ...]:
        return tuple(self._pins)

    def own(self) -> list[str]:
        """The session's own pins (what its log records)."""
        return [p.text for p in self._pins if not p.project]

    def add(self, text: str, *, project: bool = False) -> Pin | None:
        """Pin `text` (saved to .agent/pins.md too with `project`); None when it is pinned already
        (a pin already in the session is saved to the file when `project` asks for it)."""
        if not text.strip():
            raise CommandError("/pin needs the instruction to pin: /pin never use tabs")
        if project and ("\n" in text or "\r" in text):
            raise CommandError(f"a project pin is one line ({PROJECT_PINS} holds one pin per line)")
        found = next((i for i, p in enumerate(self._pins) if p.text == text), None)
        if found is not None and (not project or self._pins[found].project):
            return None
        if project:
            self._save([*self._file().pins, text])
        pin = Pin(text, project=project)
        if found is not None:
            self._pins[found] = pin
        else:
            self._pins.append(pin)
        return pin

    def remove(self, number: int) -> Pin:
        """Unpin the `number`th pin (from 1, as `/pins` lists them); a project pin leaves the file too."""
        if not 1 <= number <= len(self._pins):
            raise CommandError(f"no pin {number}: /pins lists {len(self._pins)}")
        pin = self._pins[number - 1]
        if pin.project:
            self._save([t for t in self._file().pins if t != pin.text])
        return self._pins.pop(number - 1)

    def _file(self) -> ProjectPins:
        """The project's file as it stands, for a change to it; CommandError when it cannot be read."""
        found = read_project_pins(self._root)
        if found.notice:
            raise CommandError(found.notice)
        return found

    def _take(self, pin: Pin) -> None:
        if all(p.text != pin.text for p in self._pins):
            self._pins.append(pin)

    def _save(self, texts: list[str]) -> None:
        """Rewrite .agent/pins.md's list, keeping every other line of it as the user wrote it."""
        path = self._root / PROJECT_PINS
        old = list(self._file().lines) or [_FILE_HEAD]
        kept = [line for line in old if not line.startswith(_ITEM)]
        if kept and not kept[-1].endswith("\n"):
            kept[-1] += "\n"
        body = "".join(kept) + "".join(f"{_ITEM}{t}\n" for t in texts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, body.encode("utf-8"), str(PROJECT_PINS))
        except ToolError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"cannot write {PROJECT_PINS}: {exc.strerror or exc}") from None

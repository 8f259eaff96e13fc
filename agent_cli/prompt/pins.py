"""Pins: the user's instructions that every request carries word for word, whatever the engine does.

A pin is text the user pinned (`/pin TEXT`, a REPL line starting with `#`, `--pin TEXT`) or that the
project's `.agent/pins.md` holds (`/pin --project TEXT` adds to it). The pins go in one section at
the end of the system prompt (`section`): the frame, which no layer clears, condenses, cuts or
drops, and a stable prefix the prompt cache keeps. Each pin is put there byte for byte.

The session's own pins live in its log (a "pins" state record with the list as it stands, so
`--continue` and `--resume` bring them back); the project's are read from the file each session.
`.agent/pins.md` is a Markdown list: every line that starts with `- ` is a pin, anything else
(a heading, a note) is left alone, so a person may keep it by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.errors import ConfigError
from agent_cli.store.log_records import LogRecord, StateRecord
from agent_cli.tools.base import ToolError
from agent_cli.tools.replace import replace_file

__all__ = ["PROJECT_PINS", "Pin", "PinBoard", "logged_pins", "read_project_pins", "section"]

PROJECT_PINS = Path(".agent") / "pins.md"
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


def read_project_pins(root: Path) -> list[str]:
    """The pins `.agent/pins.md` holds, in its order; none when it does not exist or cannot be read."""
    try:
        text = (root / PROJECT_PINS).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line[len(_ITEM) :] for line in text.splitlines() if line.startswith(_ITEM) and line[2:].strip()]


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
        for text in read_project_pins(root):
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
            raise ConfigError("/pin needs the instruction to pin: /pin never use tabs")
        if project and ("\n" in text or "\r" in text):
            raise ConfigError(f"a project pin is one line ({PROJECT_PINS} holds one pin per line)")
        found = next((i for i, p in enumerate(self._pins) if p.text == text), None)
        if found is not None and (not project or self._pins[found].project):
            return None
        if project:
            self._save([*read_project_pins(self._root), text])
        pin = Pin(text, project=project)
        if found is not None:
            self._pins[found] = pin
        else:
            self._pins.append(pin)
        return pin

    def remove(self, number: int) -> Pin:
        """Unpin the `number`th pin (from 1, as `/pins` lists them); a project pin leaves the file too."""
        if not 1 <= number <= len(self._pins):
            raise ConfigError(f"no pin {number}: /pins lists {len(self._pins)}")
        pin = self._pins.pop(number - 1)
        if pin.project:
            kept = [t for t in read_project_pins(self._root) if t != pin.text]
            self._save(kept)
        return pin

    def _take(self, pin: Pin) -> None:
        if all(p.text != pin.text for p in self._pins):
            self._pins.append(pin)

    def _save(self, texts: list[str]) -> None:
        """Rewrite .agent/pins.md's list, keeping every other line of it as the user wrote it."""
        path = self._root / PROJECT_PINS
        try:
            old = path.read_text(encoding="utf-8").splitlines(keepends=True)
        except FileNotFoundError:
            old = [_FILE_HEAD]
        except OSError as exc:
            raise ConfigError(f"cannot read {PROJECT_PINS}: {exc.strerror or exc}") from None
        kept = [line for line in old if not line.startswith(_ITEM)]
        if kept and not kept[-1].endswith("\n"):
            kept[-1] += "\n"
        body = "".join(kept) + "".join(f"{_ITEM}{t}\n" for t in texts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, body.encode("utf-8"), str(PROJECT_PINS))
        except ToolError as exc:
            raise ConfigError(str(exc)) from None
        except OSError as exc:
            raise ConfigError(f"cannot write {PROJECT_PINS}: {exc.strerror or exc}") from None

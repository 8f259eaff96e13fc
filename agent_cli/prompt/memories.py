"""Memories: what the model asked to remember (the `remember` tool) and the user approved, saved.

A memory is untrusted model text, so it is bounded before it is written anywhere (`bounded`): one
line of at most `MAX_MEMORY_CHARS` characters, every control character (newline and tab too) written
out as `\\x..` (core/text.one_line), never cut (too long is refused whole, the model may shorten it).

Where it goes (`Memories.save`):

- scope "project" (the default): the project's pins, `.agent/pins.md` (prompt/pins.py writes it, with
  its rules: a regular file inside the project, one pin a line). Every later session here carries it
  word for word; this session's pins are not changed (its system prompt, and so the prompt cache,
  stay as they are).
- scope "user": the user's own memory file, `<config dir>/memory.md` (`$XDG_CONFIG_HOME/agent-cli`,
  else `~/.config/agent-cli`), the same Markdown list. Every later session of this user, in any
  project, has its items in the system prompt (`user_section`), at most `MAX_USER_BYTES` of it.

Saving is the tool's whole effect; the approver asks the user before every call (agent/approvals.py:
`remember` is asked each time, never covered by an "always" rule or the allow-list, and refused
headless without --yes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agent_cli.core.errors import CommandError
from agent_cli.core.text import one_line
from agent_cli.prompt.pins import PROJECT_PINS, PinBoard
from agent_cli.store.private_write import write_private
from agent_cli.store.user_dirs import config_dir
from agent_cli.tools.base import ToolError

__all__ = [
    "MAX_MEMORY_CHARS",
    "MAX_USER_BYTES",
    "USER_MEMORY_FILE",
    "Memories",
    "bounded",
    "user_memory_path",
]

MAX_MEMORY_CHARS = 500  # a fact or a rule, not a document
MAX_USER_BYTES = 16 * 1024  # the user's file, in every request of every project
USER_MEMORY_FILE = "memory.md"
_ITEM = "- "
_USER_HEAD = "# Memories\n\nagent-cli carries these in every session of this user (the remember tool).\n\n"
USER_INTRO = "Remembered for this user (their own memory file; they approved each item):"


def user_memory_path(env: Mapping[str, str]) -> Path:
    """The user's own memory file."""
    return config_dir(env) / USER_MEMORY_FILE


def bounded(text: str) -> str:
    """`text` as a memory is saved: stripped, on one line, controls written out; ToolError when it is
    empty or longer than MAX_MEMORY_CHARS."""
    line = one_line(text.strip())
    if not line:
        raise ToolError("remember needs the text to remember")
    if len(line) > MAX_MEMORY_CHARS:
        raise ToolError(
            f"a memory is at most {MAX_MEMORY_CHARS} characters (this one is {len(line):,}): shorten it"
        )
    return line


def _read_user(path: Path) -> str:
    """The user's memory file's text ("" when there is none); ToolError when it is not a plain file."""
    if not os.path.lexists(path):
        return ""
    if path.is_symlink() or not path.is_file():
        raise ToolError(f"{path} is not a regular file: nothing was saved")
    if path.stat().st_size > MAX_USER_BYTES:
        raise ToolError(f"{path} is over {MAX_USER_BYTES // 1024} KB: trim it (/memory) before adding more")
    return path.read_bytes().decode("utf-8", errors="replace")


def user_items(path: Path) -> list[str]:
    """The items of the user's memory file ([] when it is missing or unreadable)."""
    try:
        text = _read_user(path)
    except (ToolError, OSError):
        return []
    return [line[len(_ITEM) :] for line in text.splitlines() if line.startswith(_ITEM) and line[2:].strip()]


def user_section(path: Path) -> str:
    """The system prompt's section of the user's memories: "" without any."""
    items = user_items(path)
    if not items:
        return ""
    return f"\n\n{USER_INTRO}\n\n" + "\n".join(f"- {one_line(item)}" for item in items)


class Memories:
    """Saves approved memories for one project (`root`) and one user (`user_file`)."""

    def __init__(self, root: Path, user_file: Path) -> None:
        self.root = root
        self.user_file = user_file

    def save(self, text: str, scope: str = "project") -> str:
        """Save `text` (already approved) where `scope` says; the line the model is told. ToolError
        (nothing saved) for bad text, an unknown scope, or a file that cannot be written."""
        line = bounded(text)
        if scope == "user":
            return self._save_user(line)
        if scope != "project":
            raise ToolError(f'scope is "project" (the default) or "user", not {one_line(scope)!r}')
        try:
            added = PinBoard(self.root).add(line, project=True)
        except CommandError as exc:
            raise ToolError(f"nothing was saved: {exc}") from None
        where = f"the project's pins ({PROJECT_PINS})"
        if added is None:
            return f"Already remembered in {where}: nothing changed."
        return f"Saved to {where}: every later session in this project carries it word for word."

    def _save_user(self, line: str) -> str:
        path = self.user_file
        try:
            text = _read_user(path)
            if line in user_items(path):
                return f"Already remembered in the user's memory file ({path}): nothing changed."
            if not text:
                text = _USER_HEAD
            elif not text.endswith("\n"):
                text += "\n"
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_private(path, (text + f"{_ITEM}{line}\n").encode("utf-8"))
        except OSError as exc:
            raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from None
        return f"Saved to the user's memory file ({path}): every later session of this user carries it."

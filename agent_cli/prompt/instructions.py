"""Project instructions: `AGENTS.md` and `CLAUDE.md` at the project root.

The text returned here goes into the system prompt, each file under a heading
that names it (AGENTS.md first), within one character budget so a huge file
cannot crowd out the conversation. A file that is missing, unreadable or
binary is skipped; the same file under both names (a symlink) counts once.

The files came with the repository: one that is a link leading outside the
project (to `~/.aws/credentials`, say), a FIFO or a device is not read, and the
user is told why (`Instructions.notices`), as when a file is cut to the budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_cli.store.file_reads import UnreadableFile, read_project_file

__all__ = ["INSTRUCTION_FILES", "Instructions", "load_project_instructions", "read_project_instructions"]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")


@dataclass(frozen=True, slots=True)
class Instructions:
    text: str | None  # the system prompt's section, None when there is none
    notices: tuple[str, ...] = ()  # for the user: a file not read, or cut, and why


def _read_text(root: Path, path: Path, limit: int) -> str | None:
    """The file's text (at most `limit` characters, plus a little to know it was longer), or None.

    UnreadableFile when the repository shipped something that is not a file inside it.
    """
    try:
        # UTF-8 needs at most 4 bytes a character; one more character tells us it was cut.
        data = read_project_file(root, path, limit=4 * (limit + 1)).data
    except UnreadableFile as exc:
        if str(exc).startswith("cannot be read"):
            return None  # unreadable (mode 000, gone meanwhile): skipped as before
        raise
    if b"\x00" in data:
        return None  # binary
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # A read that stopped inside a multi-byte character is not binary.
        if exc.start < len(data) - 3:
            return None
        text = data[: exc.start].decode("utf-8-sig")
    return text


def _cut(text: str, budget: int, name: str) -> str:
    """`text` cut to `budget` characters at a line end when it can, with a note saying so."""
    if len(text) <= budget:
        return text
    head = text[:budget]
    newline = head.rfind("\n")
    if newline > budget // 2:
        head = head[:newline]
    return f"{head}\n\n[{name} was cut to its first {len(head):,} characters; read the file for the rest.]"


def read_project_instructions(root: Path | str, *, max_chars: int = 40_000) -> Instructions:
    """AGENTS.md then CLAUDE.md from `root`, each under a heading, and what the user should know."""
    root = Path(root)
    sections: list[str] = []
    notices: list[str] = []
    seen: set[Path] = set()
    remaining = max_chars
    for name in INSTRUCTION_FILES:
        path = root / name
        try:
            if not path.exists() or path.is_dir():
                continue  # missing, a dangling link, a folder: nothing to tell
            real = path.resolve()
        except OSError:
            continue
        if real in seen:
            continue
        seen.add(real)
        if remaining <= 0:
            sections.append(f"# {name}\n\n[{name} was left out: the instructions reached their size limit.]")
            notices.append(f"{name} was left out: instructions are capped at {max_chars:,} characters")
            continue
        try:
            text = _read_text(root, path, remaining)
        except UnreadableFile as exc:
            notices.append(f"{name} was not read: it {exc}")
            continue
        if text is None or not text.strip():
            continue
        body = _cut(text.strip(), remaining, name)
        if body != text.strip():
            notices.append(f"{name} was cut: instructions are capped at {max_chars:,} characters")
        remaining -= min(len(text.strip()), remaining)
        sections.append(f"# {name}\n\n{body}")
    return Instructions("\n\n".join(sections) if sections else None, tuple(notices))


def load_project_instructions(root: Path | str, *, max_chars: int = 40_000) -> str | None:
    """The system prompt's section of project instructions; None when there are none."""
    return read_project_instructions(root, max_chars=max_chars).text

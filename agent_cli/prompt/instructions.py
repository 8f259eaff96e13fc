"""Project instructions: `AGENTS.md` and `CLAUDE.md` at the project root.

The text returned here goes into the system prompt, each file under a heading
that names it (AGENTS.md first), within one character budget so a huge file
cannot crowd out the conversation. A file that is missing, unreadable or
binary is skipped; the same file under both names (a symlink) counts once.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["INSTRUCTION_FILES", "load_project_instructions"]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")


def _read_text(path: Path, limit: int) -> str | None:
    """The file's text (at most `limit` characters, plus a little to know it was longer), or None."""
    try:
        with path.open("rb") as f:
            # UTF-8 needs at most 4 bytes a character; one more character tells us it was cut.
            data = f.read(4 * (limit + 1))
    except OSError:
        return None
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


def load_project_instructions(root: Path | str, *, max_chars: int = 40_000) -> str | None:
    """AGENTS.md then CLAUDE.md from `root`, each under a heading; None when there are none."""
    sections: list[str] = []
    seen: set[Path] = set()
    remaining = max_chars
    for name in INSTRUCTION_FILES:
        path = Path(root) / name
        try:
            if not path.is_file():
                continue
            real = path.resolve()
        except OSError:
            continue
        if real in seen:
            continue
        seen.add(real)
        if remaining <= 0:
            sections.append(f"# {name}\n\n[{name} was left out: the instructions reached their size limit.]")
            continue
        text = _read_text(path, remaining)
        if text is None or not text.strip():
            continue
        body = _cut(text.strip(), remaining, name)
        remaining -= min(len(text.strip()), remaining)
        sections.append(f"# {name}\n\n{body}")
    return "\n\n".join(sections) if sections else None

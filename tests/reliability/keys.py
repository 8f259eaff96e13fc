"""The sweep: every file the agent wrote, searched for the API keys, whole or in part.

"In part" is a run of 16 characters from either end of a key (what the redactor also hunts): a key
cut in two by an output limit must not leave a usable piece behind. The agent writes under the
project's `.transcripts/` and the home given to it (state, crash logs); files the case itself
wrote as input (configs, the project's own files) are not the agent's and are not swept.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e import ANTHROPIC_KEY, OPENAI_KEY

PIECE = 16
KEYS = (ANTHROPIC_KEY, OPENAI_KEY)


def pieces(key: str) -> list[bytes]:
    return [key.encode(), key[:PIECE].encode(), key[-PIECE:].encode()]


def written_by_the_agent(where: Path) -> list[Path]:
    places = [*where.glob("**/.transcripts"), where / "home"]
    found: list[Path] = []
    for place in places:
        if place.is_dir():
            found.extend(
                p for p in place.rglob("*") if p.is_file() and not p.is_symlink() and p.name != "config.toml"
            )
    return found


def sweep(where: Path) -> list[str]:
    """`path: piece` for each key piece found in a file the agent wrote under `where`."""
    leaks = []
    for path in written_by_the_agent(where):
        try:
            data = path.read_bytes()
        except OSError:
            continue  # a case made it unreadable on purpose
        for key in KEYS:
            for piece in pieces(key):
                if piece in data:
                    leaks.append(f"{path.relative_to(where)}: {piece.decode()[:4]}...")
    return leaks

"""Project instructions from AGENTS.md / CLAUDE.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.prompt.instructions import load_project_instructions


def write(root: Path, name: str, data: str | bytes) -> None:
    path = root / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, None),
        ({"AGENTS.md": "Use ruff.\n"}, "# AGENTS.md\n\nUse ruff."),
        ({"CLAUDE.md": "Run pytest -q."}, "# CLAUDE.md\n\nRun pytest -q."),
        ({"CLAUDE.md": "second", "AGENTS.md": "first"}, "# AGENTS.md\n\nfirst\n\n# CLAUDE.md\n\nsecond"),
        ({"AGENTS.md": "   \n\n", "CLAUDE.md": "only me"}, "# CLAUDE.md\n\nonly me"),
        ({"AGENTS.md": b"\x7fELF\x00\x01\x02binary", "CLAUDE.md": "text"}, "# CLAUDE.md\n\ntext"),
        ({"AGENTS.md": b"\xff\xfe\xfa not utf-8 at all, really not"}, None),
        ({"AGENTS.md": "\ufeffWith a BOM"}, "# AGENTS.md\n\nWith a BOM"),
        ({"agents.txt": "not an instruction file"}, None),
    ],
)
def test_files_found_ordered_and_skipped(
    tmp_path: Path, files: dict[str, str | bytes], expected: str | None
) -> None:
    for name, data in files.items():
        write(tmp_path, name, data)
    assert load_project_instructions(tmp_path) == expected


def test_long_file_is_cut_at_a_line_with_a_note(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "".join(f"rule {i}: be careful\n" for i in range(1000)))
    out = load_project_instructions(tmp_path, max_chars=500)
    assert out is not None
    body, note = out.rsplit("\n\n", 1)
    assert note.startswith("[AGENTS.md was cut to its first") and "read the file for the rest" in note
    assert body.endswith("be careful")  # cut at a line end
    assert len(body) <= 500 + len("# AGENTS.md\n\n")


def test_budget_is_shared_and_a_file_left_out_is_named(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "a" * 300)
    write(tmp_path, "CLAUDE.md", "c" * 300)
    out = load_project_instructions(tmp_path, max_chars=400)
    assert out is not None
    assert out.count("a") >= 300 and "c" * 100 in out and "c" * 101 not in out
    out = load_project_instructions(tmp_path, max_chars=300)
    assert out is not None
    assert "[CLAUDE.md was left out" in out and "ccc" not in out


def test_symlinked_twin_counts_once(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "shared rules")
    os.symlink("AGENTS.md", tmp_path / "CLAUDE.md")
    assert load_project_instructions(tmp_path) == "# AGENTS.md\n\nshared rules"


def test_unreadable_and_directory_entries_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").mkdir()
    os.symlink(tmp_path / "missing", tmp_path / "CLAUDE.md")  # dangling
    assert load_project_instructions(tmp_path) is None


def test_multibyte_text_cut_inside_a_character_is_not_binary(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "日本語のルール。" * 200)
    # 4 * (100 + 1) bytes end inside a 3-byte character.
    out = load_project_instructions(tmp_path, max_chars=100)
    assert out is not None and out.startswith("# AGENTS.md\n\n日本語")

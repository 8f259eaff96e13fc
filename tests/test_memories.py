"""prompt/memories.py: a memory is untrusted model text, saved as one bounded line where its scope says."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.prompt.memories import MAX_MEMORY_CHARS, Memories, user_section
from agent_cli.tools.base import ToolError


def memories(tmp_path: Path) -> Memories:
    root = tmp_path / "project"
    root.mkdir()
    return Memories(root, tmp_path / "config" / "memory.md")


def test_a_hostile_memory_is_one_line_with_its_controls_written_out(tmp_path: Path) -> None:
    mem = memories(tmp_path)
    said = mem.save("\x1b]0;owned\x07 use make\n- second pin\r\n", "project")
    assert ".agent/pins.md" in said
    pins = (mem.root / ".agent" / "pins.md").read_text()
    assert "- \\x1b]0;owned\\x07 use make\\x0a- second pin\n" in pins
    assert pins.count("\n- ") == 1 and "\x1b" not in pins


def test_too_long_empty_or_unknown_scope_saves_nothing(tmp_path: Path) -> None:
    mem = memories(tmp_path)
    for text, scope in (("x" * (MAX_MEMORY_CHARS + 1), "project"), ("  \n ", "user"), ("ok", "global")):
        with pytest.raises(ToolError):
            mem.save(text, scope)
    assert not (mem.root / ".agent").exists() and not mem.user_file.exists()


def test_user_scope_goes_to_the_users_file_and_its_section(tmp_path: Path) -> None:
    mem = memories(tmp_path)
    assert "memory.md" in mem.save("prefer uv", "user")
    assert "Already" in mem.save("prefer uv", "user")
    assert mem.user_file.read_text().count("- prefer uv\n") == 1
    assert user_section(mem.user_file).endswith("\n\n- prefer uv")
    assert not (mem.root / ".agent").exists()


def test_a_user_file_that_is_a_link_is_not_written_through(tmp_path: Path) -> None:
    mem = memories(tmp_path)
    target = tmp_path / "elsewhere.md"
    target.write_text("keep\n")
    mem.user_file.parent.mkdir()
    mem.user_file.symlink_to(target)
    with pytest.raises(ToolError, match="not a regular file"):
        mem.save("prefer uv", "user")
    assert target.read_text() == "keep\n" and user_section(mem.user_file) == ""

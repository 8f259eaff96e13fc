"""The REPL on an 80-column terminal (tmux on a private socket, against the fake model server), as a
newcomer sees it: a command's first lines shown under it with a count of the rest; the line after an
approved call writing out the invisible characters the question wrote out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_cmd, agent_env
from tests.screen import Screen, have_tmux, python_path_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not have_tmux(), reason="tmux drives the terminal"),
]

WIDTH = 80


@contextmanager
def repl(tmp_path: Path, server: FakeModelServer, *args: str) -> Iterator[Screen]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = python_path_env(agent_env(tmp_path / "home", server))
    with Screen(agent_cmd(*args), cwd=project, env=env, width=WIDTH, height=40) as screen:
        assert screen.wait_for("compact"), screen.text()  # the toolbar: the prompt is up
        yield screen
        screen.send("/exit", "Enter")
        screen.wait_exit()


def test_a_command_s_first_lines_show_under_it_with_a_count_of_the_rest(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(
        Reply("Counting.", tool_calls=[ToolCallSpec("bash", {"command": "seq 1 20"})]), Reply("Counted.")
    )
    with repl(tmp_path, fake_server, "--yes") as screen:
        screen.send("count", "Enter")
        assert screen.wait_for("Counted."), screen.text()
        rows = screen.raw_rows()
    start = next(i for i, row in enumerate(rows) if row.startswith("✓ bash seq 1 20"))
    shown = [row.rstrip() for row in rows[start + 1 : start + 7]]
    assert shown[:5] == ["  │ 1", "  │ 2", "  │ 3", "  │ 4", "  │ … +16 lines (ctrl+o shows the last output)"]
    assert shown[5].startswith("  exit 0 · ")
    assert "  │ 20" not in rows  # the rest is one Ctrl+O away


def test_the_line_after_an_approved_call_shows_the_invisible_characters_written_out(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    command = "echo\u00a0hi\u200b"
    fake_server.queue(
        Reply("Saying hi.", tool_calls=[ToolCallSpec("bash", {"command": command})]), Reply("Said.")
    )
    with repl(tmp_path, fake_server) as screen:
        screen.send("say hi", "Enter")
        assert screen.wait_for("[y]es"), screen.text()
        screen.send("y")
        assert screen.wait_for("Said."), screen.text()
        rows = screen.raw_rows()
    question = next(row for row in rows if row.startswith("? bash"))
    line = next(row for row in rows if row.startswith(("✓ bash", "✗ bash")))
    assert "echo\\xa0hi\\u200b" in question
    assert "echo\\xa0hi\\u200b" in line, line
    assert not any(ch in question + line for ch in "\u00a0\u200b")


def long_lines(screen: Screen) -> list[str]:
    """The lines the terminal itself wrapped: longer than the screen once tmux joins them (-J), so a
    word at the last column was split. Rich's own wrapping ends its lines with a newline instead."""
    return [line for line in screen.text().splitlines() if len(line) > WIDTH]


def test_at_80_columns_no_view_splits_a_word(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """The welcome's session id, /context's closing line, /model's notes, /record's paragraphs and the
    approval's rule wrap at the spaces between words; only the command being approved may run on
    (the terminal wraps it, adding nothing to what will run)."""
    record = (
        "## Goal\nSay hello to the user, then explain every setting of the working budget in "
        "plain words that a newcomer reads on a narrow terminal.\n## State\nFinished."
    )
    command = "git status --short && ls -la src/agent_cli/ui && echo a long command line to approve"
    fake_server.queue(
        Reply("Hello there."),
        Reply(record),
        Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": command})]),
    )
    fake_server.default = Reply("Done.")
    with repl(tmp_path, fake_server) as screen:
        for typed, shown in [
            ("hi", "Hello there."),
            ("/context", "runs it now"),
            ("/model claude-opus-5-5-preview-of-a-long-name", "auto-compaction at"),
            ("/compact", "context compacted"),
            ("/record", "undoes the compaction"),
            ("run it", "[y]es"),
        ]:
            screen.send(typed, "Enter")
            assert screen.wait_for(shown, 30), (typed, screen.text())
        screen.send("c")
        assert screen.wait_for("Done.", 30), screen.text()
        split = [line for line in long_lines(screen) if not line.startswith("? bash")]
        rows = screen.raw_rows()
    assert split == [], split
    assert any("always = this exact bash command:" in row for row in rows)
    assert any(re.search(r"\b\d{8}-\d{6}-[0-9a-f]{6} · /help", row) for row in rows)  # the id whole

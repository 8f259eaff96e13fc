"""The todo list in the REPL (tmux on a private socket, against the fake model server): after the model
writes a list, the toolbar shows the item in progress with its escape sequence written out, `/todos`
lists every item, and a REPL opened with `--continue` lists it again from the session's log."""

from __future__ import annotations

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

# An item that tries to redraw the line and turn the screen red: it must show written out.
HOSTILE = "Patch the \x1b[2K\r\x1b[31mparser"
TODOS = [
    {"content": "Read the loader", "status": "completed"},
    {"content": HOSTILE, "status": "in_progress"},
    {"content": "Run the test suite", "status": "pending"},
]


@contextmanager
def repl(tmp_path: Path, server: FakeModelServer, *args: str) -> Iterator[Screen]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = python_path_env(agent_env(tmp_path / "home", server))
    with Screen(agent_cmd(*args), cwd=project, env=env, width=160, height=40) as screen:
        assert screen.wait_for("compact"), screen.text()  # the toolbar: the prompt is up
        yield screen
        screen.send("/exit", "Enter")
        screen.wait_exit()


def test_todos_and_the_toolbar_show_the_list_and_continue_brings_it_back(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(
        Reply("Planning.", tool_calls=[ToolCallSpec("todo_write", {"todos": TODOS})]), Reply("Planned.")
    )
    with repl(tmp_path, fake_server) as screen:
        screen.send("/todos", "Enter")
        assert screen.wait_for("no todo list"), screen.text()
        screen.send("make a plan", "Enter")
        assert screen.wait_for("Planned."), screen.text()
        assert screen.wait_for("doing: Patch the \\x1b[2K\\x0d\\x1b[31mparser"), screen.text()
        screen.send("/todos", "Enter")
        assert screen.wait_for("1 of 3 done"), screen.text()
        rows = [row.rstrip() for row in screen.raw_rows()]
    assert "1. [x] Read the loader" in rows
    assert "3. [ ] Run the test suite" in rows
    assert any(row.startswith("2. [>] Patch the \\x1b[2K") for row in rows), rows
    with repl(tmp_path, fake_server, "--continue") as screen:
        screen.send("/todos", "Enter")
        assert screen.wait_for("1 of 3 done"), screen.text()
        assert screen.wait_for("doing: Patch the"), screen.text()
        rows = [row.rstrip() for row in screen.raw_rows()]
    assert "3. [ ] Run the test suite" in rows

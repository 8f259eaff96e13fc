"""The user's status line in a real terminal (tmux on a private socket, the fake model server): the
command's first line shows under the toolbar, built from the JSON it reads on stdin, its colours
stripped and its cursor moves written out; a failing command shows a short marker."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.e2e import agent_cmd, agent_env
from tests.screen import Screen, have_tmux, python_path_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not have_tmux(), reason="tmux drives the terminal"),
]

STATUS_SCRIPT = """\
import json, sys
data = json.load(sys.stdin)
print("\\x1b[32mSL\\x1b[0m model=" + data["model"]["id"] + " sid=" + data["session_id"]
      + " ctx=" + str(data["context_window"]["context_window_size"]) + "\\x1b[2Kend")
print("a second line, not shown")
"""


@contextmanager
def repl(tmp_path: Path, server: FakeModelServer, command: str) -> Iterator[Screen]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    home = tmp_path / "home"
    config = home / ".config" / "agent-cli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[ui]\nstatusline = {json.dumps(command)}\n")  # (a JSON string is a TOML one)
    env = python_path_env(agent_env(home, server))
    with Screen(agent_cmd(), cwd=project, env=env, width=120, height=30) as screen:
        assert screen.wait_for("compact"), screen.text()  # the toolbar: the prompt is up
        yield screen
        screen.send("/exit", "Enter")
        screen.wait_exit()


def test_the_toolbar_shows_the_commands_first_line_built_from_its_stdin(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = tmp_path / "status.py"
    script.write_text(STATUS_SCRIPT)
    fake_server.queue(Reply("Hello there."))
    with repl(tmp_path, fake_server, f"{sys.executable} {script}") as screen:
        assert screen.wait_for("SL model="), screen.text()
        rows = screen.raw_rows()
        at = next(i for i, row in enumerate(rows) if "SL model=" in row)
        line, toolbar = rows[at], rows[at - 1]
        model = toolbar.split(" · ")[0].strip()  # the toolbar's model: the one in the JSON
        assert line.startswith(f"SL model={model} sid="), (toolbar, line)
        # The session id the command read is the session's own; the colours are gone and the
        # erase-line escape is written out, not obeyed.
        assert "ctx=" in line and line.rstrip().endswith("\\x1b[2Kend"), line
        assert "a second line" not in screen.text()
        screen.send("hi", "Enter")
        assert screen.wait_for("Hello there."), screen.text()
        assert screen.wait_for("SL model="), screen.text()  # still there after a turn
        session = re.search(r"session (\S+) ", screen.text())
        assert session is not None, screen.text()
        ids = [row.split("sid=")[1].split()[0] for row in screen.raw_rows() if "sid=" in row]
        assert ids and all(i == session.group(1) for i in ids), (ids, session.group(1))


def test_a_failing_command_shows_a_short_marker(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with repl(tmp_path, fake_server, "exit 7") as screen:
        assert screen.wait_for("[statusline: exit 7]"), screen.text()
        assert "Traceback" not in screen.text()

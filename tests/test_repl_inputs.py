"""What a Claude Code user types, in the REPL through a pseudo-terminal, against the fake server:
`!command` runs in the project's shell without the model and joins the conversation as the user's
message; `@path` attaches a file's content or a folder's listing, and a path that names nothing
stays text with a note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.e2e import agent_env
from tests.e2e import user_texts as texts
from tests.reliability.procs import expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

FAKE_SERVER = {"default": Reply("Hello from the model.")}


def start(tmp_path: Path, server: FakeModelServer) -> tuple[Any, Path]:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("PORT = 48213\nprint('serving')\n")
    (project / "notes.txt").write_text("the build needs make 4.3\n")
    env = agent_env(tmp_path / "home", server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    expect(child, "auto-compact at ")
    return child, project


def test_a_bang_line_runs_in_the_shell_without_the_model(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    child, project = start(tmp_path, fake_server)
    try:
        child.send("!echo shell-said-$((6 * 7)) && touch ran-here\r")
        expect(child, "shell-said-42")
        expect(child, "the model sees this")
        assert fake_server.requests == [], "no model call for a ! line"
        assert (project / "ran-here").exists()
        child.send("what did I just see?\r")
        expect(child, "Hello from the model")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    sent = texts(fake_server.requests[-1])
    assert sent[0].startswith(
        "[I ran this in the project's shell: echo shell-said-$((6 * 7)) && touch ran-here]\n"
    )
    assert "shell-said-42" in sent[0] and sent[-1] == "what did I just see?"


def test_at_paths_attach_files_and_folders_and_a_missing_one_stays_text(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    child, _ = start(tmp_path, fake_server)
    try:
        child.send("compare @src/app.py with @notes.txt, see @src/ and @nowhere.txt\r")
        expect(child, "@nowhere.txt was sent as text")
        expect(child, "Hello from the model")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    prompt, *attached = texts(fake_server.requests[-1])
    assert prompt == "compare @src/app.py with @notes.txt, see @src/ and @nowhere.txt", "the prompt as typed"
    assert len(attached) == 3
    assert (
        attached[0].startswith("[attached by the user: the content of @src/app.py]")
        and "48213" in attached[0]
    )
    assert "make 4.3" in attached[1]
    assert (
        attached[2].startswith("[attached by the user: the listing of @src/]") and "src/app.py" in attached[2]
    )

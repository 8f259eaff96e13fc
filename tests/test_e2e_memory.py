"""Memory across sessions end to end, through the fake server: the model's `remember` is asked in the
REPL (yes saves it to .agent/pins.md, no saves nothing), refused headless without --yes and saved
with it (the user's own file with scope "user"); the next session carries it; and `recall` with
scope "project" finds a fact from an earlier session of this project, never another project's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from tests.e2e import agent_env, run_agent, tool_results
from tests.reliability.procs import expect, spawn_repl

pytestmark = pytest.mark.e2e

MEMORY = "Run the tests with make check, never pytest directly"
PINS = Path(".agent") / "pins.md"


def system_text(request: RecordedRequest) -> str:
    system = request.body.get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def project_in(tmp_path: Path, name: str = "project") -> Path:
    project = tmp_path / name
    project.mkdir()
    return project


def remember(**extra: str) -> Reply:
    return Reply("Worth keeping.", tool_calls=[ToolCallSpec("remember", {"text": MEMORY, **extra})])


def repl_answer(tmp_path: Path, server: FakeModelServer, key: str, then: str = "") -> tuple[Path, Any]:
    pexpect = pytest.importorskip("pexpect")
    project = project_in(tmp_path)
    server.queue(remember(), Reply("Done."))
    env = agent_env(tmp_path / "home", server)
    env["TERM"] = "xterm-256color"
    child = spawn_repl(project, env)
    try:
        expect(child, "auto-compact at ")
        child.send("remember how to test\r")
        question = expect(child, r"\[y\]es")
        assert "make check" in question, "the question shows the memory"
        child.send(key)
        if then and key == "e":
            expect(child, "memory ›")
            child.send("\x15" + then + "\r")  # Ctrl-U empties the line the memory is on
        elif then:
            expect(child, "instead")
            child.send(then + "\r")
        expect(child, "Done.")
        expect(child, "auto-compact at ")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return project, tool_results(server.requests)


def test_the_repl_asks_and_yes_saves_the_memory_to_the_projects_pins(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project, results = repl_answer(tmp_path, fake_server, "y")
    assert f"- {MEMORY}\n" in (project / PINS).read_text()
    (text, is_error), *_ = results.values()
    assert not is_error and ".agent/pins.md" in text


def test_the_repl_saves_nothing_on_no(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project, results = repl_answer(tmp_path, fake_server, "n", then="say it as: use make check")
    assert not (project / PINS).exists()
    (text, is_error), *_ = results.values()
    assert is_error and "edited this memory" in text and "use make check" in text, (
        "the edit reaches the model"
    )


def test_the_repl_edit_saves_the_memory_as_the_user_wrote_it(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project, results = repl_answer(tmp_path, fake_server, "e", then="Test with make check-all")
    pins = (project / PINS).read_text()
    assert "- Test with make check-all\n" in pins and MEMORY not in pins
    (text, is_error), *_ = results.values()
    assert not is_error and "rewrote it" in text and "make check-all" in text, "the model learns the words"


def test_headless_refuses_without_yes_and_saves_with_it(tmp_path: Path) -> None:
    project = project_in(tmp_path)
    home = tmp_path / "home"
    args = ["-p", "remember how to test", "--model", "claude-sonnet-4-5"]
    with FakeModelServer() as server:
        server.queue(remember(), Reply("Done."))
        done = run_agent(args, project, agent_env(home, server))
        assert done.returncode == 0, done.stderr
        (text, is_error), *_ = tool_results(server.requests).values()
    assert is_error and "--yes" in text and "nothing was saved" in text
    assert not (project / PINS).exists()

    with FakeModelServer() as server:
        server.queue(remember(), remember(scope="user"), Reply("Done."))
        done = run_agent([*args, "--yes"], project, agent_env(home, server))
        assert done.returncode == 0, done.stderr
        results = list(tool_results(server.requests).values())
    assert [is_error for _, is_error in results] == [False, False]
    assert ".agent/pins.md" in results[0][0] and "memory.md" in results[1][0]
    assert f"- {MEMORY}\n" in (project / PINS).read_text()
    user_file = home / ".config" / "agent-cli" / "memory.md"
    assert f"- {MEMORY}\n" in user_file.read_text()

    with FakeModelServer() as server:  # the next session, in another project, carries the user's
        server.queue(Reply("Hello."))
        other = project_in(tmp_path, "other")
        assert run_agent(args, other, agent_env(home, server)).returncode == 0
        assert MEMORY in system_text(server.requests[0])


def test_recall_with_scope_project_finds_an_earlier_session_of_this_project_only(tmp_path: Path) -> None:
    project, elsewhere = project_in(tmp_path), project_in(tmp_path, "elsewhere")
    home = tmp_path / "home"
    model = ["--model", "claude-sonnet-4-5"]
    with FakeModelServer() as server:
        server.queue(Reply("Noted: the staging port is 48213."))
        asked = ["-p", "which port is staging on?", *model]
        assert run_agent(asked, project, agent_env(home, server)).returncode == 0
        server.queue(Reply("Noted: the staging port is 51999."))
        assert run_agent(asked, elsewhere, agent_env(home, server)).returncode == 0
        call = ToolCallSpec("recall", {"query": "staging port", "scope": "project"})
        server.queue(Reply("Looking.", tool_calls=[call]), Reply("It is 48213."))
        done = run_agent(["-p", "what did we find?", *model], project, agent_env(home, server))
        assert done.returncode == 0, done.stderr
        (text, is_error), *_ = tool_results(server.requests).values()
    assert not is_error
    assert "48213" in text and "51999" not in text
    first = sorted(p.name for p in (project / ".transcripts").iterdir() if p.is_dir())[0]
    assert f".transcripts/{first}/" in text, "the passage names the session it came from"

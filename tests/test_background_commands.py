"""Background commands: `bash` with run_in_background returns at once with a shell id; bash_output
reads what it printed since the last read; kill_shell and the session's end stop it and all it
started; its whole log is archived when it ends. Real processes in a temp dir; no wall-clock
bound (conditions are waited for, with a generous limit a loaded machine still meets)."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.tools.background import BackgroundShells
from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.registry import default_tools

LIMIT = 120.0  # seconds: only a broken command takes this long


def _until(check: Callable[[], bool]) -> None:
    end = time.monotonic() + LIMIT
    while not check():
        assert time.monotonic() < end, "the condition never held"
        time.sleep(0.02)


def _alive_with(token: str) -> list[int]:
    """Processes whose command line holds `token` (this test's own unique word)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if token.encode() in cmdline and state != "Z":
                found.append(int(entry))
    return found


def _held(token: str) -> str:
    """A command that runs until stopped, with `token` in its command line (sleep would refuse it)."""
    return f"sh -c 'sleep 1000; :' {token}"


@pytest.fixture
def saved() -> dict[str, str]:
    return {}


@pytest.fixture
def tools(saved: dict[str, str]):  # type: ignore[no-untyped-def]
    shells = BackgroundShells(
        save=lambda label, text: saved.setdefault(label, text) and f"archive/{len(saved)}"
    )
    registry = default_tools(background=shells)
    yield registry, shells
    shells.close(grace=0.2)


def _call(registry, name: str, args: dict[str, object], root: Path) -> ToolOutput:  # type: ignore[no-untyped-def]
    return registry.run(name, args, ToolContext(root=root))


def test_a_background_command_returns_at_once_and_its_output_is_read_in_parts(tools, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    registry, _shells = tools
    token = secrets.token_hex(6)
    started = _call(
        registry,
        "bash",
        {
            "command": f"echo FIRST-{token}; until [ -f go ]; do sleep 0.05; done; echo SECOND-{token}",
            "run_in_background": True,
        },
        tmp_path,
    )
    assert not started.is_error and "started in the background as bg1" in started.content
    seen: list[str] = []

    def printed(word: str) -> bool:
        out = _call(registry, "bash_output", {"shell_id": "bg1"}, tmp_path)
        seen.append(out.content)
        return word in out.content

    _until(lambda: printed(f"FIRST-{token}"))
    assert "[bg1 running" in seen[-1]
    (tmp_path / "go").touch()
    _until(lambda: printed(f"SECOND-{token}"))
    assert f"FIRST-{token}" not in seen[-1]  # only what came since the last read
    _until(
        lambda: "exited with code 0" in _call(registry, "bash_output", {"shell_id": "bg1"}, tmp_path).content
    )
    again = _call(registry, "bash_output", {"shell_id": "bg1"}, tmp_path)
    assert "(nothing new)" in again.content and "saved in archive/" in again.content


def test_kill_shell_stops_the_command_and_what_it_started(tools, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    registry, _shells = tools
    token = secrets.token_hex(6)
    _call(
        registry,
        "bash",
        {"command": f"{_held(token)} & {_held(token)}; wait", "run_in_background": True},
        tmp_path,
    )
    _until(lambda: len(_alive_with(token)) == 3)  # bash -c and its two
    stopped = _call(registry, "kill_shell", {"shell_id": "bg1"}, tmp_path)
    assert "[bg1 stopped]" in stopped.content and "bg1 stopped;" in stopped.content
    _until(lambda: _alive_with(token) == [])
    again = _call(registry, "kill_shell", {"shell_id": "bg1"}, tmp_path)
    assert "had already ended (stopped)" in again.content


def test_the_session_end_stops_every_background_command(tools, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    registry, shells = tools
    token = secrets.token_hex(6)
    for _ in range(3):
        _call(registry, "bash", {"command": f"exec {_held(token)}", "run_in_background": True}, tmp_path)
    _until(lambda: len(_alive_with(token)) == 3)
    stopped = shells.close(grace=0.5)
    assert sorted(s.shell_id for s in stopped) == ["bg1", "bg2", "bg3"]
    assert _alive_with(token) == []
    assert all(s.status() == "stopped" for s in shells.states())


def test_a_failed_command_is_an_error_and_its_log_is_archived_whole(tools, saved, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    registry, shells = tools
    _call(
        registry,
        "bash",
        {"command": "seq 1 30000; echo LAST-LINE; exit 3", "run_in_background": True},
        tmp_path,
    )
    _until(lambda: not shells.get("bg1").state().running)
    out = _call(registry, "bash_output", {"shell_id": "bg1"}, tmp_path)
    assert out.is_error and "exited with code 3" in out.content
    assert "bytes of output omitted" in out.content and "LAST-LINE" in out.content  # head and tail kept
    ((label, text),) = saved.items()
    assert label.startswith("background bg1: seq 1 30000")
    assert "\n15000\n" in text and "LAST-LINE" in text  # the middle too


def test_bad_calls_are_tool_errors(tools, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    registry, _ = tools
    for name, args, said in [
        ("bash_output", {"shell_id": "bg9"}, "no background command 'bg9' (known: none started yet)"),
        ("kill_shell", {}, "shell_id"),
        ("bash", {"command": "true", "run_in_background": "yes"}, "run_in_background must be true or false"),
    ]:
        out = _call(registry, name, args, tmp_path)
        assert out.is_error and said in out.content, out.content


@pytest.mark.e2e
def test_agent_p_starts_a_background_command_and_ends_it_when_it_exits(tmp_path: Path) -> None:
    from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
    from tests.e2e import agent_env, run_agent, tool_results

    token = secrets.token_hex(6)
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    command = f"echo SERVING-{token}; exec {_held(token)}"
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": command, "run_in_background": True})]),
            Reply("the server is up"),
        )
        done = run_agent(["-p", "start the server", "--yes"], project, agent_env(home, server))
        results = list(tool_results(server.requests).values())
    assert done.returncode == 0, done.stderr
    ((text, is_error),) = results
    assert not is_error and "started in the background as bg1" in text
    assert _alive_with(token) == []  # ended with the session
    logs = [p.read_text() for p in (project / ".transcripts").glob("*/output-*.txt")]
    assert any(f"SERVING-{token}" in log for log in logs)  # archived whole, for recall


def test_the_log_says_which_commands_run_and_which_died_with_a_session(tmp_path: Path) -> None:
    from agent_cli.store.log_records import StateRecord
    from agent_cli.tools.background import TOPIC, died_with, running_record

    logged: list[list[str]] = []
    shells = BackgroundShells()
    shells.watch(lambda states: logged.append([s.shell_id for s in states if s.running]))
    shells.start("exec sleep 1000", tmp_path)
    shells.start("true", tmp_path)
    _until(lambda: not shells.get("bg2").state().running)
    shells.close(grace=0.2)
    assert logged[0] == ["bg1"] and logged[-1] == [] and ["bg1"] in logged
    record = running_record(shells.states())
    assert record == {"running": []}
    planted = StateRecord("r1", "t", TOPIC, {"running": [{"id": "bg3", "command": "npm run dev"}, {"id": 7}]})
    assert died_with([planted]) == [("bg3", "npm run dev")]
    assert died_with([planted, StateRecord("r2", "t", TOPIC, {"running": []})]) == []


@pytest.mark.e2e
def test_continue_after_the_agent_was_killed_names_the_background_commands_that_died(tmp_path: Path) -> None:
    import signal
    import subprocess

    from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
    from tests.e2e import agent_cmd, agent_env, run_agent

    token = secrets.token_hex(6)
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": _held(token), "run_in_background": True})]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "touch waiting; sleep 600", "timeout": 600})]),
            Reply("never sent"),
        )
        env = agent_env(home, server)
        agent = subprocess.Popen(
            agent_cmd("-p", "start it", "--yes"),
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _until(lambda: (project / "waiting").exists())
            agent.send_signal(signal.SIGKILL)
        finally:
            agent.wait()
        server.queue(Reply("back"))
        again = run_agent(["--continue", "-p", "and now?"], project, env)
    assert again.returncode == 0, again.stderr
    assert "background commands that ended with the earlier session: bg1: sh -c" in again.stderr
    _until(lambda: _alive_with(token) == [])

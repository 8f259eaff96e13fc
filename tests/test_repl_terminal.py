"""The REPL's terminal edges: no echo while a turn runs, type-ahead dropped before a question, piped stdin."""

from __future__ import annotations

import os
import subprocess
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.ui.turn import discard_typeahead, quiet_input
from tests.e2e import agent_cmd, agent_env


@pytest.fixture
def pty() -> Iterator[tuple[int, int]]:
    leader, follower = os.openpty()
    yield leader, follower
    os.close(leader)
    os.close(follower)


def test_quiet_input_turns_the_echo_off_and_back_on(pty: tuple[int, int]) -> None:
    _, follower = pty
    before = termios.tcgetattr(follower)
    assert before[3] & termios.ECHO
    with quiet_input(follower):
        inside = termios.tcgetattr(follower)[3]
        assert not inside & termios.ECHO and not inside & termios.ECHOCTL
        assert inside & termios.ISIG  # Ctrl-C still interrupts
    assert termios.tcgetattr(follower) == before


def test_quiet_input_restores_the_echo_when_the_turn_fails(pty: tuple[int, int]) -> None:
    _, follower = pty
    with pytest.raises(KeyboardInterrupt), quiet_input(follower):
        raise KeyboardInterrupt
    assert termios.tcgetattr(follower)[3] & termios.ECHO


def test_quiet_input_and_discard_on_something_not_a_terminal(tmp_path: Path) -> None:
    with (tmp_path / "f").open("w") as handle, quiet_input(handle.fileno()):
        discard_typeahead(handle.fileno())  # no error: nothing to do


def test_typeahead_is_dropped_before_a_question(pty: tuple[int, int]) -> None:
    leader, follower = pty
    attrs = termios.tcgetattr(follower)
    attrs[3] &= ~termios.ICANON  # raw enough that typed bytes are readable at once
    termios.tcsetattr(follower, termios.TCSANOW, attrs)
    os.write(leader, b"n")
    discard_typeahead(follower)
    os.write(leader, b"y")
    assert os.read(follower, 10) == b"y"


# ---- piped stdin: one headless task ------------------------------------------------------


def run_piped(tmp_path: Path, server: FakeModelServer, stdin: str) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return subprocess.run(
        agent_cmd(),
        cwd=project,
        env=agent_env(tmp_path / "home", server),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_piped_stdin_is_one_prompt_and_the_answer_goes_to_stdout(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "touch made.txt"})]), Reply("All done.")
        )
        result = run_piped(tmp_path, server, "first line\nsecond line\n")
        sent = server.requests[0].body["messages"][0]["content"][0]["text"]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    assert sent == "first line\nsecond line"
    assert "Input is not a terminal" not in result.stderr
    # Nobody can answer an approval prompt: the call was declined, not run.
    assert not (tmp_path / "project" / "made.txt").exists()


def test_empty_stdin_is_a_usage_error(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        result = run_piped(tmp_path, server, "  \n")
        assert server.requests == []
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().startswith("agent: stdin is empty") and len(result.stderr.splitlines()) == 1


def test_stdout_not_a_terminal_is_refused_in_one_line(tmp_path: Path, pty: tuple[int, int]) -> None:
    _, follower = pty
    project = tmp_path / "project"
    project.mkdir()
    with FakeModelServer() as server:
        result = subprocess.run(
            agent_cmd(),
            cwd=project,
            env=agent_env(tmp_path / "home", server),
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("agent: stdout is not a terminal; ") and "-p PROMPT" in result.stderr
    assert len(result.stderr.splitlines()) == 1


# ---- piped stdin next to -p: context for the prompt ----------------------------------------------


def run_p(tmp_path: Path, server: FakeModelServer, stdin: object) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    extra: dict[str, object] = {"input": stdin} if isinstance(stdin, str) else {"stdin": stdin}
    env = agent_env(tmp_path / "home", server)
    return subprocess.run(
        agent_cmd("-p", "explain this"),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **extra,
    )  # type: ignore[call-overload]


def test_piped_stdin_next_to_p_is_context_after_the_prompt(tmp_path: Path) -> None:
    """`cat log | agent -p "explain this"`: the prompt, then the piped text in a <stdin> block."""
    with FakeModelServer() as server:
        server.queue(Reply("It is a traceback."))
        result = run_p(tmp_path, server, "Traceback (most recent call last):\n  boom\n")
        sent = server.requests[0].body["messages"][0]["content"][0]["text"]
    assert result.returncode == 0, result.stderr
    assert sent == "explain this\n\n<stdin>\nTraceback (most recent call last):\n  boom\n</stdin>"
    assert result.stdout == "It is a traceback.\n"


@pytest.mark.parametrize("stdin", ["", "\n \n", "devnull", "tty"])
def test_empty_or_terminal_stdin_next_to_p_changes_nothing(
    tmp_path: Path, stdin: str, pty: tuple[int, int]
) -> None:
    given: object = {"devnull": subprocess.DEVNULL, "tty": pty[1]}.get(stdin, stdin)
    with FakeModelServer() as server:
        server.queue(Reply("Fine."))
        result = run_p(tmp_path, server, given)
        sent = server.requests[0].body["messages"][0]["content"][0]["text"]
    assert result.returncode == 0, result.stderr
    assert sent == "explain this"

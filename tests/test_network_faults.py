"""A server that is not there and a stream that goes quiet, end to end through the real SDKs: the
first fails in seconds with one line naming the address, the second is cut by the read timeout
(`provider.stall_timeout`) and retried at most twice, never held for the whole-request timeout."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, Stall
from tests.e2e import agent_cmd, agent_env

WIRES = [("anthropic", []), ("openai", ["--wire", "chat"]), ("openai", ["--wire", "responses"])]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _project(tmp_path: Path, config: str = "") -> Path:
    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text(config)
    return project


def _agent(
    project: Path, env: dict[str, str], provider: str, wire: list[str]
) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        agent_cmd("-p", "say hi", "--provider", provider, *wire),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return proc, time.monotonic() - start


@pytest.mark.parametrize(("provider", "wire"), WIRES)
def test_nothing_listening_fails_in_seconds_with_one_line(
    tmp_path: Path, provider: str, wire: list[str]
) -> None:
    dead = f"http://127.0.0.1:{_free_port()}"
    env = agent_env(tmp_path / "home")
    env.update(ANTHROPIC_API_KEY="sk-ant-x", OPENAI_API_KEY="sk-x")
    env["ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL"] = dead + (
        "" if provider == "anthropic" else "/v1"
    )
    proc, took = _agent(_project(tmp_path), env, provider, wire)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"cannot connect to {dead}" in lines[0] and "connection refused" in lines[0]
    assert took < 45, f"{took:.1f} s to say nothing is listening"  # was about 55 s of retries


@pytest.mark.parametrize(("provider", "wire"), WIRES)
def test_a_stream_that_goes_quiet_is_cut_by_the_read_timeout(
    tmp_path: Path, provider: str, wire: list[str]
) -> None:
    project = _project(tmp_path, "[provider]\nstall_timeout = 1.0\n")
    with FakeModelServer() as server:
        server.queue(*[Stall(after_events=2, seconds=600)] * 3)  # quiet far longer than any bound here
        proc, took = _agent(project, agent_env(tmp_path / "home", server, provider), provider, wire)
        assert len(server.requests) == 3  # the first try and two retries, not seven
    assert proc.returncode == 1, proc.stderr
    assert "stream stalled: nothing received for 1 s (provider.stall_timeout)" in proc.stderr
    assert "Traceback" not in proc.stderr
    # Three stalls of 1 s and two waits; a busy machine adds start-up time, a stall not cut adds 600 s.
    assert took < 120, f"{took:.1f} s for three stalls of 1 s"  # the whole-reply deadline is 1,800 s


def test_a_stall_then_an_answer_finishes_the_task(tmp_path: Path) -> None:
    # A stall limit of 3 s: the answer after the stall must not be cut by a busy machine's pause.
    project = _project(tmp_path, "[provider]\nstall_timeout = 3.0\n")
    with FakeModelServer() as server:
        server.queue(Stall(after_events=2, seconds=600), Reply("Hello after a stall."))
        proc, _ = _agent(project, agent_env(tmp_path / "home", server), "anthropic", [])
        assert len(server.requests) == 2
    assert proc.returncode == 0, proc.stderr
    assert "Hello after a stall." in proc.stdout

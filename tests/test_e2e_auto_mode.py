"""Auto mode end to end: `agent -p --permission-mode auto` (no --yes) against the fake model server.
With the sandbox on, a command writing in the project runs unasked; one writing outside is refused
by the sandbox, the model reads why, and its retry is refused too (no one to approve it outside).
With `--sandbox off`, auto runs nothing unasked and says so."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.sandbox.probe import find_bwrap, probe
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env, run_agent, stream_events, tool_results

pytestmark = pytest.mark.e2e
VERDICT = probe(find_bwrap(os.environ.get("PATH")))
needs_bwrap = pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


@pytest.fixture
def outside() -> Iterator[Path]:
    # Not under /tmp (where pytest's tmp_path is): the sandbox leaves the temporary directory writable.
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        pytest.skip("no writable /var/tmp for a directory outside the project and the temp dir")
    path = Path(tempfile.mkdtemp(prefix="agent-outside-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@needs_bwrap
def test_auto_runs_a_project_command_unasked_and_the_sandbox_refuses_one_outside(
    project: Path, outside: Path, tmp_path: Path
) -> None:
    escape = f"echo x > {outside}/escaped.txt"
    with FakeModelServer() as server:
        server.queue(
            Reply(
                tool_calls=[
                    ToolCallSpec("bash", {"command": "echo in > made.txt"}, id="toolu_in"),
                    ToolCallSpec("bash", {"command": escape}, id="toolu_out"),
                ]
            ),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": escape}, id="toolu_again")]),
            Reply("done"),
        )
        args = ["-p", "go", "--permission-mode", "auto", "--sandbox", "workspace-write"]
        done = run_agent(
            [*args, "--output-format", "stream-json"], project, agent_env(tmp_path / "home", server)
        )
        results = tool_results(server.requests)
    assert done.returncode == 0, done.stderr
    assert stream_events(done.stdout)[0]["permission_mode"] == "auto"
    assert (project / "made.txt").read_text() == "in\n" and not results["toolu_in"][1]
    text, is_error = results["toolu_out"]
    assert is_error and "denied by the sandbox: write outside the project" in text, text
    text, is_error = results["toolu_again"]  # the model read the denial and tried again: asked, refused
    assert is_error and "the sandbox refused this command before" in text, text
    assert not (outside / "escaped.txt").exists()


@pytest.mark.parametrize("sandbox", ["off", "missing"])
def test_auto_without_a_sandbox_asks_as_default_and_says_so(
    sandbox: str, project: Path, tmp_path: Path
) -> None:
    """Off, or wanted but missing: the project at the home directory, which workspace-write would
    leave writable whole (`too_wide`), so it confines nothing and every command is asked."""
    home = tmp_path / "home"
    where = project if sandbox == "off" else home
    where.mkdir(exist_ok=True)
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo in > made.txt"}, id="toolu_in")]),
            Reply("done"),
        )
        mode = "off" if sandbox == "off" else "workspace-write"
        args = ["-p", "go", "--permission-mode", "auto", "--sandbox", mode]
        done = run_agent(args, where, agent_env(home, server))
        ((text, is_error),) = tool_results(server.requests).values()
    assert done.returncode == 0, done.stderr
    assert is_error and "needs approval" in text and not (where / "made.txt").exists()
    assert "auto mode runs commands unasked only inside the sandbox" in done.stderr
    assert done.stderr.count("auto mode runs commands unasked") == 1
    why = (
        "the sandbox is off: --sandbox workspace-write turns it on"
        if sandbox == "off"
        else "would not confine"
    )
    assert why in done.stderr

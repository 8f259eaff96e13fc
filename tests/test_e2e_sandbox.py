"""The bash tool under the session's sandbox, end to end: `agent -p --sandbox MODE` against the fake
model server. Each case runs under workspace-write (refused, and the result says so) and under off
(it works), so each can fail. Where bubblewrap does not work here, the confined cases are skipped."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import Decision
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.tool_runner import ToolRunner
from agent_cli.core.messages import ToolUse
from agent_cli.hooks_user.config import HookSpec
from agent_cli.hooks_user.user_hooks import UserHooks
from agent_cli.sandbox.probe import find_bwrap, probe
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.tools.base import ToolContext
from agent_cli.tools.confine import Confinement
from agent_cli.tools.registry import default_tools
from tests.e2e import agent_env, run_agent, tool_results
from tests.hook_scripts import Place
from tests.mcp_servers.helpers import SERVER, stdio_table

pytestmark = pytest.mark.e2e
VERDICT = probe(find_bwrap(os.environ.get("PATH")))
needs_bwrap = pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_text("PLANTED-FAKE-KEY\n")
    return h


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


def _bash(project: Path, home: Path, command: str, *flags: str) -> tuple[str, bool, str]:
    """One bash call by the model; its result's text and is_error, and the agent's stderr."""
    with FakeModelServer() as server:
        server.queue(Reply(tool_calls=[ToolCallSpec("bash", {"command": command})]), Reply("done"))
        done = run_agent(["-p", "go", "--yes", *flags], project, agent_env(home, server))
        results = tool_results(server.requests)
    assert done.returncode == 0, done.stderr
    ((text, is_error),) = results.values()
    return text, is_error, done.stderr


@needs_bwrap
@pytest.mark.parametrize("mode", ["workspace-write", "off"])
def test_a_write_outside_the_project_is_denied_and_said(
    mode: str, project: Path, home: Path, outside: Path
) -> None:
    target = outside / "escaped.txt"
    text, is_error, _ = _bash(
        project, home, f"echo x > {target} && echo inside > here.txt", "--sandbox", mode
    )
    if mode == "off":
        assert not is_error and target.read_text() == "x\n"
        assert "denied by the sandbox" not in text
        return
    assert is_error and not target.exists()
    assert "Read-only file system" in text
    assert "denied by the sandbox: write outside the project" in text


@needs_bwrap
@pytest.mark.parametrize("mode", ["workspace-write", "off"])
def test_a_hidden_key_cannot_be_read(mode: str, project: Path, home: Path) -> None:
    text, is_error, _ = _bash(project, home, "cat ~/.ssh/id_rsa", "--sandbox", mode)
    if mode == "off":
        assert not is_error and "PLANTED-FAKE-KEY" in text
        return
    assert is_error and "PLANTED-FAKE-KEY" not in text
    assert "denied by the sandbox: read of a hidden path" in text


@needs_bwrap
def test_the_project_stays_writable_and_the_environment_loses_its_secrets(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo in > made.txt; env"})]), Reply("done")
        )
        env = {**agent_env(home, server), "MY_SERVICE_TOKEN": "tok-canary-123"}
        done = run_agent(["-p", "go", "--yes", "--sandbox", "workspace-write"], project, env)
        ((text, is_error),) = tool_results(server.requests).values()
    assert done.returncode == 0, done.stderr
    assert not is_error and (project / "made.txt").read_text() == "in\n"
    assert "MY_SERVICE_TOKEN" not in text


@pytest.mark.parametrize("mode", ["workspace-write", "off"])
def test_where_the_sandbox_cannot_confine_every_command_is_asked(mode: str, home: Path) -> None:
    """The project at the home directory: workspace-write would make the shell's start-up files
    writable, so the sandbox counts as missing. Headless, an allow-listed command is refused then
    (it would run unconfined), and the start-up line says why; with the sandbox off it runs."""
    (home / ".config" / "agent-cli").mkdir(parents=True)
    (home / ".config" / "agent-cli" / "config.toml").write_text('[approvals]\nallow = ["echo"]\n')
    with FakeModelServer() as server:
        server.queue(Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo ran-it"})]), Reply("done"))
        done = run_agent(["-p", "go", "--sandbox", mode], home, agent_env(home, server))
        ((text, is_error),) = tool_results(server.requests).values()
    assert done.returncode == 0, done.stderr
    if mode == "off":
        assert not is_error and "ran-it" in text
        assert "no sandbox" not in done.stderr
        return
    assert is_error and "ran-it" not in text and "no sandbox here" in text
    assert "no sandbox (" in done.stderr and "every one is asked" in done.stderr


class _Outside:
    """An approver that answers like the user's [o]: this call, outside the sandbox."""

    def __init__(self, unconfined: bool) -> None:
        self.unconfined = unconfined

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        return Decision(True, unconfined=self.unconfined)


@needs_bwrap
@pytest.mark.parametrize("unconfined", [True, False])
def test_a_call_approved_outside_the_sandbox_runs_unconfined(
    unconfined: bool, project: Path, home: Path, outside: Path
) -> None:
    sandbox = Confinement.for_session(
        "workspace-write", project, home=home, state_dir=home / ".state", verdict=VERDICT
    )
    runner = ToolRunner(default_tools(), _Outside(unconfined), Hooks())
    target = outside / "approved.txt"
    steps = runner.run(
        ToolUse("toolu_1", "bash", {"command": f"echo x > {target}"}),
        ToolContext(root=project, sandbox=sandbox),
    )
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            output, _ = stop.value
            break
    assert target.exists() is unconfined
    assert ("denied by the sandbox" in output.content) is not unconfined


@needs_bwrap
@pytest.mark.parametrize("from_project", [True, False])
def test_a_projects_hook_runs_in_the_sandbox_and_the_users_own_does_not(
    from_project: bool, project: Path, home: Path, outside: Path
) -> None:
    sandbox = Confinement.for_session(
        "workspace-write", project, home=home, state_dir=home / ".state", verdict=VERDICT
    )
    target = outside / "hooked.txt"
    spec = HookSpec(
        event="Stop", command=f"echo x > {target}; echo in > {project}/hook.txt", project=from_project
    )
    hooks = UserHooks(
        [spec], root=project, env={"PATH": os.environ["PATH"], "HOME": str(home)}, sandbox=sandbox
    )
    hooks.follow(Place("s-1", project / ".transcripts" / "s-1" / "session.jsonl"))
    hooks.on_stop("done")
    assert (project / "hook.txt").read_text() == "in\n"  # the project stays writable to it
    assert target.exists() is not from_project


@needs_bwrap
def test_the_users_own_command_runs_outside_the_sandbox(project: Path, home: Path, outside: Path) -> None:
    sandbox = Confinement.for_session(
        "workspace-write", project, home=home, state_dir=home / ".state", verdict=VERDICT
    )
    runner = ToolRunner(default_tools(), _Outside(False), Hooks())
    target = outside / "typed.txt"
    use = ToolUse("user_1", "bash", {"command": f"echo x > {target}"})
    output = runner.run_for_user(use, ToolContext(root=project, sandbox=sandbox))
    assert not output.is_error and target.read_text() == "x\n"


@needs_bwrap
@pytest.mark.parametrize("boxed", [True, False])
def test_the_users_own_hook_with_sandbox_true_runs_in_the_sandbox(
    boxed: bool, project: Path, home: Path, outside: Path, tmp_path: Path
) -> None:
    """A hook of the user's `--config` file: with `sandbox = true` it cannot write outside the
    project (it still writes inside); without the key it runs as the user and can."""
    target = outside / "hooked.txt"
    config = tmp_path / "config.toml"
    key = "sandbox = true\n" if boxed else ""
    config.write_text(f'[[hooks.Stop]]\ncommand = "echo x > {target}; echo in > {project}/hook.txt"\n{key}')
    with FakeModelServer() as server:
        server.queue(Reply("ok"))
        done = run_agent(
            ["-p", "hi", "--config", str(config), "--yes", "--sandbox", "workspace-write"],
            project,
            agent_env(home, server),
        )
    assert done.returncode == 0, done.stderr
    assert (project / "hook.txt").read_text() == "in\n"  # it ran, and the project stays writable
    assert target.exists() is not boxed, done.stderr


@needs_bwrap
@pytest.mark.parametrize(
    ("source", "mode"),
    [
        ("project", "workspace-write"),
        ("project", "off"),
        ("user", "workspace-write"),
        ("user-boxed", "workspace-write"),
        ("user-boxed", "off"),
    ],
)
def test_a_projects_stdio_mcp_server_runs_in_the_sandbox(
    source: str, mode: str, project: Path, home: Path, outside: Path, tmp_path: Path
) -> None:
    """The server writes its pid file outside the project at start: refused in the sandbox (so it
    does not start), written with the sandbox off or for the user's own server, unless the user's
    table says `sandbox = true`."""
    pidfile = outside / "server.pid"
    config = tmp_path / "config.toml"
    if source == "project":
        definition = {"command": sys.executable, "args": [str(SERVER), "--pidfile", str(pidfile)]}
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": definition}}))
        config.write_text("")
    else:
        table = stdio_table("proj", "--pidfile", str(pidfile))
        config.write_text(table + ("sandbox = true\n" if source == "user-boxed" else ""))
    with FakeModelServer() as server:
        server.queue(Reply("ok"))
        done = run_agent(
            ["-p", "hi", "--config", str(config), "--yes", "--sandbox", mode],
            project,
            agent_env(home, server),
        )
    assert done.returncode == 0, done.stderr
    confined = source != "user" and mode != "off"
    assert pidfile.exists() is not confined, done.stderr
    if confined:
        assert "MCP server proj did not start" in done.stderr

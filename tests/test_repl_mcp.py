"""MCP servers in the REPL, through a pseudo-terminal: a project's server is asked about once at
start, its tools are called with the user's approval, `/mcp` lists it, what it sends reaches the
screen without its escape sequences, and it stops with the REPL. The approval is remembered: the
next headless run starts the server without asking.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env, run_agent, tool_results
from tests.mcp_servers.helpers import SERVER, gone_soon
from tests.reliability.procs import spawn_repl
from tests.test_repl_pty import ANSI, expect

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e


def test_a_project_server_in_the_repl(tmp_path: Path, fake_server: FakeModelServer) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    pidfile = tmp_path / "pid"
    server = {"command": sys.executable, "args": [str(SERVER), "--pidfile", str(pidfile)]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": server}}))
    env = agent_env(home, fake_server)
    env.pop("NO_COLOR", None)
    env["TERM"] = "xterm-256color"
    # The server's pid is checked on the host below: outside the sandbox's PID namespace (the
    # server in the sandbox: tests/test_e2e_sandbox.py).
    config = home / ".config" / "agent-cli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[sandbox]\nmode = "off"\n')
    fake_server.queue(
        Reply(tool_calls=[ToolCallSpec("mcp__proj__search", {"query": "alpha"}, id="s1")]),
        Reply(tool_calls=[ToolCallSpec("mcp__proj__evil", {}, id="e1")]),
        Reply("All done with the notes."),
    )
    child = spawn_repl(project, env, timeout=90)
    seen = io.StringIO()
    child.logfile_read = seen
    try:
        expect(child, "asks to start the MCP server")
        assert not pidfile.exists(), "started before the user answered"
        child.send("y")
        expect(child, "auto-compact at ")
        child.send("search the notes\r")
        expect(child, r"allow\? \[y\]es")
        child.send("y")
        expect(child, "mcp__proj__evil")  # (shown only once the first call ran)
        expect(child, r"allow\? \[y\]es")
        child.send("y")
        expect(child, "All done with the notes")
        child.send("/mcp\r")
        expect(child, "mcp__proj__evil")
        shown = ANSI.sub("", child.before)
        assert "proj  connected  (project:" in shown
        assert "mcp__proj__search" in shown
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    results = tool_results(fake_server.requests)
    assert "found 'alpha'" in results["s1"][0]
    assert "\x1b]52" in results["e1"][0]  # the model reads what the server sent, as sent
    screen = seen.getvalue()
    assert "\x1b]52" not in screen and "\x1b]0;pwned" not in screen  # the terminal never gets it raw
    assert "Escapes\\x1b[31m in red" in ANSI.sub("", screen)  # /mcp: the description, written out
    assert gone_soon(int(pidfile.read_text())), "the server outlived the REPL"

    # Approved once in the REPL: a headless run starts it without --yes.
    pidfile.unlink()
    fake_server.queue(Reply("Fine."))
    r = run_agent(["-p", "hi"], project, agent_env(home, fake_server))
    assert r.returncode == 0, r.stderr
    assert "not approved" not in r.stderr
    assert pidfile.exists()

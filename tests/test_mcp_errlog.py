"""A stdio MCP server's stderr log (issue 35, item 5): one per project and server, and bounded.
It grew without bound in one file every project shared (`<state>/mcp-logs/mcp-NAME.log`)."""

from __future__ import annotations

import time
from pathlib import Path

from agent_cli.mcp_client.errlog import CAP, errlog_dir, open_errlog
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.e2e import agent_env, run_agent
from tests.mcp_servers.helpers import stdio_table


def _settled(path: Path, needle: bytes, seconds: float = 60) -> bytes:
    """The log once `needle` reached it (the copying thread writes as the pipe gives)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and needle in path.read_bytes():
            return path.read_bytes()
        time.sleep(0.05)
    raise AssertionError(f"{needle!r} never reached {path}")


def test_a_log_turns_over_past_its_cap_and_keeps_the_latest(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    errlog = open_errlog(folder, "chatty", cap=4096)
    for i in range(2000):
        errlog.write(f"line {i:05d} of a chatty server\n")
        if i % 100 == 0:
            errlog.flush()  # (in pieces, as a server writes)
    errlog.write("THE-LAST-LINE\n")
    errlog.close()
    latest = _settled(folder / "chatty.log", b"THE-LAST-LINE")
    older = (folder / "chatty.log.1").read_bytes()
    assert len(latest) <= 4096 and len(older) <= 4096
    assert sorted(p.name for p in folder.iterdir()) == ["chatty.log", "chatty.log.1"]
    assert (folder.stat().st_mode & 0o777, (folder / "chatty.log").stat().st_mode & 0o777) == (0o700, 0o600)


def test_each_project_has_its_own_bounded_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = tmp_path / "config.toml"
    config.write_text(stdio_table("notes", "--stderr-lines", "9000"))  # ~800 KB at each start
    state = home / ".state" / "agent-cli"
    logs = []
    with FakeModelServer(default=Reply("Fine.")) as server:
        for name in ("one", "two"):
            project = tmp_path / name
            project.mkdir()
            for _ in range(2):
                r = run_agent(["-p", "hi", "--config", str(config)], project, agent_env(home, server))
                assert r.returncode == 0, r.stderr
            logs.append(errlog_dir(state, project) / "notes.log")
    assert not (state / "mcp-logs" / "mcp-notes.log").exists()  # was: one file for every project
    for log in logs:
        _settled(log, b"log line 008999")
        total = sum(p.stat().st_size for p in log.parent.iterdir())
        assert total <= 2 * CAP, total  # was 3.2 MB after these four runs, and growing
    assert logs[0].parent != logs[1].parent

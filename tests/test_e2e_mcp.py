"""MCP servers end to end: `agent -p` against the fake model and real MCP servers (tests/mcp_servers).

The model lists a stdio and an HTTP server's tools, calls them and reads their results; a 2 MB
result is capped by L0 and recallable; a server that crashes mid-call, one that never answers and
one that is not there are each one warning line and a finished run; 600 tools are deferred behind
tool_search; a project's `.mcp.json` server does not start unapproved and starts once approved.
The servers' processes end with the agent.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from tests.e2e import agent_cmd, agent_env, run_agent, tool_results
from tests.mcp_servers.helpers import SERVER, gone_soon, http_server, stdio_table

pytestmark = pytest.mark.e2e


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def offered(request: RecordedRequest) -> dict[str, Any]:
    return {t["name"]: t for t in request.body.get("tools", [])}


def run(
    project: Path, home: Path, server: FakeModelServer, config: str, *flags: str, timeout: float = 300
) -> Any:
    path = project.parent / "config.toml"
    path.write_text(config)
    args = ["-p", "use the notes", "--config", str(path), *flags]
    return run_agent(args, project, agent_env(home, server), timeout=timeout)


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "MCP server" in line]


def test_stdio_server_tools_are_listed_called_and_stopped(
    project: Path, home: Path, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    config = stdio_table("notes", "--pidfile", str(pidfile), env='{ NOTES_DIR = "/data/notes" }')
    fake_server.queue(
        Reply(tool_calls=[ToolCallSpec("mcp__notes__search", {"query": "alpha"}, id="c1")]),
        Reply(tool_calls=[ToolCallSpec("mcp__notes__fail", {}, id="c2")]),
        Reply("Found it."),
    )
    r = run(project, home, fake_server, config, "--yes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("Found it.")
    tools = offered(fake_server.requests[0])
    # Every page of the listing was read (the server lists 3 at a time).
    assert {f"mcp__notes__{n}" for n in ("search", "whoami", "big", "fail", "crash", "hang", "evil")} <= set(
        tools
    )
    assert tools["mcp__notes__search"]["input_schema"]["properties"] == {"query": {"type": "string"}}
    results = tool_results(fake_server.requests)
    text, is_error = results["c1"]
    assert not is_error
    assert "found 'alpha' in /data/notes" in text  # env reached the server
    assert '"hits": 2' in text  # the structured content, as JSON
    assert results["c2"] == ("Error: the notes index is locked", True)
    assert gone_soon(int(pidfile.read_text())), "the server outlived the agent"


def test_http_server_gets_the_headers_and_a_2mb_result_is_capped_and_recallable(
    project: Path, home: Path, fake_server: FakeModelServer
) -> None:
    with http_server() as url:
        config = f'[mcp.servers.web]\nurl = "{url}"\nheaders = {{ Authorization = "Bearer tok-123" }}\n'
        fake_server.queue(
            Reply(tool_calls=[ToolCallSpec("mcp__web__whoami", {}, id="w1")]),
            Reply(tool_calls=[ToolCallSpec("mcp__web__big", {"size": 2_000_000}, id="b1")]),
            Reply(tool_calls=[ToolCallSpec("recall", {"query": "NEEDLE-7f3a"}, id="r1")]),
            Reply("Done."),
        )
        r = run(project, home, fake_server, config, "--yes")
    assert r.returncode == 0, r.stderr
    results = tool_results(fake_server.requests)
    assert results["w1"] == ("auth=Bearer tok-123", False)
    big, is_error = results["b1"]
    assert not is_error
    assert 1000 < len(big) < 200_000, len(big)  # L0 cut it (the whole was 2 MB, over the SDK's 1 MiB)
    assert "recall" in big
    recalled, _ = results["r1"]
    assert "NEEDLE-7f3a" in recalled


def test_crash_hang_and_missing_servers_are_one_line_each_and_the_run_finishes(
    project: Path, home: Path, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    pidfile = tmp_path / "hang-pid"
    config = (
        stdio_table("crashy")
        + stdio_table("slow", "--pidfile", str(pidfile), timeout=2)
        + '[mcp.servers.missing]\ncommand = "/nonexistent/mcp-server"\n'
        + '[mcp.servers.nohttp]\nurl = "http://127.0.0.1:9/mcp"\ntimeout = 5\n'
    )
    fake_server.queue(
        Reply(tool_calls=[ToolCallSpec("mcp__crashy__crash", {}, id="x1")]),
        Reply(tool_calls=[ToolCallSpec("mcp__crashy__search", {"query": "q"}, id="x2")]),
        Reply(tool_calls=[ToolCallSpec("mcp__slow__hang", {}, id="h1")]),
        Reply("Survived."),
    )
    r = run(project, home, fake_server, config, "--yes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("Survived.")
    assert "Traceback" not in r.stderr + r.stdout
    said = warnings(r.stderr)
    assert sum("missing did not start" in line for line in said) == 1, said
    assert sum("nohttp did not start" in line for line in said) == 1, said
    assert sum("crashy" in line for line in said) == 1, said  # the crash; the next call is told it is gone
    assert sum("slow" in line and "2 s" in line for line in said) == 1, said
    results = tool_results(fake_server.requests)
    assert all(results[k][1] for k in ("x1", "x2", "h1")), results
    assert "no answer within 2 s" in results["h1"][0]
    assert "not running" in results["x2"][0]
    assert "mcp__missing" not in " ".join(offered(fake_server.requests[0]))
    assert gone_soon(int(pidfile.read_text())), "the hung server outlived the agent"


def test_600_tools_are_deferred_behind_tool_search(
    project: Path, home: Path, fake_server: FakeModelServer
) -> None:
    config = stdio_table("big", "--tools", "600", "--page", "50")
    fake_server.queue(
        Reply(tool_calls=[ToolCallSpec("mcp__big__filler_0007", {"record": "r"}, id="early")]),
        Reply(tool_calls=[ToolCallSpec("tool_search", {"query": "select:mcp__big__filler_0007"}, id="s1")]),
        Reply(tool_calls=[ToolCallSpec("tool_search", {"query": "invoices records"}, id="s2")]),
        Reply(tool_calls=[ToolCallSpec("mcp__big__filler_0007", {"record": "r7"}, id="t1")]),
        Reply("Looked up."),
    )
    r = run(project, home, fake_server, config, "--yes")
    assert r.returncode == 0, r.stderr
    first = offered(fake_server.requests[0])
    assert "tool_search" in first
    assert not any(name.startswith("mcp__") for name in first)
    waiting = re.search(r"(\d+) tools are waiting", first["tool_search"]["description"])
    assert waiting is not None and int(waiting.group(1)) >= 600  # all of them, the test server's own too
    results = tool_results(fake_server.requests)
    assert results["early"][1] and "tool_search" in results["early"][0]
    loaded = json.loads(results["s1"][0].split("\n", 1)[1])
    assert (
        loaded[0]["name"] == "mcp__big__filler_0007" and "record" in loaded[0]["input_schema"]["properties"]
    )
    assert "invoices" in results["s2"][0]
    assert results["t1"] == ("filler_0007 record r7: ok", False)
    later = offered(fake_server.requests[3])
    assert "mcp__big__filler_0007" in later and len(later) < 40


def test_sixty_servers_tools_are_deferred_behind_tool_search(
    project: Path, home: Path, fake_server: FakeModelServer
) -> None:
    """Sixty servers (one HTTP server process behind sixty names, ten tools and more each): none of
    their tools crowds the first request; the model finds one server's tool and calls it."""
    with http_server("--tools", "10", "--page", "5") as url:
        config = "".join(f'[mcp.servers.s{n:02}]\nurl = "{url}"\n' for n in range(60))
        fake_server.queue(
            Reply(
                tool_calls=[ToolCallSpec("tool_search", {"query": "select:mcp__s42__filler_0003"}, id="s1")]
            ),
            Reply(tool_calls=[ToolCallSpec("mcp__s42__filler_0003", {"record": "r3"}, id="t1")]),
            Reply("Found it."),
        )
        r = run(project, home, fake_server, config, "--yes", timeout=400)
    assert r.returncode == 0, r.stderr
    first = offered(fake_server.requests[0])
    assert "tool_search" in first and not any(name.startswith("mcp__") for name in first)
    waiting = re.search(r"(\d+) tools are waiting", first["tool_search"]["description"])
    assert waiting is not None and int(waiting.group(1)) >= 600, first["tool_search"]["description"][:200]
    results = tool_results(fake_server.requests)
    assert results["t1"] == ("filler_0003 record r3: ok", False)
    assert "mcp__s42__filler_0003" in offered(fake_server.requests[2])


def test_a_project_server_starts_only_once_approved(
    project: Path, home: Path, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    import sys

    pidfile = tmp_path / "project-pid"
    definition = {"command": sys.executable, "args": [str(SERVER), "--pidfile", str(pidfile)]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": definition}}))
    config = tmp_path / "empty.toml"
    config.write_text("")
    env = agent_env(home, fake_server)

    fake_server.queue(Reply("No tools."))
    r = run_agent(["-p", "hi", "--config", str(config)], project, env)
    assert r.returncode == 0, r.stderr
    said = warnings(r.stderr)
    assert len(said) == 1 and "not approved" in said[0] and "--yes" in said[0], said
    assert not pidfile.exists(), "an unapproved project server was started"
    assert not any(n.startswith("mcp__") for n in offered(fake_server.requests[0]))

    # Approved once for this project (as the REPL's question does), it starts headless too.
    spec_definition = {
        "command": sys.executable,
        "args": [str(SERVER), "--pidfile", str(pidfile)],
        "env": {},
        "url": None,
        "headers": {},
        "timeout": 60.0,
    }
    ProjectApprovals.for_user(env, project).approve("mcp", "proj", spec_definition)
    fake_server.queue(
        Reply(tool_calls=[ToolCallSpec("mcp__proj__search", {"query": "z"}, id="p1")]), Reply("ok")
    )
    r = run_agent(["-p", "hi", "--config", str(config), "--yes"], project, env)
    assert r.returncode == 0, r.stderr
    assert warnings(r.stderr) == []
    assert tool_results(fake_server.requests)["p1"][1] is False
    assert pidfile.exists()

    # A changed definition is not the approved one.
    pidfile.unlink()
    definition["args"].append("--page=5")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": definition}}))
    fake_server.queue(Reply("No tools."))
    r = run_agent(["-p", "hi", "--config", str(config)], project, env)
    assert "not approved" in r.stderr and not pidfile.exists()


def test_allow_list_names_a_whole_tool(project: Path, home: Path, fake_server: FakeModelServer) -> None:
    config = stdio_table("notes") + '[approvals]\nallow = ["mcp__notes__search"]\n'
    fake_server.queue(
        Reply(tool_calls=[ToolCallSpec("mcp__notes__search", {"query": "a"}, id="a1")]),
        Reply(tool_calls=[ToolCallSpec("mcp__notes__whoami", {}, id="a2")]),
        Reply("ok"),
    )
    r = run(project, home, fake_server, config)
    assert r.returncode == 0, r.stderr
    results = tool_results(fake_server.requests)
    assert results["a1"][1] is False
    assert results["a2"][1] is True and "approvals.allow" in results["a2"][0]


def test_bad_mcp_config_is_one_line_and_exit_2(
    project: Path, home: Path, fake_server: FakeModelServer
) -> None:
    r = run(project, home, fake_server, '[mcp.servers.notes]\ncommnd = "x"\n')
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "did you mean command?" in r.stderr and "config.toml:" in r.stderr
    r = run(project, home, fake_server, '[mcp.servers.notes]\ncommand = "x"\nurl = "http://h/mcp"\n')
    assert r.returncode == 2 and "not both" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_server_outlives_an_agent_stopped_mid_call(
    project: Path, home: Path, fake_server: FakeModelServer, tmp_path: Path, sig: signal.Signals
) -> None:
    pidfile = tmp_path / "pid"
    config = project.parent / "config.toml"
    config.write_text(stdio_table("slow", "--pidfile", str(pidfile), timeout=60))
    fake_server.queue(Reply(tool_calls=[ToolCallSpec("mcp__slow__hang", {})]), Reply("never"))
    proc = subprocess.Popen(
        agent_cmd("-p", "go", "--config", str(config), "--yes"),
        cwd=project,
        env=agent_env(home, fake_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300  # an agent's start-up takes a minute on a very busy machine
        while not fake_server.requests and time.monotonic() < deadline:  # the call is on its way
            time.sleep(0.1)
        time.sleep(1.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert proc.returncode in (128 + sig, -sig), err
    assert "Traceback" not in err, err
    assert gone_soon(int(pidfile.read_text())), "the server outlived the agent"

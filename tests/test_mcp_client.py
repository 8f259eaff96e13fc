"""The MCP client's pure parts, table-driven: the config tables and `.mcp.json`, tool names, the
deferral rule and tool_search, whole-tool allow-list entries; and `agent mcp list` against a real
server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import HeadlessApprover, InteractiveApprover
from agent_cli.config.raw_tables import RawTable
from agent_cli.core.errors import ConfigError
from agent_cli.core.requests import ToolSpec
from agent_cli.mcp_client.config import mcp_json_specs, read_mcp_json, server_specs, table_specs
from agent_cli.mcp_client.tools import tool_name
from agent_cli.tools.base import CallView, ToolContext, ToolOutput, ToolRegistry
from agent_cli.tools.tool_search import ToolSearch, should_defer
from tests.e2e import agent_env
from tests.mcp_servers.helpers import stdio_table


def table(servers: dict[str, Any], *, project: bool = False, **extra: Any) -> RawTable:
    return RawTable("mcp", {"servers": servers, **extra}, Path("/u/config.toml"), project=project)


def test_a_stdio_and_an_http_server() -> None:
    specs = table_specs(
        (
            table(
                {
                    "notes": {"command": "python3", "args": ["s.py"], "env": {"A": "1"}, "timeout": 5},
                    "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer x"}},
                }
            ),
        )
    )
    notes, web = specs["notes"], specs["web"]
    assert (notes.command, notes.args, dict(notes.env), notes.timeout) == (
        "python3",
        ("s.py",),
        {"A": "1"},
        5.0,
    )
    assert notes.transport == "stdio" and web.transport == "http" and web.timeout == 60.0
    assert dict(web.headers) == {"Authorization": "Bearer x"}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"commnd": "x"}, "unknown key 'commnd'; did you mean command?"),
        ({}, "needs command (a subprocess) or url"),
        ({"command": "x", "url": "http://h/mcp"}, "not both"),
        ({"command": ""}, "command must be a non-empty string"),
        ({"command": "x", "args": "s.py"}, "args must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "env must be a table of strings"),
        ({"url": "ftp://h"}, "url must be an http:// or https:// URL"),
        ({"command": "x", "timeout": 0}, "timeout must be a number of seconds above 0"),
        ({"command": "x", "timeout": True}, "timeout must be a number"),
        ({"command": "x", "headers": {"A": "b"}}, "headers go with url"),
        ({"command": "x", "sandbox": "yes"}, "sandbox must be true or false"),
        ({"url": "http://h/mcp", "sandbox": True}, "sandbox goes with command"),
    ],
)
def test_a_bad_server_table_is_one_line(body: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        table_specs((table({"notes": body}),))
    message = str(caught.value)
    assert said in message and "\n" not in message and message.startswith("/u/config.toml")


def test_other_keys_of_mcp_and_bad_names_are_errors() -> None:
    with pytest.raises(ConfigError, match=r"unknown key mcp\.server"):
        table_specs((RawTable("mcp", {"server": {}}, Path("c.toml")),))
    with pytest.raises(ConfigError, match="server name"):
        table_specs((table({"my notes": {"command": "x"}}),))


def test_sandbox_true_confines_the_users_own_server_and_a_projects_is_confined_anyway() -> None:
    specs = table_specs((table({"boxed": {"command": "a", "sandbox": True}, "plain": {"command": "b"}}),))
    assert specs["boxed"].confined and not specs["plain"].confined
    proj = table_specs((table({"p": {"command": "a", "sandbox": False}}, project=True),))["p"]
    assert proj.confined  # a project's `sandbox = false` cannot take it out


def test_later_tables_win_and_project_tables_are_marked() -> None:
    specs = table_specs((table({"n": {"command": "a"}}), table({"n": {"command": "b"}}, project=True)))
    assert specs["n"].command == "b" and specs["n"].project


def test_mcp_json_in_claude_code_s_format(tmp_path: Path) -> None:
    document = {
        "mcpServers": {
            "local": {"command": "node", "args": ["s.js"], "env": {"K": "v"}},
            "remote": {"type": "http", "url": "https://example.test/mcp", "headers": {"X": "y"}},
            "broken": {"type": "stdio"},
        }
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(document))
    specs, notes = read_mcp_json(tmp_path)
    assert set(specs) == {"local", "remote"}
    assert all(s.project for s in specs.values())
    assert specs["remote"].url == "https://example.test/mcp"
    assert len(notes) == 1 and "'broken' is not started" in notes[0]
    # The user's own table of the same name wins over the project's file.
    mine = table({"local": {"command": "mine"}})
    merged, _ = server_specs((mine,), tmp_path)
    assert next(s for s in merged if s.name == "local").command == "mine"


def test_mcp_json_that_is_not_a_file_or_not_json(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json")
    assert "not valid JSON" in read_mcp_json(tmp_path)[1][0]
    (tmp_path / ".mcp.json").unlink()
    outside = tmp_path.parent / "elsewhere.json"
    outside.write_text(json.dumps({"mcpServers": {"x": {"command": "evil"}}}))
    (tmp_path / ".mcp.json").symlink_to(outside)
    specs, notes = read_mcp_json(tmp_path)
    assert specs == {} and "outside the project" in notes[0]
    assert mcp_json_specs([], ".mcp.json")[0] == {}


def test_tool_names_keep_to_what_the_apis_take() -> None:
    assert tool_name("notes", "search") == "mcp__notes__search"
    assert tool_name("notes", "find.all files") == "mcp__notes__find_all_files"
    assert len(tool_name("n" * 40, "t" * 80)) == 64


class Named:
    approval = "ask"
    view = CallView()

    def __init__(self, name: str, description: str) -> None:
        self.spec = ToolSpec(name, description, {"type": "object", "properties": {"q": {"type": "string"}}})

    def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(f"{self.spec.name} ran")


def test_deferral_rule() -> None:
    specs = [Named(f"t{i}", "d").spec for i in range(10)]
    assert should_defer(specs, lambda s: 100 * len(s), working=5_000)  # 1000 > 500
    assert not should_defer(specs, lambda s: 100 * len(s), working=20_000)
    assert not should_defer([], lambda s: 10**9, working=1)


def test_tool_search_loads_matching_tools() -> None:
    registry = ToolRegistry()
    for i, topic in enumerate(["weather forecast", "invoice totals", "calendar events"] * 4):
        registry.defer(Named(f"mcp__s__tool_{i}", f"Look up {topic}"))
    search = ToolSearch(registry)
    registry.add(search)
    ctx = ToolContext(root=Path("."))
    assert registry.specs() == (search.spec,)
    assert "12 tools" in search.spec.description
    blocked = registry.run("mcp__s__tool_1", {}, ctx)
    assert blocked.is_error and "tool_search" in blocked.content
    out = search.run({"query": "invoice"}, ctx)
    loaded = json.loads(out.content.split("\n", 1)[1])
    assert {t["name"] for t in loaded} == {
        "mcp__s__tool_1",
        "mcp__s__tool_4",
        "mcp__s__tool_7",
        "mcp__s__tool_10",
    }
    assert loaded[0]["input_schema"]["properties"] == {"q": {"type": "string"}}
    assert "mcp__s__tool_1" in [s.name for s in registry.specs()]
    assert registry.run("mcp__s__tool_1", {}, ctx).content == "mcp__s__tool_1 ran"
    assert "No tool" in search.run({"query": "zebra"}, ctx).content
    picked = search.run({"query": "select:mcp__s__tool_2"}, ctx)
    assert '"mcp__s__tool_2"' in picked.content and len(registry.deferred()) == 7


def test_an_allow_list_entry_naming_a_tool_runs_it_without_asking() -> None:
    approval_of = {"mcp__notes__search": "ask", "mcp__notes__write": "ask", "bash": "command"}.__getitem__
    headless = HeadlessApprover(["mcp__notes__search", "bash"], approval_of=approval_of)  # type: ignore[arg-type]
    assert headless.decide("mcp__notes__search", {"q": "x"}).allowed
    refused = headless.decide("mcp__notes__write", {})
    assert not refused.allowed and "approvals.allow" in refused.reason
    assert not headless.decide("bash", {"command": "rm -rf /"}).allowed  # bash only by command prefix

    asked: list[str] = []

    def ask(name: str, args: Any, always: str | None) -> Any:
        asked.append(name)
        return "no"

    repl = InteractiveApprover(ask, ["mcp__notes__search"], approval_of=approval_of)  # type: ignore[arg-type]
    assert repl.decide("mcp__notes__search", {}).allowed and asked == []
    assert not repl.decide("mcp__notes__write", {}).allowed and asked == ["mcp__notes__write"]


def test_agent_mcp_list(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"theirs": {"command": "/bin/false"}}}))
    config = tmp_path / "c.toml"
    config.write_text(stdio_table("notes") + '[mcp.servers.gone]\ncommand = "/nonexistent/x"\n')
    env = agent_env(tmp_path / "home")
    cmd = [sys.executable, "-m", "agent_cli", "mcp", "list", "--config", str(config)]
    r = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("notes  connected") for line in lines)
    assert "  mcp__notes__search  Search the notes for words." in lines
    assert any(line.startswith("gone  failed: FileNotFoundError") for line in lines)
    assert [line.split("  ")[:2] for line in lines if line.startswith("theirs")] == [
        ["theirs", "awaiting approval"]
    ]
    assert "\x1b" not in r.stdout and "Escapes\\x1b[31m" in r.stdout
    config.write_text('[mcp.servers.x]\nurl = "nope"\n')
    r = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "url must be" in r.stderr and r.stderr.count("\n") == 1


def test_the_servers_schemas_count_in_the_frame(tmp_path: Path) -> None:
    from agent_cli.app import open_session
    from agent_cli.config.load import Flags, load_settings
    from agent_cli.testing.scripted import ScriptedProvider

    env = agent_env(tmp_path / "home")
    env["ANTHROPIC_API_KEY"] = "sk-ant-test-key-0123456789"
    project = tmp_path / "p"
    project.mkdir()
    counts = []
    for text in ("", stdio_table("notes")):
        config = tmp_path / "c.toml"
        config.write_text(text)
        settings = load_settings(config_path=config, env=env, flags=Flags(), cwd=project)
        session = open_session(settings, env=env, make_provider=lambda p: ScriptedProvider([]))
        try:
            list(session.connect())  # (the servers connect in the background; their tools join here)
            counts.append(session.breakdown().tools)
            names = session.tools.names()
        finally:
            session.close()
    assert "mcp__notes__search" in names
    assert counts[1] > counts[0] + 50, counts


def test_a_result_over_the_http_event_limit_is_a_tool_error_that_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A late answer over HTTP comes as one SSE event: 2 MB of it arrives whole under the raised
    limit, and under the SDK's own 1 MiB it is a tool error that says why (the server lives on)."""
    from concurrent.futures import ThreadPoolExecutor

    from agent_cli.mcp_client import runtime
    from agent_cli.mcp_client.config import ServerSpec
    from agent_cli.mcp_client.servers import McpServers
    from agent_cli.store.project_approvals import ProjectApprovals
    from tests.mcp_servers.helpers import http_server

    approvals = ProjectApprovals(tmp_path / "a.json", tmp_path)
    ctx = ToolContext(root=tmp_path)
    with http_server() as url:
        raised, _ = McpServers.start(
            [ServerSpec("web", url=url, timeout=40)], approvals=approvals, ask=None, yes=False, state=tmp_path
        )
        monkeypatch.setattr(runtime, "MAX_EVENT_BYTES", 1024 * 1024)  # the SDK's own default
        small, notes = McpServers.start(
            [ServerSpec("web", url=url, timeout=40)], approvals=approvals, ask=None, yes=False, state=tmp_path
        )
        try:
            assert notes == []

            def call(servers: McpServers, name: str) -> ToolOutput:
                return next(t for t in servers.tools if t.spec.name == name).run({}, ctx)

            with ThreadPoolExecutor(2) as pool:
                whole, refused = pool.map(lambda s: call(s, "mcp__web__ssebig"), [raised, small])
            assert not whole.is_error and "NEEDLE-7f3a" in whole.content and len(whole.content) >= 1_999_000
            assert (
                refused.is_error and "1 MiB" in refused.content and "did not arrive whole" in refused.content
            )
            after = call(small, "mcp__web__whoami")  # the server is still there
            assert not after.is_error
        finally:
            raised.close()
            small.close()


def test_a_server_in_the_project_s_config_is_the_project_s(tmp_path: Path) -> None:
    from agent_cli.config.load import Flags, load_settings

    project = tmp_path / "p"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text('[mcp.servers.theirs]\ncommand = "/bin/true"\n')
    env = agent_env(tmp_path / "home")
    settings = load_settings(config_path=None, env=env, flags=Flags(), cwd=project)
    specs, _ = server_specs(settings.tables, project)
    assert [(s.name, s.project) for s in specs] == [("theirs", True)]
    assert specs[0].where.endswith("config.toml:1")


def test_a_server_that_never_answers_at_start_is_one_line_and_is_stopped(tmp_path: Path) -> None:
    import time

    from agent_cli.mcp_client.config import ServerSpec
    from agent_cli.mcp_client.servers import McpServers
    from agent_cli.store.project_approvals import ProjectApprovals
    from tests.reliability.procs import processes, wait_for

    pidfile = tmp_path / "pid"
    script = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(100)"
    spec = ServerSpec("mute", command=sys.executable, args=("-c", script), timeout=2)
    approvals = ProjectApprovals(tmp_path / "a.json", tmp_path)
    started = time.monotonic()
    servers, notes = McpServers.start([spec], approvals=approvals, ask=None, yes=False, state=tmp_path)
    try:
        assert time.monotonic() - started < 60  # given up at its 2 s, not after the server's 100 s
        assert notes == ["MCP server mute did not start (no answer within 2 s); going on without it"]
        assert servers.tools == [] and servers.states[0].state == "failed: no answer within 2 s"
    finally:
        servers.close()
    # By its command line (unique: it names this test's folder): on a busy machine it may have been
    # stopped before it ran a line, so before it wrote its pid.
    assert wait_for(lambda: not processes(sys.executable, "-c", script), 60), (
        "the silent server was left running"
    )


def test_a_server_that_answers_garbage_is_a_tool_error_and_one_warning(tmp_path: Path) -> None:
    from agent_cli.mcp_client.config import ServerSpec
    from agent_cli.mcp_client.servers import McpServers
    from agent_cli.store.project_approvals import ProjectApprovals
    from tests.mcp_servers.helpers import SERVER

    # 10 s: its start must fit in it too, which a busy machine may stretch to seconds.
    spec = ServerSpec("g", command=sys.executable, args=(str(SERVER),), timeout=10)
    approvals = ProjectApprovals(tmp_path / "a.json", tmp_path)
    said: list[str] = []
    servers, _ = McpServers.start(
        [spec], approvals=approvals, ask=None, yes=False, state=tmp_path, say=said.append
    )
    try:
        tools = {t.spec.name: t for t in servers.tools}
        ctx = ToolContext(root=tmp_path)
        out = tools["mcp__g__garbage"].run({}, ctx)
        assert tools["mcp__g__garbage"].run({}, ctx).is_error  # the same failure again: said once
        assert out.is_error and "no answer within 10 s" in out.content
        assert not tools["mcp__g__search"].run({"query": "q"}, ctx).is_error  # it still answers
        assert said == ["MCP server g: garbage failed: no answer within 10 s (its timeout)"]
    finally:
        servers.close()


def test_the_question_for_a_project_server_says_a_project_file_it_runs_is_not_pinned(tmp_path: Path) -> None:
    """Issue 35: `python3 server.py` approved once runs server.py as it is at each start."""
    from agent_cli.config.load import Flags, load_settings
    from agent_cli.extensions import start_mcp_servers
    from agent_cli.store.project_approvals import ProjectApprovals

    project = tmp_path / "p"
    project.mkdir()
    (project / "server.py").write_text("raise SystemExit(1)\n")
    servers = {"local": {"command": "python3", "args": ["server.py"]}, "other": {"command": "/bin/true"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = agent_env(tmp_path / "home")
    settings = load_settings(config_path=None, env=env, flags=Flags(), cwd=project)
    asked: dict[str, str] = {}

    def ask(name: str, args: Any, always: str | None) -> Any:
        asked[args["server"]] = args["question"]
        return "no"

    approvals = ProjectApprovals(tmp_path / "a.json", project)
    running, _ = start_mcp_servers(settings, env, ask, approvals)
    if running is not None:
        running.close()
    assert "It runs server.py, a file in this project" in asked["local"]
    assert "not the file, which runs as it is at each start" in asked["local"]
    assert "file in this project" not in asked["other"]

"""`agent -p` end to end: the real SDKs over HTTP against the fake server, in a temp project."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import Drop, FakeModelServer, Fault, Reply, ToolCallSpec
from tests.e2e import (
    ANTHROPIC_KEY,
    MODELS,
    OPENAI_KEY,
    agent_cmd,
    agent_env,
    run_agent,
    stream_events,
    transcript_blob,
)

pytestmark = pytest.mark.e2e
PROVIDERS = ["anthropic", "openai"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.txt").write_text("alpha line\nbeta line\n")
    return proj


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.mark.parametrize("provider", PROVIDERS)
def test_say_hi_prints_the_answer(provider: str, project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("Hi! How can I help?"))
        r = run_agent(
            ["-p", "say hi", "--provider", provider, "--model", MODELS[provider]],
            project,
            agent_env(home, server, provider),
        )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Hi! How can I help?"
    assert server.requests[0].api == provider


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_json_tool_round_and_no_key_on_disk(provider: str, project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"path": "a.txt"})]), Reply("It holds two lines.")
        )
        r = run_agent(
            [
                "-p",
                "Read a.txt",
                "--provider",
                provider,
                "--model",
                MODELS[provider],
                "--yes",
                "--output-format",
                "stream-json",
            ],
            project,
            agent_env(home, server, provider),
        )
    assert r.returncode == 0, r.stderr
    events = stream_events(r.stdout)
    assert all("type" in e for e in events)
    types = [e["type"] for e in events]
    for needed in ("tool_call", "tool_result", "assistant_text", "result"):
        assert needed in types
    result = events[-1]
    assert result["type"] == "result" and result["text"] == "It holds two lines."
    tool_result = next(e for e in events if e["type"] == "tool_result")
    assert "alpha line" in tool_result["content"]
    logs = list((project / ".transcripts").glob("*/session.jsonl"))
    assert len(logs) == 1
    assert oct(logs[0].stat().st_mode & 0o777) == "0o600"
    assert oct(logs[0].parent.stat().st_mode & 0o777) == "0o700"
    blob = transcript_blob(project)
    assert "alpha line" in blob
    assert ANTHROPIC_KEY not in blob and OPENAI_KEY not in blob and "E2ECANARY" not in blob


def test_json_output_is_one_object(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("done"))
        r = run_agent(["-p", "x", "--output-format", "json"], project, agent_env(home, server))
    assert r.returncode == 0, r.stderr
    payload = json.loads(r.stdout)
    assert payload["type"] == "result" and payload["text"] == "done" and payload["errors"] == []


def test_malformed_config_exits_2_naming_file_and_line(project: Path, home: Path) -> None:
    bad = project / "bad.toml"
    bad.write_text("[provider]\nname = 'anthropic'\n[context]\ntrigger_ratio = = 1\n")
    r = run_agent(["-p", "hi", "--config", str(bad)], project, agent_env(home))
    assert r.returncode == 2
    assert "bad.toml:4" in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_wrong_value_names_the_key(project: Path, home: Path) -> None:
    cfg = project / ".agent" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text("[context]\n\ntrigger_ratio = 'high'\n")
    r = run_agent(["-p", "hi"], project, agent_env(home))
    assert r.returncode == 2
    assert "config.toml:3" in r.stderr and "context.trigger_ratio" in r.stderr


@pytest.mark.parametrize(
    ("provider", "var"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
def test_missing_key_names_the_env_var(provider: str, var: str, project: Path, home: Path) -> None:
    r = run_agent(["-p", "hi", "--provider", provider], project, agent_env(home))
    assert r.returncode == 2
    assert var in r.stderr and "Traceback" not in r.stderr


def test_bad_output_format_is_a_usage_error(project: Path, home: Path) -> None:
    r = run_agent(["-p", "hi", "--output-format", "yaml"], project, agent_env(home))
    assert r.returncode == 2 and "--output-format" in r.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_survives_429_529_500_and_a_dropped_connection(provider: str, project: Path, home: Path) -> None:
    now = {"retry-after": "0"}
    with FakeModelServer() as server:
        server.queue(
            Drop(),
            Fault(429, "rate limited", headers=now),
            Fault(529 if provider == "anthropic" else 503, "overloaded", headers=now),
            Fault(500, "internal error", headers=now),
            Reply("made it"),
        )
        r = run_agent(
            [
                "-p",
                "go",
                "--provider",
                provider,
                "--model",
                MODELS[provider],
                "--output-format",
                "stream-json",
            ],
            project,
            agent_env(home, server, provider),
        )
    assert r.returncode == 0, r.stderr
    events = stream_events(r.stdout)
    assert [e["attempt"] for e in events if e["type"] == "retry"] == [1, 2, 3, 4]
    assert events[-1]["text"] == "made it"
    assert "cut off half way" not in r.stdout, "a half-received message must not be kept"


def test_exit_1_when_the_provider_keeps_failing(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Fault(401, "invalid x-api-key"))
        r = run_agent(["-p", "go"], project, agent_env(home, server))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and r.stderr.strip()


def test_headless_without_yes_denies_writes_readably(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("write_file", {"path": "new.txt", "content": "x"})]),
            Reply("could not write"),
        )
        r = run_agent(["-p", "write", "--output-format", "stream-json"], project, agent_env(home, server))
        sent = server.requests[1].body["messages"][-1]["content"][0]
    assert r.returncode == 0
    assert not (project / "new.txt").exists()
    assert sent["type"] == "tool_result" and sent["is_error"] and "--yes" in json.dumps(sent)


def test_kill_9_during_bash_then_continue(project: Path, home: Path) -> None:
    pidfile = project / "sleep.pid"
    with FakeModelServer() as server:
        env = agent_env(home, server)
        server.queue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"path": "a.txt"})]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": f"echo $$ > {pidfile}; exec sleep 600"})]),
        )
        proc = subprocess.Popen(
            # The sleeper's pid is the host's (killed below): outside the sandbox's PID namespace.
            agent_cmd("-p", "read then wait", "--yes", "--sandbox", "off"),
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 300  # an agent's start-up takes a minute on a very busy machine
            while not pidfile.exists() or not pidfile.read_text().strip():
                assert time.monotonic() < deadline and proc.poll() is None, "bash never started"
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(60)
        finally:
            sleeper = int(pidfile.read_text()) if pidfile.exists() and pidfile.read_text().strip() else 0
            if sleeper:
                os.killpg(sleeper, signal.SIGKILL)
        server.queue(Reply("finished after the crash"))
        r = run_agent(["-p", "go on", "--continue", "--yes"], project, env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "finished after the crash"
        body = server.requests[-1].body
    flat = json.dumps(body["messages"])
    assert "alpha line" in flat, "the tool result read before the crash is still there"
    results = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(results) == 2 and results[-1]["is_error"] and "interrupted" in json.dumps(results[-1])
    last_texts = [b.get("text", "") for b in body["messages"][-1]["content"]]
    assert any("go on" in t for t in last_texts)


def test_transcripts_commands(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        env = agent_env(home, server)
        server.queue(Reply("first answer about zebras"))
        assert run_agent(["-p", "tell me about zebras"], project, env).returncode == 0
    listing = run_agent(["transcripts", "list"], project, env, 60)
    assert listing.returncode == 0 and "zebras" in listing.stdout
    session_id = next(p.name for p in (project / ".transcripts").iterdir() if p.is_dir())
    shown = run_agent(["transcripts", "show", session_id[:12]], project, env, 60)
    assert shown.returncode == 0 and "first answer about zebras" in shown.stdout
    found = run_agent(["transcripts", "search", "ZEBRAS"], project, env, 60)
    assert found.returncode == 0 and session_id in found.stdout
    missing = run_agent(["transcripts", "show", "nope"], project, env, 60)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_version_and_help(project: Path, home: Path) -> None:
    v = run_agent(["--version"], project, agent_env(home), 30)
    assert v.returncode == 0 and v.stdout.startswith("agent-cli ")
    h = run_agent(["--help"], project, agent_env(home), 30)
    for flag in (
        "-p",
        "--provider",
        "--model",
        "--context-window",
        "--config",
        "--yes",
        "--output-format",
        "--continue",
        "--resume",
        "--version",
    ):
        assert flag in h.stdout


def test_unknown_model_warns_and_uses_a_conservative_window(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("fine"))
        r = run_agent(["-p", "x", "--model", "mystery-model-9"], project, agent_env(home, server))
    assert r.returncode == 0 and r.stdout.strip() == "fine"
    assert "mystery-model-9" in r.stderr and "32,000" in r.stderr and "--context-window" in r.stderr


def test_project_instructions_join_the_system_prompt(project: Path, home: Path) -> None:
    (project / "AGENTS.md").write_text("Always run the linter before committing.\n")
    (project / "CLAUDE.md").write_text("Prefer small functions.\n")
    with FakeModelServer() as server:
        server.queue(Reply("ok"))
        assert run_agent(["-p", "x"], project, agent_env(home, server)).returncode == 0
        system = json.dumps(server.requests[0].body["system"])
    assert "Always run the linter before committing." in system and "Prefer small functions." in system


def test_secrets_from_the_environment_reach_neither_disk_nor_model(project: Path, home: Path) -> None:
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    with FakeModelServer() as server:
        env = agent_env(home, server)
        env.update(AWS_SECRET_ACCESS_KEY=aws, MY_PASSWORD="hunter2hunter2")
        env.update(SSH_AUTH_SOCK="/tmp/ssh-x/agent.1")
        server.queue(Reply(tool_calls=[ToolCallSpec("bash", {"command": "env"})]), Reply("done"))
        # The redaction is the subject: the sandbox would not pass these variables in at all.
        r = run_agent(["-p", "show env", "--yes", "--sandbox", "off"], project, env)
        sent = json.dumps(server.requests[1].body)
    assert r.returncode == 0, r.stderr
    blob = transcript_blob(project)
    for secret in (aws, "hunter2hunter2", ANTHROPIC_KEY):
        assert secret not in blob and secret not in sent
    assert "[REDACTED]" in sent and "/tmp/ssh-x/agent.1" in sent  # a socket path is not a secret


def test_empty_prompt_is_a_usage_error(project: Path, home: Path) -> None:
    r = run_agent(["-p", "  "], project, agent_env(home))
    assert r.returncode == 2 and "-p needs a prompt" in r.stderr
    assert not (project / ".transcripts").exists()


@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_key_at_the_output_s_cut_reaches_neither_disk_nor_model(
    project: Path, home: Path, where: str
) -> None:
    """A command prints the configured key right where bash's 16 KiB + 16 KiB cut falls: no piece
    of it (16 characters or more) may reach the model, the session files or the user's state."""
    key = ANTHROPIC_KEY
    script = project / "leak.py"
    if where == "head":
        body = f"import sys\nsys.stdout.write('x' * (16 * 1024 - 20) + ' {key}\\n' + '.' * 100000)\n"
    else:
        body = f"import sys\nsys.stdout.write('.' * 100000 + '\\n{key}\\n' + 'y' * (16 * 1024 - 20))\n"
    script.write_text(body)
    with FakeModelServer() as server:
        server.queue(Reply(tool_calls=[ToolCallSpec("bash", {"command": "python3 leak.py"})]), Reply("done"))
        r = run_agent(["-p", "run leak.py", "--yes"], project, agent_env(home, server))
        sent = json.dumps([q.body for q in server.requests])
    assert r.returncode == 0, r.stderr
    on_disk = transcript_blob(project) + "".join(
        p.read_text(errors="replace") for p in home.rglob("*") if p.is_file()
    )
    pieces = [key[i : i + 16] for i in range(len(key) - 15)]
    assert [p for p in pieces if p in sent] == []
    assert [p for p in pieces if p in on_disk] == []
    assert "[REDACTED]" in sent

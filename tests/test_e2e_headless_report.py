"""Headless output in Claude Code's shapes, end to end against the fake server: stream-json opens
with the init event and ends with a result carrying the run's duration, turns, cost, usage and the
refused calls; `--output-format json` prints the same fields; text output says a refused call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import MODELS, agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e
COMMAND = "touch made-by-the-model"


def run(tmp_path: Path, fmt: str, *extra: str) -> tuple[str, str, int]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    with FakeModelServer() as server:
        server.queue(
            Reply("Running it.", tool_calls=[ToolCallSpec("bash", {"command": COMMAND})]),
            Reply("It was refused, so nothing changed."),
        )
        args = ["-p", "make the file", "--model", MODELS["anthropic"], "--output-format", fmt, *extra]
        done = run_agent(args, project, agent_env(tmp_path / "home", server))
    return done.stdout, done.stderr, done.returncode


def check_result(result: dict[str, object]) -> None:
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == result["text"] == "It was refused, so nothing changed."
    assert result["num_turns"] == 2 and isinstance(result["duration_ms"], int) and result["duration_ms"] > 0
    cost = result["total_cost_usd"]
    assert isinstance(cost, float) and cost > 0
    usage = result["usage"]
    assert isinstance(usage, dict) and usage["output_tokens"] > 0
    assert usage["cache_creation_input_tokens"] == usage["cache_write_tokens"] > 0
    assert usage["cache_read_input_tokens"] == usage["cache_read_tokens"]
    denials = result["permission_denials"]
    assert isinstance(denials, list) and len(denials) == 1
    assert denials[0]["tool_name"] == "bash" and denials[0]["tool_input"] == {"command": COMMAND}
    assert str(denials[0]["tool_use_id"])


def test_stream_json_opens_with_init_and_ends_with_claude_codes_result(tmp_path: Path) -> None:
    stdout, stderr, code = run(tmp_path, "stream-json")
    assert code == 0, stderr
    events = stream_events(stdout)
    init = events[0]
    assert (init["type"], init["subtype"], init["permission_mode"]) == ("system", "init", "default")
    assert init["model"] == MODELS["anthropic"] and init["cwd"] == str(tmp_path / "proj")
    assert {"bash", "read_file", "recall"} <= set(init["tools"])
    assert init["session_id"] == events[-1]["session_id"]
    refused = next(e for e in events if e["type"] == "tool_result")
    assert refused["denied"] is True and refused["is_error"] is True
    check_result(events[-1])
    assert not (tmp_path / "proj/made-by-the-model").exists()


def test_json_prints_the_same_fields(tmp_path: Path) -> None:
    stdout, stderr, code = run(tmp_path, "json")
    assert code == 0, stderr
    check_result(json.loads(stdout))


def test_text_output_says_a_refused_call(tmp_path: Path) -> None:
    stdout, stderr, code = run(tmp_path, "text")
    assert code == 0 and stdout == "It was refused, so nothing changed.\n"
    assert "agent: refused bash:" in stderr


def test_yes_is_bypass_permissions_and_nothing_is_denied(tmp_path: Path) -> None:
    stdout, _, code = run(tmp_path, "stream-json", "--yes")
    events = stream_events(stdout)
    assert code == 0 and events[0]["permission_mode"] == "bypassPermissions"
    assert events[-1]["permission_denials"] == []
    assert (tmp_path / "proj/made-by-the-model").exists()

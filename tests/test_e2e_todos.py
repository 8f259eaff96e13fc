"""The todo list end to end: `agent -p` in a 30k window, real SDKs, a fake server. The model writes a
list with todo_write; every request after it carries each item's text byte for byte (the summary
requests too, before their instruction, which stays the last text block so the server still knows
them), after L1, L2 and L4 have all fired; `--continue` brings the list back and its first request
carries it again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import MODELS, agent_env, run_agent, stream_events
from tests.test_e2e_pins import BLOCK_SIX_TIMES, write_files

pytestmark = pytest.mark.e2e
PROVIDERS = ["anthropic", "openai"]
# Spaces at both ends, a tab, a doubled space, an emoji, a right-to-left word: nothing of it may move.
ODD = " Fix\tthe  parser — keep ✓ (שלום) "
TODOS = [
    {"content": "Read every file", "status": "in_progress", "activeForm": "Reading every file"},
    {"content": ODD, "status": "pending"},
    {"content": "Say what the files hold", "status": "pending"},
]


def strings(value: Any) -> list[str]:
    """Every string in a request body (the wire's text, as the server decoded it)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def carries(request: RecordedRequest, content: str) -> bool:
    return any(content in s for s in strings(request.body.get("messages", request.body.get("input"))))


def more_files(project: Path, extra: int) -> list[str]:
    """test_e2e_pins' files, and `extra` more of the same kind: with the PreCompact hook blocking the
    first two compactions (each then left to L4), the run must last long enough for a third trigger,
    whose summary the hook lets through, in the frame of every default tool."""
    names = write_files(project)
    for i in range(len(names) + 1, len(names) + extra + 1):
        body = "".join(f"line {n:03d} of file {i}: value {i * 1000 + n}\n" for n in range(230))
        (project / f"f{i:02d}.txt").write_text(body)
        names.append(f"f{i:02d}.txt")
    return names


def planner(files: list[str]) -> Callable[[RecordedRequest], Reply]:
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply("## Goal\nread every file\n## Done\nsome of them")
        n = step["n"]
        step["n"] += 1
        if n == 0:
            return Reply("A plan first.", tool_calls=[ToolCallSpec("todo_write", {"todos": TODOS})])
        if n - 1 < len(files):  # notes the model keeps: only a record or a drop makes room for them
            notes = " ".join(f"Observation {k} on step {n}." for k in range(90))
            return Reply(f"{notes}\nReading.", tool_calls=[ToolCallSpec("read_file", {"path": files[n - 1]})])
        return Reply("All read.")

    return answer


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_todo_list_is_in_every_request_after_every_layer_and_after_continue(
    provider: str, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    files = more_files(project, 16)
    config = tmp_path / "hooks.toml"
    hook = json.dumps(f"cd {tmp_path} && {BLOCK_SIX_TIMES}")
    # The lines the scenario was drawn against (six compactions blocked on the way up to L4, then a
    # record): with the default trigger (90%) the run ends before the seventh.
    config.write_text(f"[context]\ntrigger_ratio = 0.80\n\n[[hooks.PreCompact]]\ncommand = {hook}\n")
    common = ["--provider", provider, "--model", MODELS[provider], "--yes", "--output-format", "stream-json"]
    common += ["--context-window", "30000", "--config", str(config)]
    with FakeModelServer(context_window=30_000) as server:
        server.responder = planner(files)
        env = agent_env(home, server, provider)
        first = run_agent(["-p", "Read every file.", *common], project, env, timeout=300)
        assert first.returncode == 0, first.stderr[-2000:]
        before = len(server.requests)
        server.responder = lambda request: Reply("Still here.")
        again = run_agent(["-p", "Anything left?", "--continue", *common], project, env, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        requests = server.requests
    layers = {e["layer"] for e in stream_events(first.stdout) if e["type"] == "compact"}
    assert {"clear", "summarize", "emergency"} <= layers, layers
    assert not carries(requests[0], ODD)  # before the list was written
    later = requests[1:]
    assert len(requests) > before and any(is_summary_request(r.body) for r in later)
    for request in later:
        for item in TODOS:
            assert carries(request, item["content"]), (item["content"], is_summary_request(request.body))
    assert max(q.input_tokens for q in requests) <= 30_000

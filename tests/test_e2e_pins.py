"""Pins end to end: `agent -p --pin` in a 30k window, real SDKs, a fake server. Every request the
agent makes after the pin carries it byte for byte (the summary requests too, which share the
frame), after L1, L2 and L4 have all fired, and after `--continue` brings the session back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import MODELS, agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e
PROVIDERS = ["anthropic", "openai"]
FILES = 44
# Spaces at both ends, a tab, a doubled space, an emoji, a right-to-left word: nothing of it may move.
PIN = " Never\tuse  tabs — indent with 4 spaces ✓ (שלום) "
# The first six automatic compactions are blocked (L1 clears what it can meanwhile), so the model's
# notes grow to the emergency line (L4); the seventh goes ahead (L2). L1 clears old reads on the way up.
BLOCK_SIX_TIMES = (
    "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; "
    "if [ $n -le 6 ]; then echo 'not yet' >&2; exit 2; fi"
)


def write_files(project: Path) -> list[str]:
    names = []
    for i in range(1, FILES + 1):
        body = "".join(f"line {n:03d} of file {i}: value {i * 1000 + n}\n" for n in range(230))
        (project / f"f{i:02d}.txt").write_text(body)
        names.append(f"f{i:02d}.txt")
    return names


def system_text(request: RecordedRequest) -> str:
    body = request.body
    if "system" in body:  # Anthropic: a string or text blocks
        system = body["system"]
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    if "instructions" in body:  # Responses
        return str(body["instructions"])
    return "".join(str(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer"))


def reader(files: list[str]) -> Callable[[RecordedRequest], Reply]:
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply("## Goal\nread every file\n## Done\nsome of them")
        n = step["n"]
        step["n"] += 1
        if n < len(files):  # notes the model keeps: only a record or a drop makes room for them
            notes = " ".join(f"Observation {k} on step {n}." for k in range(90))
            call = ToolCallSpec("read_file", {"path": files[n]})
            return Reply(f"{notes}\nReading {files[n]}.", tool_calls=[call])
        return Reply("All read.")

    return answer


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_pin_is_in_every_request_after_every_layer_and_after_continue(
    provider: str, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    files = write_files(project)
    config = tmp_path / "hooks.toml"
    hook = json.dumps(f"cd {tmp_path} && {BLOCK_SIX_TIMES}")
    # The lines the scenario was drawn against (six compactions blocked on the way up to L4, then a
    # record): with the default trigger (90%) the run ends before the seventh.
    config.write_text(f"[context]\ntrigger_ratio = 0.80\n\n[[hooks.PreCompact]]\ncommand = {hook}\n")
    common = ["--provider", provider, "--model", MODELS[provider], "--yes", "--output-format", "stream-json"]
    common += ["--context-window", "30000", "--config", str(config)]
    with FakeModelServer(context_window=30_000) as server:
        server.responder = reader(files)
        env = agent_env(home, server, provider)
        first = run_agent(["-p", "Read every file.", "--pin", PIN, *common], project, env, timeout=300)
        assert first.returncode == 0, first.stderr[-2000:]
        before = len(server.requests)
        server.responder = lambda request: Reply("Still here.")
        again = run_agent(["-p", "Anything left?", "--continue", *common], project, env, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        requests = server.requests
    layers = {e["layer"] for e in stream_events(first.stdout) if e["type"] == "compact"}
    assert {"clear", "summarize", "emergency"} <= layers, layers
    assert len(requests) > before
    for request in requests:
        assert PIN in system_text(request), "a request went without the pin"
    assert max(q.input_tokens for q in requests) <= 30_000

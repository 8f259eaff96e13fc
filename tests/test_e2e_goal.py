"""`agent -p --goal` end to end: real SDKs, the fake model server, a real shell check in a temp project.

- A check that fails twice then passes: three rounds, each later one prompted with the check's
  output; every request carries the goal's text and check byte for byte; exit 0.
- A budget that runs out: the run ends with one line and exit 3.
- A small window (30k) and a long run (`-p PROMPT --goal ...`): summaries (L2) fire mid-goal and
  never end it; every request, summary requests included, carries the goal; the last one does;
  none is over the window.
- A round that fails on a provider error leaves the goal set: `--continue` carries it again and runs
  its check when the next turn ends.
- Bad syntax: one line, exit 2.
- The check runs in the session's sandbox (a write outside the project refused), not as `!command` does.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.sandbox.probe import find_bwrap, probe
from agent_cli.testing.fakeserver import FakeModelServer, Fault, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import MODELS, agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e
PROVIDERS = ["anthropic", "openai"]
# A tab, a doubled space, an emoji, a right-to-left word: nothing of it may move (the ends are trimmed).
ODD = "make\tthe  counter — reach ✓ (שלום)"
# Counts its runs in a file; passes from run PASS_AT on.
COUNTER = (
    'n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; echo "check run $n"; [ $n -ge {at} ]'
)


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def carries(request: RecordedRequest, text: str) -> bool:
    return any(text in s for s in strings(request.body.get("messages", request.body.get("input"))))


def goal_arg(check: str, budget: str = "") -> str:
    """The --goal value: the odd text, then the check quoted for shlex (single quotes inside escaped)."""
    quoted = "'" + check.replace("'", "'\"'\"'") + "'"
    return f"{ODD} --check {quoted}" + (f" --budget {budget}" if budget else "")


def common(provider: str) -> list[str]:
    return ["--provider", provider, "--model", MODELS[provider], "--yes", "--output-format", "stream-json"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_check_that_fails_twice_then_passes(provider: str, tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    check = COUNTER.format(at=3)
    with FakeModelServer() as server:
        server.responder = lambda request: Reply("Working on it.")
        env = agent_env(home, server, provider)
        done = run_agent(["-p", "--goal", goal_arg(check), *common(provider)], project, env, timeout=180)
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:]
    assert (project / "runs").read_text().strip() == "3"
    assert len(requests) == 3
    for request in requests:
        assert carries(request, ODD) and carries(request, check)
    assert carries(requests[1], "check run 1") and carries(requests[2], "check run 2")
    events = stream_events(done.stdout)
    goals = [e for e in events if e["type"] == "goal"]
    assert [g["status"] for g in goals] == ["go_on", "go_on", "met"]
    assert [g["exit_code"] for g in goals] == [1, 1, 0]
    assert [e["type"] for e in events].count("result") == 1 and events[-1]["type"] == "result"


def test_the_budget_running_out_ends_the_run_with_exit_3(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    # 20,000 output tokens a reply at $15/M: $0.30 a round; a $0.50 budget is spent after two.
    with FakeModelServer() as server:
        server.responder = lambda request: Reply("Trying.", usage={"output_tokens": 20_000})
        env = agent_env(home, server, "anthropic")
        args = ["-p", "--goal", goal_arg("echo still failing; exit 1", "0.50"), "--provider", "anthropic"]
        args += ["--model", MODELS["anthropic"], "--yes"]
        done = run_agent(args, project, env, timeout=180)
        requests = server.requests
    assert done.returncode == 3, done.stderr[-2000:]
    assert len(requests) == 2
    said = [line for line in done.stderr.splitlines() if "budget spent" in line]
    assert len(said) == 1  # the output's $0.60 and the input's few cents
    assert said[0].startswith("agent: goal: goal budget spent: $0.6")
    assert said[0].endswith(" of $0.50 after 2 rounds, the goal not met; /goal shows it")


def reader(files: list[str]) -> Callable[[RecordedRequest], Reply]:
    """Reads a file a round, with long notes (only a summary or a drop makes room for them)."""
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply("## Goal\nreach the counter\n## Done\nread some files")
        n = step["n"]
        step["n"] += 1
        notes = " ".join(f"Observation {k} on step {n}." for k in range(90))
        if n % 2 == 0:
            return Reply(
                f"{notes}\nReading.", tool_calls=[ToolCallSpec("read_file", {"path": files[n // 2]})]
            )
        return Reply(f"{notes}\nNot there yet.")

    return answer


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_compaction_mid_goal_never_ends_the_run(provider: str, tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    files = []
    for i in range(1, 31):
        body = "".join(f"line {n:03d} of file {i}: value {i * 1000 + n}\n" for n in range(230))
        (project / f"f{i:02d}.txt").write_text(body)
        files.append(f"f{i:02d}.txt")
    check = COUNTER.format(at=14)
    # The prompt starts the first round: the goal's note is placed beside it (not the prompt itself).
    args = [
        "-p",
        "Start on the goal.",
        "--goal",
        goal_arg(check),
        *common(provider),
        "--context-window",
        "30000",
    ]
    with FakeModelServer(context_window=30_000) as server:
        server.responder = reader(files)
        env = agent_env(home, server, provider)
        done = run_agent(args, project, env, timeout=400)
        requests = server.requests
    assert done.returncode == 0, done.stderr[-2000:]
    events = stream_events(done.stdout)
    layers = {e["layer"] for e in events if e["type"] == "compact"}
    assert "summarize" in layers, layers
    summaries = [r for r in requests if is_summary_request(r.body)]
    assert summaries
    for request in requests:  # the summary requests too, before their instruction
        assert carries(request, ODD) and carries(request, check), is_summary_request(request.body)
    assert carries(requests[-1], ODD) and not is_summary_request(requests[-1].body)
    assert [g["status"] for g in events if g["type"] == "goal"][-1] == "met"
    assert (project / "runs").read_text().strip() == "14"
    assert max(q.input_tokens for q in requests) <= 30_000


def test_the_goal_survives_continue(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    check = COUNTER.format(at=2)
    answers: list[Any] = [Reply("First try."), Fault(400, "invalid_request_error: bad thing")]
    with FakeModelServer() as server:
        server.responder = lambda request: answers.pop(0) if answers else Reply("Fixed.")
        env = agent_env(home, server, "anthropic")
        first = run_agent(["-p", "--goal", goal_arg(check), *common("anthropic")], project, env, timeout=180)
        assert first.returncode == 1, first.stderr[-2000:]  # the second round failed: the goal stays set
        before = len(server.requests)
        again = run_agent(["-p", "go on", "--continue", *common("anthropic")], project, env, timeout=180)
        requests = server.requests[before:]
    assert again.returncode == 0, again.stderr[-2000:]
    assert carries(requests[0], ODD) and carries(requests[0], check)
    assert (project / "runs").read_text().strip() == "2"  # its check ran when the turn ended
    assert [e["status"] for e in stream_events(again.stdout) if e["type"] == "goal"] == ["met"]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("fix it --budget lots", "agent: --goal: --budget takes an amount in USD"),
        ("fix it --check 'pytest", "agent: --goal: cannot read the goal's options"),
        ("clear", "agent: --goal needs the goal"),
    ],
)
def test_bad_goal_syntax_is_one_line_and_exit_2(value: str, said: str, tmp_path: Path) -> None:
    done = run_agent(["-p", "--goal", value], tmp_path, agent_env(tmp_path), timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(said), done.stderr
    assert json.dumps(done.stdout) == '""'


VERDICT = probe(find_bwrap(os.environ.get("PATH")))


@pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")
@pytest.mark.parametrize("mode", ["workspace-write", "off"])
def test_the_check_runs_in_the_session_s_sandbox(mode: str, tmp_path: Path) -> None:
    """The check runs unasked, but confined as the model's bash is: a write outside the project is
    refused under workspace-write (so this check, which passes only when refused, meets the goal at
    once) and goes through with the sandbox off (so it fails and the budget ends the run)."""
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    base = Path("/var/tmp")  # not under /tmp, which the sandbox leaves writable
    if not os.access(base, os.W_OK):
        pytest.skip("no writable /var/tmp outside the project and the temp dir")
    outside = Path(tempfile.mkdtemp(prefix="agent-goal-outside-", dir=base))
    try:
        check = f"if echo x > {outside}/escaped 2>/dev/null; then exit 1; fi"
        with FakeModelServer() as server:
            server.responder = lambda request: Reply("Done.", usage={"output_tokens": 20_000})
            args = ["-p", "--goal", goal_arg(check, "0.10"), *common("anthropic"), "--sandbox", mode]
            done = run_agent(args, project, agent_env(home, server, "anthropic"), timeout=180)
        escaped = (outside / "escaped").exists()
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    if mode == "off":
        assert done.returncode == 3 and escaped, done.stderr[-2000:]
    else:
        assert done.returncode == 0 and not escaped, done.stderr[-2000:]

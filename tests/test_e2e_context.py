"""The context engine end to end: `agent -p` reading more than fits, real SDKs, a fake server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request as is_summary_body
from tests.e2e import MODELS, agent_env, run_agent, stream_events, transcript_blob

pytestmark = pytest.mark.e2e
PROVIDERS = ["anthropic", "openai"]
FILES = 8
SUMMARY_MARK = "RECORD-OF-EARLIER-WORK"
DIGEST = "Condensed mechanical digest"


def write_files(project: Path) -> list[str]:
    names = []
    for i in range(1, FILES + 1):
        lines = [f"# file {i}: notes for the context test"]
        n = 0
        while sum(len(x) + 1 for x in lines) < 9 * 1024:
            n += 1
            lines.append(f"entry {n:03d} of file {i}: value={i * 1000 + n} marker-f{i}-line{n:03d}")
        path = project / f"notes/file{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        names.append(f"notes/file{i}.txt")
    return names


def last_user_text(request: RecordedRequest) -> str:
    body = request.body
    message = body["messages"][-1]
    content = message["content"]
    if isinstance(content, str):
        return content
    return " ".join(str(b.get("text") or b.get("content") or "") for b in content)


def is_summary_request(request: RecordedRequest) -> bool:
    return is_summary_body(request.body)


def responder(files: list[str], recall_query: str) -> Callable[[RecordedRequest], Reply]:
    """Reads every file, then recalls a line from the first one, then answers."""
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request):
            return Reply(f"{SUMMARY_MARK}: read {step['n']} files so far; goal: read all notes.")
        n = step["n"]
        step["n"] += 1
        if n < len(files):
            topic = files[n - 1] if n else "the task"
            notes = " ".join(f"Observation {k} about {topic}." for k in range(60))
            call = ToolCallSpec("read_file", {"path": files[n]})
            return Reply(f"{notes}\nReading {files[n]}.", tool_calls=[call])
        if n == len(files):
            call = ToolCallSpec("recall", {"query": recall_query})
            return Reply("Checking an early detail.", tool_calls=[call])
        return Reply("All eight files read.")

    return answer


def run_task(
    provider: str, tmp_path: Path, *, server_window: int, flag_window: int
) -> tuple[object, list[RecordedRequest], list[dict[str, object]], Path]:
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    files = write_files(project)
    with FakeModelServer(context_window=server_window) as server:
        server.responder = responder(files, "marker-f1-line042")
        r = run_agent(
            [
                "-p",
                "Read every file under notes/ one by one.",
                "--provider",
                provider,
                "--model",
                MODELS[provider],
                "--yes",
                "--output-format",
                "stream-json",
                "--context-window",
                str(flag_window),
            ],
            project,
            agent_env(home, server, provider),
            timeout=300,
        )
        requests = server.requests
    assert r.returncode == 0, r.stderr[-2000:]
    return r, requests, stream_events(r.stdout), project


@pytest.mark.parametrize("provider", PROVIDERS)
def test_eight_files_in_a_12k_window(provider: str, tmp_path: Path) -> None:
    _, requests, events, project = run_task(provider, tmp_path, server_window=12_000, flag_window=12_000)
    assert events[-1]["type"] == "result" and events[-1]["stop"] == "end_turn"
    assert events[-1]["text"] == "All eight files read."
    compactions = [e for e in events if e["type"] == "compact"]
    assert any(e["layer"] == "summarize" for e in compactions), [e["layer"] for e in compactions]
    for e in compactions:
        for key in (
            "layer",
            "trigger",
            "messages_before",
            "messages_after",
            "tokens_before",
            "tokens_after",
            "transcript",
        ):
            assert key in e
    assert all(e["trigger"] != "overflow" for e in compactions), "the proactive layers kept every request in"
    assert max(q.input_tokens for q in requests) <= 12_000
    summary_requests = [q for q in requests if is_summary_request(q)]
    later = [q for q in requests[requests.index(summary_requests[0]) + 1 :] if not is_summary_request(q)]
    # The record is written in the background: until it is ready a digest stands in for it, and from
    # the first request that carries it, every request does.
    carried = [SUMMARY_MARK in json.dumps(q.body["messages"]) for q in later]
    assert later and any(carried) and all(carried[carried.index(True) :])
    before = later[: carried.index(True)]
    assert all(DIGEST in json.dumps(q.body["messages"]) for q in before)
    blob = transcript_blob(project)
    for line in ("marker-f1-line001", "marker-f1-line060", "marker-f2-line050"):
        assert line in blob, f"the full early output holds {line}"
    recall = next(e for e in events if e["type"] == "tool_result" and e["name"] == "recall")
    assert "marker-f1-line042" in recall["content"] and not recall["is_error"]
    first_file_text = (project / "notes/file1.txt").read_text()
    assert first_file_text.splitlines()[42] in recall["content"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_reactive_path_when_the_window_is_overstated(provider: str, tmp_path: Path) -> None:
    _, requests, events, _ = run_task(provider, tmp_path, server_window=12_000, flag_window=1_000_000)
    assert events[-1]["type"] == "result" and events[-1]["stop"] == "end_turn"
    overflow = [e for e in events if e["type"] == "compact" and e["trigger"] == "overflow"]
    assert overflow, "the provider's overflow error drove a compaction"
    accepted = [q for q in requests if q.input_tokens <= 12_000]
    assert accepted[-1] is requests[-1]

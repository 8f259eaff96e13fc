"""A run that ends while a digest stands in (issue 37, item 5), end to end: `agent -p` in a 32k
window, real SDKs, a fake server whose summary calls do not answer during the first run.

The first run's compactions each put a digest in the span's place and ask the model for the record
in the background; the run ends before any record came. Exit does not wait for the call: the session
logs the record as owed, and `--continue` makes it before its first request. So the model's record,
not the digest, is what the next request carries and what the session log's compaction holds.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.core.events import CompactEvent
from agent_cli.store.log_records import EventRecord, HistoryRecord, read_log
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import MODELS, agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e
PROVIDERS = ["anthropic", "openai"]
RECORD = "RECORD-FROM-THE-MODEL"
DIGEST = "Condensed mechanical digest"
FILES = 14


def write_files(project: Path) -> list[str]:
    names = []
    for i in range(1, FILES + 1):
        body = "".join(f"line {n:03d} of file {i}: value {i * 1000 + n}\n" for n in range(260))
        (project / f"f{i:02d}.txt").write_text(body)
        names.append(f"f{i:02d}.txt")
    return names


def reader(files: list[str], release: threading.Event) -> Callable[[RecordedRequest], Reply]:
    """Reads every file, keeping notes (only a record makes room for them), then answers. A summary
    request waits until `release` is set: its record never comes while the run goes on."""
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            release.wait(120)
            return Reply("too late")
        n = step["n"]
        step["n"] += 1
        if n < len(files):
            notes = " ".join(f"Observation {k} on step {n}." for k in range(200))
            return Reply(f"{notes}\nReading.", tool_calls=[ToolCallSpec("read_file", {"path": files[n]})])
        return Reply("All read.")

    return answer


def carried(request: RecordedRequest, text: str) -> bool:
    return text in json.dumps(request.body.get("messages", request.body.get("input")))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_record_owed_when_the_run_ended_is_made_by_continue_before_its_first_request(
    provider: str, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    files = write_files(project)
    common = ["--provider", provider, "--model", MODELS[provider], "--yes", "--output-format", "stream-json"]
    common += ["--context-window", "32000"]
    release = threading.Event()
    with FakeModelServer(context_window=32_000) as server:
        try:
            server.responder = reader(files, release)
            env = agent_env(home, server, provider)
            first = run_agent(["-p", "Read every file.", *common], project, env, timeout=300)
            assert first.returncode == 0, first.stderr[-2000:]
        finally:
            release.set()  # (the first run's summary calls: their agent has gone)
        before = len(server.requests)
        server.responder = later
        again = run_agent(["-p", "Anything left?", "--continue", *common], project, env, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        requests = server.requests
    compactions = [e for e in stream_events(first.stdout) if e["type"] == "compact"]
    assert any(e["layer"] == "summarize" and e["stand_in"] for e in compactions), compactions
    made_by_the_next_run(requests, before, project)


def made_by_the_next_run(requests: list[RecordedRequest], before: int, project: Path) -> None:
    """The first run (its `before` requests) asked for a record it never got; the next run made it
    before its first request, which carries it, and the session log holds the model's text."""
    assert any(is_summary_request(q.body) for q in requests[:before])  # asked, never answered
    assert not any(carried(q, RECORD) for q in requests[:before])
    # The second run: the record owed is made first, and its first request carries it, not the digest.
    second = requests[before:]
    assert second and is_summary_request(second[0].body), [is_summary_request(q.body) for q in second]
    main = [q for q in second if not is_summary_request(q.body)]
    assert main and carried(main[0], RECORD) and not carried(main[0], DIGEST)
    # The session log's last compaction holds the model's text, and so does the history it kept.
    (log,) = (project / ".transcripts").glob("*/session.jsonl")
    records, _ = read_log(log)
    events = [r.event for r in records if isinstance(r, EventRecord) and isinstance(r.event, CompactEvent)]
    last = [e for e in events if e.layer == "summarize"][-1]
    assert last.summary is not None and RECORD in last.summary and not last.degraded
    history = [r for r in records if isinstance(r, HistoryRecord)][-1].messages
    assert RECORD in history[0].text and DIGEST not in history[0].text


def later(request: RecordedRequest) -> Reply:
    if is_summary_request(request.body):
        return Reply(f"## Goal\nread every file\n## Done\n{RECORD}: the files were read.")
    return Reply("Still here.")


def test_a_repl_exit_owes_the_record_too(tmp_path: Path) -> None:
    """The same through the REPL on a pseudo-terminal: /exit while a digest stands in."""
    pexpect = pytest.importorskip("pexpect")
    from tests.reliability.procs import expect, spawn_repl

    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    config = home / ".config" / "agent-cli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[context]\ncontext_window = 32000\n")
    files = write_files(project)
    release = threading.Event()
    with FakeModelServer(context_window=32_000) as server:
        try:
            server.responder = reader(files, release)
            env = agent_env(home, server)
            env.update(TERM="xterm-256color")
            child = spawn_repl(project, env, timeout=300)
            try:
                expect(child, "auto-compact at ")
                child.send("Read every file.\r")
                expect(child, "All read.")
                child.send("/exit\r")
                child.expect(pexpect.EOF)
            finally:
                child.close(force=True)
        finally:
            release.set()
        before = len(server.requests)
        server.responder = later
        common = ["--model", MODELS["anthropic"], "--yes", "--output-format", "stream-json"]
        again = run_agent(["-p", "Anything left?", "--continue", *common], project, env, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        requests = server.requests
    made_by_the_next_run(requests, before, project)

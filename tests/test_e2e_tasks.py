"""Sub-agents end to end (the task tool): `agent -p` against the fake server, real SDKs, real tools.

A child's requests are known by its prompt (its first user message), which the parent's never
holds. The child reads a file holding a fact its report leaves out: the parent's recall still finds
it, from the child's transcript archived with the parent's session. Nesting stops at
`tools.max_task_depth`; bad input is a tool error the model reads; a background task returns an id
at once and its report joins the parent's next request when it ends.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Fault, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_env, run_agent, stream_events
from tests.reliability.procs import new_tag, processes, start_headless, wait_for

pytestmark = pytest.mark.e2e
COMMON = [
    "--provider",
    "anthropic",
    "--model",
    "claude-sonnet-4-5",
    "--yes",
    "--output-format",
    "stream-json",
]
FACT = "The launch code is PURPLE-4217."
CHILD_PROMPT = "CHILD-TASK: read fact.txt and say whether it holds a code."


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def holds(request: RecordedRequest, text: str) -> bool:
    return any(text in s for s in strings(request.body.get("messages")))


def first_user(request: RecordedRequest) -> str:
    """The text of the request's first user message: a child's is its task's prompt."""
    first = request.body["messages"][0]["content"]
    return first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)


def results(request: RecordedRequest) -> list[str]:
    """The tool results of the request, oldest first, as text."""
    found = []
    for message in request.body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                found.append(" ".join(strings(block.get("content"))))
    return found


def tool_names(request: RecordedRequest) -> list[str]:
    return [t.get("name", "") for t in request.body.get("tools", [])]


def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fact.txt").write_text(f"notes\n{FACT}\nend\n")
    home = tmp_path / "home"
    home.mkdir()
    return root, home


def run(root: Path, home: Path, server: FakeModelServer, prompt: str, *extra: str) -> list[dict[str, Any]]:
    done = run_agent(["-p", prompt, *COMMON, *extra], root, agent_env(home, server), timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return stream_events(done.stdout)


def test_a_child_runs_in_a_context_of_its_own_and_the_parents_recall_finds_what_it_read(
    tmp_path: Path,
) -> None:
    root, home = project(tmp_path)

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply("## Goal\nsummary")
        got = results(request)
        if CHILD_PROMPT in first_user(request):  # the child
            if not got:
                return Reply("Reading it.", tool_calls=[ToolCallSpec("read_file", {"path": "fact.txt"})])
            return Reply("The file holds a code; I leave it out of this report.")
        if not got:
            task = {"description": "read the fact", "prompt": CHILD_PROMPT}
            return Reply("Delegating.", tool_calls=[ToolCallSpec("task", task)])
        if len(got) == 1:
            return Reply("Looking it up.", tool_calls=[ToolCallSpec("recall", {"query": "launch code"})])
        return Reply("PARENT DONE")

    with FakeModelServer() as server:
        server.responder = answer
        events = run(root, home, server, "PARENT-PROMPT: what does fact.txt hold?")
        requests = [r for r in server.requests if r.api == "anthropic"]
    kinds = ["child" if CHILD_PROMPT in first_user(r) else "parent" for r in requests]
    assert kinds == ["parent", "child", "child", "parent", "parent"], kinds
    child = [r for r in requests if CHILD_PROMPT in first_user(r)]
    # A context of its own: the parent's prompt never reaches it; the same system prompt does.
    assert not any(holds(r, "PARENT-PROMPT") for r in child)
    assert child[0].body["system"] == requests[0].body["system"]
    assert holds(child[1], FACT)
    # The report is the task's result; the fact is not in it, and the parent's recall finds it.
    after_task, after_recall = requests[3], requests[4]
    assert "I leave it out of this report" in results(after_task)[0]
    assert not holds(after_task, "PURPLE-4217")
    assert "PURPLE-4217" in results(after_recall)[-1]
    assert "[tasks/" in results(after_recall)[-1]  # the passage names the child's file
    assert events[-1]["type"] == "result" and "PARENT DONE" in events[-1]["result"]
    # The child's whole transcript is a folder of the parent's session.
    sessions = [p for p in (root / ".transcripts").iterdir() if p.is_dir()]
    assert len(sessions) == 1
    logs = list((sessions[0] / "tasks").glob("*/session.jsonl"))
    assert len(logs) == 1 and "PURPLE-4217" in logs[0].read_text()


def test_tasks_nest_only_to_the_configured_depth(tmp_path: Path) -> None:
    root, home = project(tmp_path)
    seen: dict[str, RecordedRequest] = {}

    def answer(request: RecordedRequest) -> Reply:
        first, got = first_user(request), results(request)
        level = "L2" if "LEVEL-2" in first else "L1" if "LEVEL-1" in first else "L0"
        seen.setdefault(level, request)
        if got:
            return Reply(f"{level} done: {got[-1][:200]}")
        if level == "L0":
            return Reply(
                "", tool_calls=[ToolCallSpec("task", {"description": "one", "prompt": "LEVEL-1 go"})]
            )
        if level == "L1":
            return Reply(
                "", tool_calls=[ToolCallSpec("task", {"description": "two", "prompt": "LEVEL-2 go"})]
            )
        return Reply("", tool_calls=[ToolCallSpec("task", {"description": "three", "prompt": "LEVEL-3 go"})])

    with FakeModelServer() as server:
        server.responder = answer
        run(root, home, server, "start")
        requests = [r for r in server.requests if r.api == "anthropic"]
    assert "task" in tool_names(seen["L0"]) and "task" in tool_names(seen["L1"])
    assert "task" not in tool_names(seen["L2"])  # depth 2 is the default limit
    assert not any("LEVEL-3" in first_user(r) for r in requests)
    grandchild_done = [r for r in requests if "LEVEL-2" in first_user(r) and results(r)]
    assert "unknown tool 'task'" in results(grandchild_done[0])[-1]


def test_no_task_tool_at_depth_zero_and_bad_input_is_a_tool_error(tmp_path: Path) -> None:
    root, home = project(tmp_path)

    def answer(request: RecordedRequest) -> Reply:
        if results(request):
            return Reply("ok")
        return Reply("", tool_calls=[ToolCallSpec("task", {"description": "no prompt"})])

    with FakeModelServer() as server:
        server.responder = answer
        run(root, home, server, "go")
        bad = [r for r in server.requests if r.api == "anthropic"]
        config = tmp_path / "depth.toml"
        config.write_text("[tools]\nmax_task_depth = 0\n")
        server.responder = lambda request: Reply("no tasks here")
        run(root, home, server, "go", "--config", str(config))
        none = [r for r in server.requests if r.api == "anthropic"][len(bad) :]
    assert len(bad) == 2 and "missing required argument 'prompt'" in results(bad[1])[0]
    assert "task" in tool_names(bad[0]) and "task" not in tool_names(none[0])


def test_a_background_task_returns_at_once_and_its_report_joins_a_later_request(tmp_path: Path) -> None:
    root, home = project(tmp_path)
    parent_seen = threading.Event()  # the parent's request after the task started came first

    def answer(request: RecordedRequest) -> Reply:
        got = results(request)
        if "BG-CHILD" in first_user(request):
            parent_seen.wait(60)
            return Reply("BG REPORT: nothing odd")
        if not got:
            task = {"description": "bg job", "prompt": "BG-CHILD look around", "background": True}
            return Reply("", tool_calls=[ToolCallSpec("task", task)])
        parent_seen.set()
        if holds(request, "BG REPORT: nothing odd") or len(got) > 100:
            return Reply("PARENT SAW THE REPORT")
        return Reply("", tool_calls=[ToolCallSpec("bash", {"command": "sleep 0.2"})])

    with FakeModelServer() as server:
        server.responder = answer
        events = run(root, home, server, "start a background job")
        requests = [r for r in server.requests if r.api == "anthropic"]
    assert "Started task1 in the background" in results(requests[1])[0]
    assert "BG-CHILD" in first_user(requests[2])  # the parent's next request went first
    joined = [r for r in requests if "BG-CHILD" not in first_user(r) and holds(r, "BG REPORT: nothing odd")]
    assert joined and holds(joined[0], "[Background task task1 (bg job) ended: done]")
    assert events[-1]["result"] == "PARENT SAW THE REPORT"


def test_ctrl_c_in_a_headless_run_stops_the_child_and_its_command(tmp_path: Path) -> None:
    root, home = project(tmp_path)
    tag = f"5{new_tag()}.5"

    def answer(request: RecordedRequest) -> Reply:
        if "SLOW-CHILD" in first_user(request):
            return Reply("Waiting.", tool_calls=[ToolCallSpec("bash", {"command": f"sleep {tag}"})])
        task = {"description": "slow", "prompt": "SLOW-CHILD wait"}
        return Reply("", tool_calls=[ToolCallSpec("task", task)])

    with FakeModelServer() as server:
        server.responder = answer
        proc = start_headless(root, agent_env(home, server), "-p", "go", *COMMON)
        try:
            assert wait_for(lambda: processes("sleep", tag), 120), "the child's command runs"
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        requests = [r for r in server.requests if r.api == "anthropic"]
    assert proc.returncode == 130, err[-2000:]
    assert wait_for(lambda: not processes("sleep", tag), 60), "the child's command was stopped"
    assert len(requests) == 2, "nothing was asked after the interrupt"
    (log,) = (root / ".transcripts").glob("*/tasks/*/session.jsonl")
    assert "interrupted" in log.read_text()  # the child's own log says how it ended


def test_a_child_whose_provider_fails_is_an_error_result_the_parent_reads(tmp_path: Path) -> None:
    root, home = project(tmp_path)

    def answer(request: RecordedRequest) -> Reply | Fault:
        if "FAILING-CHILD" in first_user(request):
            return Fault(400, "the child's request is malformed somehow")
        if not results(request):
            return Reply(
                "", tool_calls=[ToolCallSpec("task", {"description": "x", "prompt": "FAILING-CHILD"})]
            )
        return Reply("PARENT GOES ON")

    with FakeModelServer() as server:
        server.responder = answer
        events = run(root, home, server, "go")
        requests = [r for r in server.requests if r.api == "anthropic"]
    told = results(requests[-1])[0]
    assert "Error: task1 stopped" in told and "malformed somehow" in told, told
    assert ".transcripts/" in told  # where its transcript is
    assert events[-1]["result"] == "PARENT GOES ON"

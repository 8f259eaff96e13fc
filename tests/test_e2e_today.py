"""Today's models end to end: `agent -p` on Claude Sonnet 5.5 (thinking bound to the conversation) and
on GPT-6.2 Sol over the Responses API, against the in-repo fake taught the providers' documented rules.

The fake rejects what the real APIs reject (a thinking block whose prefix changed or that was left
out from between others, sampling parameters, prefill, forced tool use) and counts the replayed
thinking or reasoning it accepted, so each test can tell that the agent passed it back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import Drop, FakeModelServer, Fault, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e
OVERFLOW = "Your input exceeds the context window of this model. Please adjust your input and try again."


def write_files(project: Path, count: int, kib: int) -> list[str]:
    names = []
    for i in range(1, count + 1):
        lines = [f"# module {i}"] + [
            f"def f_{i}_{n}(x): return x * {n}  # marker m{i}-{n}" for n in range(kib * 20)
        ]
        path = project / f"src/m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        names.append(f"src/m{i}.py")
    return names


def reader(files: list[str]) -> Callable[[RecordedRequest], Reply]:
    """Reads every file with a long analysis each, thinking aloud; answers summary requests."""
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            done = ", ".join(files[: step["n"]])
            return Reply(f"## Files\n{done}\n## Work state\nRead {step['n']} modules so far; next: the rest.")
        n = step["n"]
        step["n"] += 1
        notes = " ".join(f"Finding {k} about module {n}." for k in range(220))
        if n < len(files):
            call = ToolCallSpec("read_file", {"path": files[n]})
            return Reply(notes, tool_calls=[call], thinking=f"I should read {files[n]} next.")
        return Reply("All modules read.", thinking="That was the last module.")

    return answer


def run(
    tmp_path: Path, args: list[str], server: FakeModelServer, provider: str, files: int = 9, kib: int = 6
) -> tuple[Any, list[RecordedRequest], list[dict[str, Any]]]:
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    names = write_files(project, files, kib)
    if server.responder is None:
        server.responder = reader(names)
    r = run_agent(
        [
            "-p",
            "Read every module under src/ one by one.",
            "--provider",
            provider,
            "--yes",
            "--output-format",
            "stream-json",
            *args,
        ],
        project,
        agent_env(home, server, provider),
        timeout=300,
    )
    return r, server.requests, stream_events(r.stdout)


def answers_a_tool_call(request: RecordedRequest) -> bool:
    last = request.body["messages"][-1]
    return isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"])


def test_sonnet_5_5_keeps_its_thinking_through_every_layer(tmp_path: Path) -> None:
    # L1 clears old reads and L2 condenses the analyses in the normal course. Once, the provider
    # refuses a request as too long for a smaller window than the agent was told, counting more than
    # the agent did: the reactive path learns both and condenses again. (L4 against the same
    # binding check: tests/test_thinking_live.py.)
    names = [f"src/m{i}.py" for i in range(1, 21)]
    script = reader(names)
    seen: list[object] = []

    def answer(request: RecordedRequest) -> Any:
        if not is_summary_request(request.body):
            seen.append(request)
            if len(seen) == 16:
                return Fault(400, "prompt is too long: 19000 tokens > 14000 maximum")
        return script(request)

    with FakeModelServer(context_window=30_000) as server:
        server.responder = answer
        r, requests, events = run(
            tmp_path, ["--context-window", "30000"], server, "anthropic", files=20, kib=6
        )
    assert r.returncode == 0, r.stderr[-2000:]
    layers = {(e["layer"], e["trigger"]) for e in events if e["type"] == "compact"}
    assert {("clear", "auto"), ("summarize", "auto"), ("summarize", "overflow")} <= layers, [
        (
            e["type"],
            e.get("layer"),
            e.get("trigger"),
            e.get("tokens_before"),
            e.get("tokens_after"),
            e.get("message", "")[:90],
        )
        for e in events
        if e["type"] in ("compact", "warning", "error")
    ]
    assert events[-1]["type"] == "result" and events[-1]["text"] == "All modules read."
    thinking_rejections = [
        e for e in events if e["type"] in ("warning", "error") and "thinking" in e["message"]
    ]
    assert thinking_rejections == []
    for q in requests:  # nothing the 5.5 family rejects was ever sent
        body = q.body
        assert not {"temperature", "top_p", "top_k"} & set(body)
        assert body["messages"][-1]["role"] == "user"
        assert body.get("tool_choice", {"type": "auto"})["type"] in ("auto", "none")
        assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    # Every request answering a tool call carries the reply's thinking (the fake read it), except
    # right after the engine changed the history before it.
    tool_answers = [q for q in requests if answers_a_tool_call(q) and not is_summary_request(q.body)]
    carried = [q for q in tool_answers if q.reasoning_accepted > 0]
    compactions = sum(1 for e in events if e["type"] == "compact" and e["layer"] != "cap")
    assert len(tool_answers) - len(carried) <= compactions, (len(tool_answers), len(carried), compactions)
    # Most of them: a compaction whose record a digest stood in for changes the history twice (the
    # digest, then the record a request or two later), and each change costs the thinking after it.
    assert len(carried) >= len(tool_answers) // 3
    shown = [e["text"] for e in events if e["type"] == "thinking"]
    assert "I should read src/m1.py next." in shown  # stream-json carries the thinking


def test_a_refused_thinking_block_is_sent_again_without_thinking(tmp_path: Path) -> None:
    """The safety net: should a block ever be refused, the agent resends the history without thinking."""
    with FakeModelServer() as server:
        server.queue(
            Reply("Reading.", tool_calls=[ToolCallSpec("read_file", {"path": "src/m1.py"})], thinking="plan"),
            Fault(
                400,
                "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a "
                "different conversation. Remove the block, or set "
                '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".',
            ),
            Reply("Done."),
        )
        r, requests, events = run(tmp_path, [], server, "anthropic", files=1, kib=1)
    assert r.returncode == 0, r.stderr[-2000:]
    assert events[-1]["text"] == "Done."
    retried = requests[-1].body["messages"]
    assert not any(b.get("type") == "thinking" for m in retried for b in m["content"] if isinstance(b, dict))
    assert any(e["type"] == "warning" and "without thinking" in e["message"] for e in events)


@pytest.mark.parametrize("overflow_in_stream", [False, True])
def test_gpt_6_2_sol_over_the_responses_api(tmp_path: Path, overflow_in_stream: bool) -> None:
    names = [f"src/m{i}.py" for i in range(1, 10)]
    script = reader(names)
    faults: list[object] = [Fault(429, "slow down", headers={"retry-after": "0"}), Fault(500, "oops"), Drop()]

    def answer(request: RecordedRequest) -> Any:
        if len(request.body.get("input") or []) > 6 and faults:  # a few faults in a row mid-session
            return faults.pop(0)
        return script(request)

    with FakeModelServer(context_window=12_000, overflow_in_stream=overflow_in_stream) as server:
        server.responder = answer
        args = ["--model", "gpt-6.2-sol", "--wire", "responses", "--context-window", "30000"]
        r, requests, events = run(tmp_path, args, server, "openai")
    assert r.returncode == 0, r.stderr[-2000:]
    assert events[-1]["type"] == "result" and events[-1]["text"] == "All modules read."
    assert all(q.path.endswith("/responses") for q in requests)
    assert all(
        q.body["store"] is False and q.body["include"] == ["reasoning.encrypted_content"] for q in requests
    )
    assert sum(q.reasoning_accepted for q in requests) > 0  # reasoning items went back and were read
    assert {e["layer"] for e in events if e["type"] == "compact"} & {"clear", "summarize"}
    retries = [e for e in events if e["type"] == "retry"]
    assert len(retries) >= 3
    overflow = [e for e in events if e["type"] == "compact" and e["trigger"] == "overflow"]
    assert overflow, "recovered from context_length_exceeded"
    assert any("reasoning" in json.dumps(q.body["input"]) for q in requests)


def test_a_base_url_means_chat_completions(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("Hello from chat."))
        r, requests, events = run(tmp_path, ["--model", "gpt-6.2-sol"], server, "openai", files=1, kib=1)
    assert r.returncode == 0, r.stderr[-2000:]
    assert requests[0].path.endswith("/chat/completions") and events[-1]["text"] == "Hello from chat."

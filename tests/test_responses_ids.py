"""The Responses API's items go back as the API returned them (issue "Found from outside", item
11): a reasoning item with its `id`, `summary` and `encrypted_content`, a function call with its
`call_id` and, beside its reasoning, its own `id`. End to end: `agent -p` on the Responses wire
against agent_cli/testing/fakeserver, which refuses a reasoning item without its id, as the real API does."""

from __future__ import annotations

from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import agent_env, run_agent


def test_reasoning_ids_round_trip_through_a_tool_loop(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with FakeModelServer() as server:
        server.queue(
            Reply("", tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})], thinking="Read a.py first."),
            Reply("x is 1.", thinking="Answer."),
        )
        proc = run_agent(
            ["-p", "what is x?", "--provider", "openai", "--wire", "responses"],
            tmp_path,
            agent_env(tmp_path / "home", server, "openai"),
        )
        requests = server.requests
    assert proc.returncode == 0, proc.stderr  # was: 400 Missing required parameter: 'input[1].id'
    assert "x is 1." in proc.stdout
    sent = requests[1].body["input"]
    (reasoning,) = [i for i in sent if i.get("type") == "reasoning"]
    (call,) = [i for i in sent if i.get("type") == "function_call"]
    assert reasoning["id"].startswith("rs_") and reasoning["encrypted_content"]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Read a.py first."}]
    assert call["id"].startswith("fc_") and call["call_id"].startswith("call_")
    assert requests[1].reasoning_accepted == 1  # the model read its reasoning back

"""The model's compact tool called again and again (issue "Found from outside", item 8): twenty
compact calls in a row make one summary call, not twenty; two in one round are one compaction;
the calls that had nothing to do say so to the model. End to end (`agent -p` against
agent_cli/testing/fakeserver) and on the pure rule."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_cli.agent.compact_calls import ALREADY_SCHEDULED, NOTHING_NEW_TO_COMPACT, nothing_new_since
from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ScriptItem, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_env, run_agent

SUMMARY = "## Goal\nRead notes.txt.\n\n## Files touched\n- notes.txt (read)\n\n## Next steps\n- finish"


def _responder(script: list[ScriptItem]) -> Callable[[RecordedRequest], ScriptItem]:
    """Summary requests get a summary; the others take the script in order."""
    left = list(script)

    def respond(recorded: RecordedRequest) -> ScriptItem:
        if is_summary_request(recorded.body):
            return Reply(SUMMARY)
        return left.pop(0) if left else Reply("done")

    return respond


def _results(server: FakeModelServer) -> list[str]:
    """The content of every compact result the model was sent, in order (from the last request)."""
    last = server.requests[-1].body["messages"]
    return [
        str(b.get("content"))
        for m in last
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "tool_result"
    ]


def test_twenty_compact_calls_make_one_summary_call(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the parser reads tokens one at a time\n" * 200)
    script: list[ScriptItem] = [Reply(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})])]
    script += [Reply(tool_calls=[ToolCallSpec("compact", {})]) for _ in range(20)]
    script.append(Reply("All done."))
    with FakeModelServer(responder=_responder(script)) as server:
        proc = run_agent(["-p", "read notes.txt"], tmp_path, agent_env(tmp_path / "home", server))
        summaries = [r for r in server.requests if is_summary_request(r.body)]
        results = _results(server)
    assert proc.returncode == 0, proc.stderr
    assert "All done." in proc.stdout
    assert len(summaries) == 1, f"{len(summaries)} summary calls for 20 compact calls"  # was 20
    assert results.count(NOTHING_NEW_TO_COMPACT) == 19, results


def test_two_compact_calls_in_one_round_are_one_compaction(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the lexer splits words on blanks\n" * 200)
    twice = Reply(tool_calls=[ToolCallSpec("compact", {}), ToolCallSpec("compact", {"focus": "the lexer"})])
    script: list[ScriptItem] = [Reply(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]), twice]
    with FakeModelServer(responder=_responder(script)) as server:
        proc = run_agent(["-p", "read notes.txt"], tmp_path, agent_env(tmp_path / "home", server))
        summaries = [r for r in server.requests if is_summary_request(r.body)]
        results = _results(server)
    assert proc.returncode == 0, proc.stderr
    assert len(summaries) == 1
    assert ALREADY_SCHEDULED in results


def _compact_round(n: int) -> list[Message]:
    use = ToolUse(f"c{n}", "compact", {})
    return [Message("assistant", (use,)), Message("user", (ToolResult(use.id, "scheduled"),))]


def test_nothing_new_since_the_marker_is_only_compact_calls() -> None:
    start = [Message.user("fix the parser"), Message.assistant("on it")]
    marker = start[-1].id
    history = [*start, *_compact_round(1), *_compact_round(2)]
    assert nothing_new_since(history, marker)
    assert nothing_new_since([*history, Message("assistant", (ToolUse("c3", "compact", {}),))], marker)
    read = ToolUse("r1", "read_file", {"path": "a.py"})
    assert not nothing_new_since([*history, Message("assistant", (read,))], marker)
    assert not nothing_new_since([*history, Message.user("and the lexer")], marker)
    assert not nothing_new_since(history, None)  # never compacted
    assert not nothing_new_since(history, "gone")  # the marker was cleared away

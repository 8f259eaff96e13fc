"""The todo list: todo_write's input, its note in every request (through L1, L2 and L4), its log
record, and how the REPL shows it. The engine here is the real one over a small window; the
provider is scripted; the tools are the real default set."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import AutoApprover
from agent_cli.agent.loop import AgentLoop
from agent_cli.context.protocol import TOPIC, CompactGate, carried, holds, logged_todos, with_note
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, TextBlock, ToolResult
from agent_cli.core.requests import Request
from agent_cli.core.todos import MAX_ITEMS, TodoItem, parse_todos, todo_note, todos_from_json, todos_to_json
from agent_cli.providers.retry import RetryPolicy
from agent_cli.store.log_records import StateRecord
from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, call, calls, say
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.registry import default_tools
from agent_cli.ui.todo_view import todo_lines, toolbar_item
from tests.test_context_fakes import FRAME, FakeSummarizer, make_engine

INSTRUCTION_TAG = "<compaction-request>\n"  # how a summary request's instruction opens (summary_request.py)

# Spaces at both ends, a tab, a doubled space, an emoji, a right-to-left word: nothing of it may move.
ODD = " Fix\tthe  parser — keep ✓ (שלום) "
TODOS = [
    {"content": "Read the config loader", "status": "completed", "activeForm": "Reading the config loader"},
    {"content": ODD, "status": "in_progress"},
    {"content": "Run the tests\nand say which failed", "status": "pending"},
]


def run_tool(args: dict[str, Any], tmp_path: Path) -> Any:
    return default_tools().run("todo_write", args, ToolContext(root=tmp_path))


# -- the tool -----------------------------------------------------------------------------------


def test_todo_write_returns_the_new_list_and_never_asks(tmp_path: Path) -> None:
    registry = default_tools()
    assert registry.approval("todo_write") == "never"
    out = run_tool({"todos": TODOS}, tmp_path)
    assert not out.is_error
    assert out.todos == (
        TodoItem("Read the config loader", "completed", "Reading the config loader"),
        TodoItem(ODD, "in_progress"),
        TodoItem("Run the tests\nand say which failed", "pending"),
    )
    assert "3 items" in out.content and "1 in progress" in out.content
    assert run_tool({"todos": []}, tmp_path).todos == ()  # an empty list clears it


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({}, "missing required argument 'todos'"),
        ({"todos": "not json"}, "todos must be an array"),
        ({"todos": {"content": "x"}}, "todos must be an array"),
        ({"todos": ["x"]}, "todos[0] must be an object"),
        ({"todos": [{"status": "pending"}]}, "todos[0].content must be a non-empty string"),
        ({"todos": [{"content": "  ", "status": "pending"}]}, "todos[0].content must be a non-empty"),
        ({"todos": [{"content": "a", "status": "done"}]}, "todos[0].status must be one of"),
        ({"todos": [{"content": "a", "status": "pending", "activeForm": 3}]}, "todos[0].activeForm"),
        ({"todos": [{"content": "a", "status": "pending"}] * (MAX_ITEMS + 1)}, "at most"),
    ],
)
def test_bad_input_is_an_error_result_the_model_reads(
    args: dict[str, Any], said: str, tmp_path: Path
) -> None:
    out = run_tool(args, tmp_path)
    assert out.is_error and said in out.content and out.todos is None


def test_a_list_sent_as_json_text_is_read_and_active_form_is_optional(tmp_path: Path) -> None:
    out = run_tool({"todos": '[{"content": "a", "status": "pending"}]'}, tmp_path)
    assert out.todos == (TodoItem("a"),)


def test_the_note_holds_every_content_byte_for_byte_and_the_log_form_round_trips() -> None:
    items = parse_todos(TODOS)
    note = todo_note(items)
    assert all(item.content in note for item in items)
    assert note == todo_note(parse_todos(TODOS))  # the same list, the same text
    assert todo_note(()) == ""
    assert todos_from_json(todos_to_json(items)) == items
    assert todos_from_json([{"content": "ok", "status": "pending"}, {"status": "x"}, 3]) == (TodoItem("ok"),)


# -- where the note rides -----------------------------------------------------------------------


def test_the_note_goes_at_the_end_of_the_newest_user_message_once() -> None:
    note = todo_note(parse_todos(TODOS))
    history = [Message.user("go"), Message.assistant("ok"), Message("user", (ToolResult("t1", "out"),))]
    placed = carried(history, note)
    assert placed is not None and placed[:2] == history[:2]
    assert (
        placed[-1].content == (ToolResult("t1", "out"), TextBlock(note)) and placed[-1].id != history[-1].id
    )
    assert carried(placed, note) is None  # held already: the history stays as it is
    assert carried([*placed, Message.assistant("paused")], todo_note(()) or "x") is None  # a reply last
    assert carried(history, "") is None


def test_a_summary_span_carries_the_note_before_the_instruction_goes_after_it() -> None:
    note = "<todo-list>\n1. [pending] a\n</todo-list>"
    span = [Message.user("go"), Message.assistant("ok")]
    assert with_note(span, note)[-1] == Message.user(note) or with_note(span, note)[-1].text == note
    ending = [Message.user("go"), Message.assistant("ok"), Message("user", (ToolResult("t", "r"),))]
    assert with_note(ending, note)[-1].content[-1] == TextBlock(note)
    holding = [*ending[:2], Message.user(note)]
    assert with_note(holding, note) == holding


def test_the_log_reader_takes_the_last_record() -> None:
    records = [
        StateRecord("r1", "t", TOPIC, {"todos": [{"content": "old", "status": "pending"}]}),
        StateRecord("r2", "t", "pins", {"pins": []}),
        StateRecord("r3", "t", TOPIC, {"todos": [{"content": "new", "status": "completed"}]}),
    ]
    assert logged_todos(records) == (TodoItem("new", "completed"),)
    assert logged_todos(records[1:2]) == ()


# -- the loop: every later request carries the list ------------------------------------------------


def make_loop(
    tmp_path: Path, script: list[Any], context: Any
) -> tuple[AgentLoop, ScriptedProvider, MemorySession]:
    provider = ScriptedProvider(script)
    log = MemorySession()
    loop = AgentLoop(
        provider=provider,
        tools=default_tools(),
        context=context,
        system="You are a test agent.",
        log=log,
        approver=AutoApprover(),
        tool_context=ToolContext(root=tmp_path),
        retry=RetryPolicy(max_retries=0, base_delay=0.0, max_delay=0.0),
        sleep=lambda s: None,
    )
    return loop, provider, log


def texts(request: Request) -> list[str]:
    """The request's text blocks and tool results, in order."""
    return [
        b.text if isinstance(b, TextBlock) else b.content
        for m in request.messages
        for b in m.content
        if isinstance(b, TextBlock | ToolResult)
    ]


def held(request: Request, note: str) -> int:
    return sum(t.count(note) for t in texts(request))


def test_a_written_list_rides_in_every_later_request_and_is_logged(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    script = [call("todo_write", todos=TODOS), call("read_file", path="a.txt"), say("done"), say("again")]
    loop, provider, log = make_loop(tmp_path, script, PassThroughContext())
    list(loop.run("plan it"))
    note = todo_note(parse_todos(TODOS))
    assert held(provider.requests[0], note) == 0
    assert all(held(r, note) == 1 for r in provider.requests[1:])
    # It is todo_write's own result, in that round's results message: nothing else was added to the
    # history (a text block there would make it a new user turn and drop the turn's thinking).
    (result,) = provider.requests[1].messages[-1].content
    assert isinstance(result, ToolResult) and result.content.endswith("\n\n" + note)
    assert provider.requests[1].messages[:1] == provider.requests[0].messages
    assert log.states == [(TOPIC, {"todos": todos_to_json(parse_todos(TODOS))})]
    assert loop.frame_parts.todos == parse_todos(TODOS) and loop.frame.todos == note
    loop.clear()  # /clear: the list stays, and the next request carries it again
    list(loop.run("next"))
    assert texts(provider.requests[-1]) == ["next", note]


def test_a_failed_call_leaves_the_list_as_it_was(tmp_path: Path) -> None:
    script = [call("todo_write", todos=TODOS), call("todo_write", todos=[{"content": "x"}] * 500), say("ok")]
    loop, _, log = make_loop(tmp_path, script, PassThroughContext())
    list(loop.run("plan"))
    assert loop.frame_parts.todos == parse_todos(TODOS) and len(log.states) == 1


def big_reads(tmp_path: Path, n: int) -> list[Any]:
    for i in range(n):
        (tmp_path / f"f{i}.txt").write_text(
            "".join(f"line {k} of file {i}: value {i * 1000 + k}\n" for k in range(120))
        )
    # Notes the model keeps as it reads: only a record or a drop makes room for them (L1 cannot).
    notes = [" ".join(f"Observation {k} on step {i}." for k in range(60)) for i in range(n)]
    return [calls(("read_file", {"path": f"f{i}.txt"}), text=notes[i]) for i in range(n)]


def test_the_list_survives_clears_a_summary_and_an_emergency_cut_byte_for_byte(tmp_path: Path) -> None:
    """L1 clears old reads, the first summaries are skipped (L4 drops the oldest turns), a later one
    is made (L2): every request after the list was written, summary requests included, carries its note, and
    in a summary request the instruction is still the last text block, after the note."""
    asked = {"n": 0}

    def gate(layer: Any, trigger: Any, focus: str | None) -> CompactGate:
        # The first ten automatic compactions are skipped (a PreCompact hook's way), so the context
        # grows to the emergency line (L4); the eleventh goes ahead (L2). L1 clears on the way up.
        asked["n"] += 1
        return CompactGate(skip=asked["n"] <= 10)

    summarizer = FakeSummarizer(["## Work state\nreading the files"])
    engine, _, _ = make_engine(tmp_path, summarizer, gate=gate)
    script = [call("todo_write", todos=TODOS), *big_reads(tmp_path, 60), say("all read")]
    loop, provider, _ = make_loop(tmp_path, script, engine)
    events = list(loop.run("read every file"))
    layers = {e.layer for e in events if isinstance(e, CompactEvent)}
    assert {"clear", "summarize", "emergency"} <= layers, layers
    note = todo_note(parse_todos(TODOS))
    for request in provider.requests[1:]:
        assert held(request, note), "a request went without the todo list"
    assert summarizer.requests
    for request in summarizer.requests:
        last = request.messages[-1].content
        assert isinstance(last[-1], TextBlock) and last[-1].text.removeprefix(INSTRUCTION_TAG).startswith(
            "Stop here and write no tool calls."
        )
        assert holds(request.messages, note)


# -- what the REPL shows --------------------------------------------------------------------------


def test_the_toolbar_shows_the_item_in_progress_safely_and_cut_to_its_room() -> None:
    hostile = TodoItem("Fix \x1b[2K\rit\nnow\tplease " + "x" * 80, "in_progress")
    shown = toolbar_item((TodoItem("done", "completed"), hostile))
    assert "\x1b" not in shown and "\n" not in shown and "\r" not in shown and "\t" not in shown
    assert "\\x1b[2K\\x0dit\\x0anow\\x09please" in shown and shown.endswith("…")
    assert shown.startswith(" · doing: ") and len(shown) <= len(" · doing: ") + 40
    assert toolbar_item((TodoItem("a", "pending"),)) == ""
    assert toolbar_item((hostile,), room=12) == ""  # no room: nothing rather than a stub
    assert toolbar_item((TodoItem("a", "in_progress", "Doing a"),)) == " · doing: Doing a"
    assert todo_lines((TodoItem("a\x07b", "completed"),)) == ["1. [x] a\\x07b"]


def test_a_registry_without_the_tool_still_runs(tmp_path: Path) -> None:
    assert ToolRegistry().run("todo_write", {"todos": []}, ToolContext(root=tmp_path)).is_error


def test_a_summary_request_carries_the_note_held_in_the_kept_tail(tmp_path: Path) -> None:
    """The note sits in the newest message, which the summary keeps verbatim: the span the summary
    request sends does not hold it, so the request gets it before its instruction."""
    note = todo_note(parse_todos(TODOS))
    summarizer = FakeSummarizer(["## Work state\nreading the files"])
    engine, _, _ = make_engine(tmp_path, summarizer)
    history = [Message.user("go")]
    for i in range(6):
        history += [Message.assistant(f"step {i}: " + "word " * 1_500), Message.user(f"next {i}")]
    history[-1] = history[-1].replace((*history[-1].content, TextBlock(note)))
    frame = replace(FRAME, todos=note)
    prepared = engine.compact(history, frame, None, "manual")
    assert any(isinstance(e, CompactEvent) for e in prepared.events)
    (request,) = summarizer.requests
    assert not holds(request.messages[:-1], note)  # the span itself did not hold it
    last = request.messages[-1].content
    assert last[-2] == TextBlock(note) and isinstance(last[-1], TextBlock)
    assert last[-1].text.removeprefix(INSTRUCTION_TAG).startswith("Stop here and write no tool calls.")
    assert holds(prepared.messages, note)  # and the kept tail still holds it

"""Sub-agents in a real session (open_session, real tools in a temp project, a scripted provider):
/cost shows each child's spend, /rewind undoes a child's file changes with the turn that started
it, Esc (a KeyboardInterrupt in the child's request) stops the child and the parent's turn, and a
background task returns an id at once while its report joins the parent's next request."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from io import StringIO
from pathlib import Path
from typing import Any

from rich.console import Console

from agent_cli.agent.approvals import Answer
from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.events import ResultEvent, ToolProgress, ToolResultEvent
from agent_cli.core.messages import Message, ToolResult, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.session import AgentSession
from agent_cli.testing.scripted import ScriptedProvider, call, say
from agent_cli.ui import background_commands
from agent_cli.ui.render import Renderer
from agent_cli.ui.repl import Repl

CHILD = "CHILD-PROMPT"


def session(tmp_path: Path, script: list[Completion | Callable[[Request], Completion]]) -> AgentSession:
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    env = {"ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    config = tmp_path / "config.toml"
    config.write_text("")
    settings = load_settings(
        config_path=config, env=env, flags=Flags(model="claude-sonnet-4-5", yes=True), cwd=root
    )
    provider = ScriptedProvider(list(script))
    return open_session(settings, env=env, make_provider=lambda _: provider)


def repl(s: AgentSession, *lines: str) -> str:
    out = StringIO()
    renderer = Renderer(Console(file=out, width=200, color_system=None))
    queue = list(lines)

    def read() -> str:
        if not queue:
            raise EOFError
        return queue.pop(0)

    assert Repl(s, lambda: renderer, read).run() == 0
    return out.getvalue()


def task(prompt: str = CHILD, **more: object) -> Completion:
    return call("task", description="a side job", prompt=prompt, **more)


def is_child(request: Request) -> bool:
    return CHILD in request.messages[0].text


def results(request: Request) -> list[ToolResult]:
    return [b for m in request.messages for b in m.content if isinstance(b, ToolResult)]


def test_cost_shows_each_childs_spend_and_the_bill_counts_it(tmp_path: Path) -> None:
    child_reply = Completion(Message.assistant("the report"), "end_turn", Usage(7_777, 555))
    s = session(tmp_path, [task(), child_reply, say("done")])
    try:
        out = repl(s, "go", "/cost")
        assert [u for _, u in s.usage_log].count(Usage(7_777, 555)) == 1  # in the session's bill
        (record,) = s.tasks.records
        assert record.status == "done" and record.report == "the report"
        assert [u for _, u in record.usage_log] == [Usage(7_777, 555)]
    finally:
        s.close()
    assert "of which, sub-agents:" in out
    assert "done · 8,332 tokens" in out and "cancelled" not in out  # the line under the task call
    row = next(line for line in out.splitlines() if "task1 a side job" in line)
    assert "7,777" in row and "555" in row and "$" in row


def test_rewind_undoes_a_childs_file_changes_with_the_turn_that_started_it(tmp_path: Path) -> None:
    s = session(
        tmp_path,
        [
            task(),
            call("write_file", path="made_by_child.txt", content="child\n"),
            say("wrote it"),
            say("the child wrote a file"),
        ],
    )
    made = tmp_path / "project" / "made_by_child.txt"
    try:
        list(s.run("first"))
        assert made.read_text() == "child\n"
        (point,) = s.rewind_points()
        assert "made_by_child.txt" in point.files
        s.rewind(1)
    finally:
        s.close()
    assert not made.exists()


def test_esc_in_a_childs_request_stops_the_child_and_the_parents_turn(tmp_path: Path) -> None:
    def esc(request: Request) -> Completion:
        raise KeyboardInterrupt  # what SIGINT (Esc in the REPL) raises in the turn's thread

    s = session(tmp_path, [task(), call("bash", command="true"), esc, say("after")])
    try:
        events = list(s.run("go"))
        assert isinstance(events[-1], ResultEvent) and events[-1].stop == "interrupted"
        ended = [e for e in events if isinstance(e, ToolResultEvent) and e.name == "task"]
        assert ended and ended[0].is_error and "interrupted" in ended[0].content
        (record,) = s.tasks.records
        assert record.status == "stopped"
        assert any(isinstance(e, ToolProgress) and e.name == "task" for e in events)  # its line shown
        list(s.run("again"))  # the session goes on: its next request is the parent's
    finally:
        s.close()


def test_a_background_task_returns_an_id_and_its_report_joins_the_next_request(tmp_path: Path) -> None:
    release = threading.Event()
    parent_requests: list[Request] = []

    def answer(request: Request) -> Completion:
        if is_child(request):
            release.wait(60)  # the child ends only once the parent's first turn is over
            return say("BACKGROUND REPORT: 42 files")
        parent_requests.append(request)
        if len(parent_requests) == 1:
            return task(background=True)
        return say(f"parent reply {len(parent_requests)}")

    s = session(tmp_path, [answer] * 6)
    try:
        events = list(s.run("start it"))
        started = next(e for e in events if isinstance(e, ToolResultEvent) and e.name == "task")
        assert "Started task1 in the background" in started.content and not started.is_error
        assert len(parent_requests) == 2  # the parent went on without waiting
        assert not any("BACKGROUND REPORT" in m.text for m in parent_requests[1].messages)
        release.set()
        assert s.tasks.join(60)
        list(s.run("next"))
    finally:
        s.close()
    last = parent_requests[-1]
    assert "BACKGROUND REPORT: 42 files" in last.messages[-1].text
    assert "[Background task task1 (a side job) ended: done]" in last.messages[-1].text


def test_a_childs_saved_output_is_named_from_the_project_as_the_sessions_is(tmp_path: Path) -> None:
    """A page or a cut output a child saves is told to it as `.transcripts/<session>/tasks/<id>/...`
    (recall takes that path), not as an absolute path."""
    from agent_cli.store.archive import Archive

    child = tmp_path / "p" / ".transcripts" / "S1" / "tasks" / "T1"
    deeper = child / "tasks" / "T2"
    assert Archive(child).shown(child / "output-001-x.txt") == ".transcripts/S1/tasks/T1/output-001-x.txt"
    assert Archive(deeper).shown(deeper / "o.txt") == ".transcripts/S1/tasks/T1/tasks/T2/o.txt"
    assert Archive(tmp_path / "elsewhere" / "S").shown(tmp_path / "elsewhere" / "S" / "o.txt").startswith("/")


def test_a_background_child_never_asks_and_what_would_ask_is_refused(tmp_path: Path) -> None:
    """In the REPL (an asker), a foreground child's write is asked as the session's are; a
    background child's is refused without a question (nothing can be asked from its thread)."""
    asked: list[str] = []

    def ask(name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        asked.append(str(args.get("path")))
        return "yes"

    def answer(request: Request) -> Completion:
        first = request.messages[0].text
        done = results(request)
        if "FG-CHILD" in first or "BG-CHILD" in first:
            name = "fg.txt" if "FG-CHILD" in first else "bg.txt"
            return say("child done") if done else call("write_file", path=name, content="x\n")
        if not done:
            return task("FG-CHILD write")
        if len(done) == 1:
            return task("BG-CHILD write", background=True)
        return say("parent done")

    root = tmp_path / "project"
    root.mkdir()
    env = {"ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    (tmp_path / "config.toml").write_text("")
    settings = load_settings(
        config_path=tmp_path / "config.toml", env=env, flags=Flags(model="claude-sonnet-4-5"), cwd=root
    )
    provider = ScriptedProvider([answer] * 8)
    s = open_session(settings, env=env, ask=ask, make_provider=lambda _: provider)
    try:
        list(s.run("go"))
        assert s.tasks.join(60)
    finally:
        s.close()
    assert asked == ["fg.txt"]
    assert (root / "fg.txt").exists() and not (root / "bg.txt").exists()
    bg = [r for r in provider.requests if "BG-CHILD" in r.messages[0].text]
    assert results(bg[-1])[-1].is_error


def test_ps_lists_a_background_task_and_stop_ends_it_its_report_says_so(tmp_path: Path) -> None:
    release = threading.Event()
    parent_requests: list[Request] = []

    def answer(request: Request) -> Completion:
        if is_child(request):
            release.wait(60)
            return call("bash", command="true")  # it would go on; the stop comes first
        parent_requests.append(request)
        return task(background=True) if len(parent_requests) == 1 else say(f"reply {len(parent_requests)}")

    s = session(tmp_path, [answer] * 8)
    out = StringIO()
    renderer = Renderer(Console(file=out, width=200, color_system=None))
    kit = Repl(s, lambda: renderer, lambda: "").kit  # what /ps and /stop are handed
    try:
        list(s.run("start it"))
        background_commands.ps(kit, "")
        background_commands.stop(kit, "task1")
        release.set()
        assert s.tasks.join(60)
        list(s.run("next"))
    finally:
        s.close()
    shown = out.getvalue()
    assert "task1 task running" in shown and "a side job" in shown
    assert "task1 stopping: its report says so when it ends" in shown
    assert s.tasks.records[0].status == "stopped"
    assert "[Background task task1 (a side job) ended: stopped]" in parent_requests[-1].messages[-1].text

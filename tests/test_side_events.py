"""The turn's side channels as one queue (agent/side_events.py): producers on any thread put, the
loop reads it at one point, the door its events leave through. Real threads, the real loop over a
scripted provider, real tools in a temp dir."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent_cli.agent.approvals import AutoApprover
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.side_events import HookEvent, Notice, SideEvents, TaskReport
from agent_cli.core.events import (
    Event,
    HookOutput,
    ResultEvent,
    StatusEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from agent_cli.core.messages import TextBlock, ToolResult, ToolUse
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, call, say
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools

PRODUCERS = 8
EACH = 500


def _produce(side: SideEvents, who: int, start: threading.Barrier) -> None:
    start.wait()
    for i in range(EACH):
        side.put(Notice(f"{who}:{i}"))


def _split(texts: list[str]) -> dict[int, list[int]]:
    by: dict[int, list[int]] = {}
    for text in texts:
        who, i = text.split(":")
        by.setdefault(int(who), []).append(int(i))
    return by


def test_producers_on_threads_one_take_every_note_once_each_producers_in_order() -> None:
    side = SideEvents()
    start = threading.Barrier(PRODUCERS)
    threads = [threading.Thread(target=_produce, args=(side, w, start)) for w in range(PRODUCERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken = side.take()
    assert all(isinstance(n, Notice) for n in taken)
    by = _split([n.text for n in taken if isinstance(n, Notice)])
    assert by == {w: list(range(EACH)) for w in range(PRODUCERS)}
    assert side.take() == []  # taken once


def test_a_take_while_producers_put_loses_and_repeats_nothing() -> None:
    side = SideEvents()
    start = threading.Barrier(PRODUCERS + 1)
    threads = [threading.Thread(target=_produce, args=(side, w, start)) for w in range(PRODUCERS)]
    for t in threads:
        t.start()
    start.wait()
    taken: list[str] = []
    while any(t.is_alive() for t in threads):
        taken += [n.text for n in side.take() if isinstance(n, Notice)]
    for t in threads:
        t.join()
    taken += [n.text for n in side.take() if isinstance(n, Notice)]
    assert _split(taken) == {w: list(range(EACH)) for w in range(PRODUCERS)}


def test_notes_keep_the_order_they_were_put_in_across_kinds() -> None:
    side = SideEvents()
    notes = [Notice("a"), TaskReport("b"), HookEvent(WarningEvent(message="c")), Notice("d")]
    for note in notes:
        side.put(note)
    assert side.take() == notes


# -- the loop: the one reader ---------------------------------------------------------


def make_loop(
    tmp_path: Path, script: list[Any], side: SideEvents, hooks: Hooks | None = None
) -> tuple[AgentLoop, ScriptedProvider, MemorySession]:
    provider = ScriptedProvider(script)
    log = MemorySession()
    loop = AgentLoop(
        provider=provider,
        tools=default_tools(),
        context=PassThroughContext(),
        system="You are a test agent.",
        log=log,
        approver=AutoApprover(),
        tool_context=ToolContext(root=tmp_path, bash_timeout=30.0),
        hooks=hooks,
        retry=RetryPolicy(max_retries=0, base_delay=0.0, max_delay=0.0),
        sleep=lambda s: None,
        side=side,
    )
    return loop, provider, log


class _SayingHooks(Hooks):
    """A hook that has something to show after each tool call: it puts it, as UserHooks does."""

    def __init__(self, side: SideEvents) -> None:
        self._side = side

    def on_post_tool(self, use: ToolUse, result: ToolResult) -> ToolResult:
        self._side.put(HookEvent(HookOutput(hook="PostToolUse", text=f"after {use.name}")))
        return result


def test_a_hooks_output_comes_before_the_next_event_and_is_logged_a_notice_is_not(tmp_path: Path) -> None:
    side = SideEvents()
    (tmp_path / "a.txt").write_text("alpha\n")
    loop, _, log = make_loop(
        tmp_path, [call("read_file", path="a.txt"), say("done")], side, _SayingHooks(side)
    )
    side.put(Notice("@missing names nothing"))  # (the session puts a prompt's notes before the turn)
    events = [e for e in loop.run("read a.txt") if not isinstance(e, StatusEvent)]
    assert events[0] == WarningEvent(message="@missing names nothing")
    kinds = [type(e) for e in events]
    said = kinds.index(HookOutput)
    assert kinds[said - 1] is ToolCallEvent and kinds[said + 1] is ToolResultEvent
    assert isinstance(events[-1], ResultEvent)
    assert HookOutput(hook="PostToolUse", text="after read_file") in log.events
    assert WarningEvent(message="@missing names nothing") not in log.events
    assert side.take() == []


def test_a_report_put_from_another_thread_mid_request_rides_in_the_next_request(tmp_path: Path) -> None:
    side = SideEvents()

    def reply_while_a_task_ends(request: Request) -> Completion:
        ended = threading.Thread(target=side.put, args=(TaskReport("[task t1 ended: done]\nfound it"),))
        ended.start()
        ended.join()
        return call("read_file", path="a.txt")

    (tmp_path / "a.txt").write_text("alpha\n")
    loop, provider, log = make_loop(tmp_path, [reply_while_a_task_ends, say("ok")], side)
    events = list(loop.run("go"))
    assert isinstance(events[-1], ResultEvent) and events[-1].stop == "end_turn"
    first, second = provider.requests
    assert all("found it" not in str(m.content) for m in first.messages)
    newest = second.messages[-1]  # the round's results, then the report, in one user message
    assert newest.role == "user" and newest.content[-1] == TextBlock("[task t1 ended: done]\nfound it")
    assert [reason for _, reason in log.checkpoints] == ["task-report"]
    assert not [e for e in events if isinstance(e, WarningEvent)]  # the model's, not the user's


def test_the_side_queue_is_read_at_the_turns_end_and_by_begin_and_end(tmp_path: Path) -> None:
    side = SideEvents()

    class _Ending(Hooks):
        def on_session_start(self, source: str) -> str:
            side.put(HookEvent(HookOutput(hook="SessionStart", text="hello")))
            return ""

        def on_stop(self, reply: str, active: bool = False) -> str | None:
            side.put(HookEvent(HookOutput(hook="Stop", text="bye")))
            return None

    loop, _, _ = make_loop(tmp_path, [say("hi")], side, _Ending())
    assert list(loop.begin()) == [HookOutput(hook="SessionStart", text="hello")]
    events: list[Event] = list(loop.run("hi"))
    assert events[-2:-1] == [HookOutput(hook="Stop", text="bye")] and isinstance(events[-1], ResultEvent)
    side.put(Notice("late"))
    assert list(loop.end()) == [WarningEvent(message="late")]

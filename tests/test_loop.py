"""AgentLoop with a scripted provider, a pass-through context policy and real tools in a temp dir."""

from __future__ import annotations

import dataclasses
import signal
import threading
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import AutoApprover, Decision, HeadlessApprover
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.tool_runner import ToolRunner, run_through
from agent_cli.context.protocol import Frame, Prepared
from agent_cli.core.errors import ContextOverflowError, RateLimitError, TransientError
from agent_cli.core.events import (
    AssistantText,
    CompactEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    RetryEvent,
    ThinkingText,
    ToolCallEvent,
    ToolResultEvent,
)
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.core.pairing import pairing_errors
from agent_cli.core.requests import Completion, Request, RequestOptions, ToolSpec
from agent_cli.core.thought_blocks import RedactedThinkingBlock, ThinkingBlock
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, call, calls, say
from agent_cli.tools.base import Approval, CallView, ToolContext, ToolOutput, ToolRegistry
from agent_cli.tools.registry import default_tools


def make_loop(
    tmp_path: Path, script: list[Any], **kw: Any
) -> tuple[AgentLoop, ScriptedProvider, MemorySession]:
    provider = ScriptedProvider(script)
    session = MemorySession()
    loop = AgentLoop(
        provider=provider,
        tools=default_tools(),
        context=kw.pop("context", PassThroughContext()),
        system="You are a test agent.",
        log=session,
        approver=kw.pop("approver", AutoApprover()),
        tool_context=ToolContext(root=tmp_path, bash_timeout=kw.pop("bash_timeout", 30.0)),
        retry=RetryPolicy(max_retries=kw.pop("max_retries", 3), base_delay=0.0, max_delay=0.0),
        sleep=lambda s: None,
        **kw,
    )
    return loop, provider, session


def result_of(events: list[Event]) -> ResultEvent:
    assert isinstance(events[-1], ResultEvent), events[-1]
    return events[-1]


def test_plain_answer_ends_the_turn(tmp_path: Path) -> None:
    loop, provider, session = make_loop(tmp_path, [say("hello there")])
    events = list(loop.run("hi"))
    assert result_of(events).text == "hello there"
    assert result_of(events).stop == "end_turn"
    assert [m.role for m in loop.history] == ["user", "assistant"]
    assert [m.id for m in session.messages] == [m.id for m in loop.history]
    assert provider.requests[0].system == "You are a test agent."
    assert {t.name for t in provider.requests[0].tools} >= {"read_file", "bash", "compact", "recall"}


def test_tool_round_trip_reads_a_real_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    loop, provider, _ = make_loop(tmp_path, [call("read_file", path="a.txt"), say("it says alpha")])
    events = list(loop.run("read a.txt"))
    calls_seen = [e for e in events if isinstance(e, ToolCallEvent)]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert calls_seen[0].name == "read_file" and "alpha" in results[0].content
    assert not results[0].is_error
    second = provider.requests[1].messages
    assert second[-1].tool_results and "beta" in second[-1].tool_results[0].content
    assert pairing_errors(loop.history) == []
    assert result_of(events).text == "it says alpha"


class _AnchoringContext(PassThroughContext):
    """Names the first message as the last one its next clear keeps, once there is a tool result."""

    def cache_options(self, history: Sequence[Message]) -> RequestOptions:
        if not any(m.tool_results for m in history):
            return RequestOptions()
        return RequestOptions(cache_anchor=0, cache_span_end=1)  # (the next summary's span ends at 1)


def test_the_engine_cache_anchor_rides_on_the_request(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    loop, provider, _ = make_loop(
        tmp_path, [call("read_file", path="a.txt"), say("done")], context=_AnchoringContext()
    )
    list(loop.run("read a.txt"))
    assert provider.requests[0].options.cache_anchor is None
    assert provider.requests[1].options == RequestOptions(cache_anchor=0, cache_span_end=1)


class _TurnEnds(PassThroughContext):
    """Records the history each time it is told a turn ended."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[int] = []

    def turn_ended(self, history: Sequence[Message], frame: Frame) -> None:
        self.ends.append(len(history))


def test_the_context_hears_when_the_user_is_to_speak_and_only_then(tmp_path: Path) -> None:
    context = _TurnEnds()
    loop, _, _ = make_loop(tmp_path, [call("read_file", path="a.txt"), say("done")], context=context)
    (tmp_path / "a.txt").write_text("alpha\n")
    list(loop.run("read a.txt"))
    assert context.ends == []  # a turn's own requests are no turn's end (nor is a one-shot run's)
    loop.awaiting_user()
    assert context.ends == [len(loop.history)] and loop.history[-1].role == "assistant"


def test_headless_denial_is_a_readable_error_result(tmp_path: Path) -> None:
    loop, _, _ = make_loop(
        tmp_path, [call("bash", command="touch x"), say("ok, not allowed")], approver=HeadlessApprover()
    )
    events = list(loop.run("make x"))
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert result.is_error and "--yes" in result.content
    assert not (tmp_path / "x").exists()
    assert result_of(events).ok


def test_max_iterations_stops_with_a_clear_message(tmp_path: Path) -> None:
    script = [call("glob", pattern="*") for _ in range(3)]
    loop, _, _ = make_loop(tmp_path, script, max_iterations=3)
    events = list(loop.run("loop forever"))
    assert result_of(events).stop == "max_iterations" and result_of(events).text == ""
    assert any(isinstance(e, ErrorEvent) and "3 model requests" in e.message for e in events)
    assert pairing_errors(loop.history) == []


def test_transient_errors_are_retried_and_reported(tmp_path: Path) -> None:
    script: list[Any] = [
        RateLimitError("slow down", status=429, retry_after=0.0),
        TransientError("drop"),
        say("done"),
    ]
    loop, _, _ = make_loop(tmp_path, script)
    events = list(loop.run("go"))
    assert [e.attempt for e in events if isinstance(e, RetryEvent)] == [1, 2]
    assert result_of(events).text == "done"
    assert [m.role for m in loop.history] == ["user", "assistant"]


def test_provider_failure_after_retries_ends_with_error(tmp_path: Path) -> None:
    script: list[Any] = [TransientError("boom") for _ in range(3)]
    loop, _, _ = make_loop(tmp_path, script, max_retries=2)
    events = list(loop.run("go"))
    assert result_of(events).stop == "error"
    assert any(isinstance(e, ErrorEvent) and "boom" in e.message for e in events)
    assert [m.role for m in loop.history] == ["user"]


def test_overflow_compacts_and_retries_once_then_stops(tmp_path: Path) -> None:
    ctx = PassThroughContext()
    overflow = ContextOverflowError("prompt is too long: 300 tokens > 200 maximum", tokens=300, limit=200)
    loop, _, _ = make_loop(tmp_path, [overflow, say("fits now")], context=ctx)
    events = list(loop.run("big"))
    assert ctx.overflow_calls == 1 and result_of(events).text == "fits now"
    assert any(isinstance(e, CompactEvent) and e.trigger == "overflow" for e in events)

    ctx2 = PassThroughContext()
    loop2, provider2, _ = make_loop(tmp_path, [overflow, overflow, say("never")], context=ctx2)
    events2 = list(loop2.run("big"))
    assert ctx2.overflow_calls == 1, "at most one forced retry per request"
    assert result_of(events2).stop == "error" and len(provider2.requests) == 2


def test_max_tokens_continues_without_compacting(tmp_path: Path) -> None:
    ctx = PassThroughContext()
    loop, provider, _ = make_loop(tmp_path, [say("part one, ", "max_tokens"), say("part two")], context=ctx)
    events = list(loop.run("write a lot"))
    assert result_of(events).text == "part one, part two"
    assert ctx.overflow_calls == 0 and not ctx.compact_calls
    assert "output token limit" in provider.requests[1].messages[-1].text


def test_compact_tool_runs_after_the_tool_round(tmp_path: Path) -> None:
    ctx = PassThroughContext()
    loop, provider, _ = make_loop(
        tmp_path, [call("compact", focus="the parser"), say("continuing")], context=ctx
    )
    events = list(loop.run("tidy up"))
    assert ctx.compact_calls == [("the parser", "tool")]
    compact_result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert "scheduled" in compact_result.content
    last_request = provider.requests[-1].messages
    assert last_request[0].text.startswith("[condensed record, focus=the parser]")
    assert last_request[-1].role == "user"
    assert result_of(events).text == "continuing"


def test_manual_compact_from_the_repl(tmp_path: Path) -> None:
    ctx = PassThroughContext()
    loop, _, session = make_loop(tmp_path, [say("a")], context=ctx)
    list(loop.run("first"))
    events = list(loop.compact("keep the API notes"))
    assert ctx.compact_calls == [("keep the API notes", "manual")]
    assert any(isinstance(e, CompactEvent) for e in events)
    assert session.checkpoints[-1][1] == "manual"


def test_resumed_history_with_an_open_tool_call_is_repaired(tmp_path: Path) -> None:
    use = ToolUse("toolu_open", "bash", {"command": "sleep 60"})
    history = [Message.user("go"), Message("assistant", (use,))]
    loop, provider, _ = make_loop(tmp_path, [say("resumed")], history=history)
    list(loop.run("go on"))
    sent = provider.requests[0].messages
    assert pairing_errors(sent) == []
    results = [r for m in sent for r in m.tool_results]
    assert results and results[0].tool_use_id == "toolu_open" and results[0].is_error


def test_ctrl_c_during_a_tool_cancels_it_and_keeps_history_valid(tmp_path: Path) -> None:
    loop, _, _ = make_loop(tmp_path, [call("bash", command="sleep 300"), say("unused")])
    events: list[Event] = []
    gen = loop.run("sleep")
    started = time.monotonic()
    for event in gen:
        events.append(event)
        if isinstance(event, ToolCallEvent):
            threading.Timer(0.3, lambda: __import__("_thread").interrupt_main()).start()
    assert time.monotonic() - started < 120  # the command was stopped, not waited for (300 s)
    assert result_of(events).stop == "interrupted"
    assert pairing_errors(loop.history) == []
    stopped = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [(e.name, e.is_error) for e in stopped] == [("bash", True)] and "interrupted" in stopped[0].content
    last = loop.history[-1]
    assert last.tool_results and last.tool_results[0].is_error


def test_hooks_see_requests_and_can_veto_and_rewrite(tmp_path: Path) -> None:
    seen: list[Request] = []

    class Recorder(Hooks):
        def on_pre_request(self, request: Request) -> None:
            seen.append(request)

        def on_before_tool(self, use: ToolUse) -> str | None:
            return "writes are frozen" if use.name == "write_file" else None

        def on_post_tool(self, use: ToolUse, result: ToolResult) -> ToolResult:
            return ToolResult(result.tool_use_id, result.content + " [seen]", result.is_error)

    script = [calls(("write_file", {"path": "x", "content": "y"}), ("glob", {"pattern": "*"})), say("ok")]
    loop, _, _ = make_loop(tmp_path, script, hooks=Recorder())
    events = list(loop.run("go"))
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert results[0].is_error and "frozen" in results[0].content
    assert results[1].content.endswith("[seen]")
    assert not (tmp_path / "x").exists() and len(seen) == 2


@pytest.mark.parametrize("text", ["", "final words"])
def test_assistant_text_events_match_messages(tmp_path: Path, text: str) -> None:
    loop, _, _ = make_loop(tmp_path, [say(text or "x")])
    events = list(loop.run("hi"))
    assert [e.text for e in events if isinstance(e, AssistantText)] == [text or "x"]


def test_tool_duration_excludes_the_time_spent_asking(tmp_path: Path) -> None:
    now = [0.0]  # the runner's clock, moved only by the user and the tool below

    class SlowUser:
        def decide(self, name: str, args: Any) -> Decision:
            now[0] += 50.0  # the user thinks it over
            return Decision.allow()

    class TwoSeconds:
        spec = ToolSpec("two_seconds", "Takes two seconds.", {"type": "object", "properties": {}})
        approval: Approval = "ask"
        view = CallView()

        def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
            now[0] += 2.0
            return ToolOutput("done")

    runner = ToolRunner(ToolRegistry([TwoSeconds()]), SlowUser(), Hooks(), clock=lambda: now[0])
    output, seconds = run_through(
        runner.run(ToolUse("toolu_1", "two_seconds", {}), ToolContext(root=tmp_path))
    )
    assert (output.content, output.is_error, seconds) == ("done", False, 2.0)


def test_ctrl_c_during_a_model_stream_keeps_no_half_message(tmp_path: Path) -> None:
    from agent_cli.core.requests import TextDelta

    def slow(request: Request) -> Any:
        yield TextDelta("half an ans")
        # Ctrl-C (SIGINT to the main thread, which wakes its wait) while the rest is awaited: however
        # late the timer runs, it comes before the rest.
        ctrl_c = partial(signal.pthread_kill, threading.main_thread().ident or 0, signal.SIGINT)
        threading.Timer(0.1, ctrl_c).start()
        time.sleep(60)
        yield say("never arrives")

    class SlowProvider(ScriptedProvider):
        def stream(self, request: Request) -> Any:
            self.requests.append(request)
            step = self.script.pop(0)
            if callable(step):
                yield from step(request)
            else:
                yield step

    provider = SlowProvider([slow, say("second turn works")])
    loop, _, session = make_loop(tmp_path, [])
    loop.provider = provider
    events = list(loop.run("long answer please"))
    assert result_of(events).stop == "interrupted"
    assert [m.role for m in loop.history] == ["user", "user"]
    assert "interrupted" in loop.history[-1].text
    assert any(isinstance(e, ErrorEvent) and e.kind == "interrupted" for e in session.events)
    events = list(loop.run("again"))
    assert result_of(events).text == "second turn works"
    assert pairing_errors(provider.requests[-1].messages) == []


def test_a_retry_is_shown_before_the_wait_not_after(tmp_path: Path) -> None:
    seen: list[Event] = []
    waits: list[int] = []  # how many retry events the UI had seen when each wait began
    loop, _, _ = make_loop(tmp_path, [TransientError("drop"), say("done")])
    loop.sleep = lambda s: waits.append(sum(isinstance(e, RetryEvent) for e in seen))
    for event in loop.run("go"):
        seen.append(event)
    assert waits == [1]


def test_thinking_is_shown_once_and_goes_back_unchanged_with_the_tool_result(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    thinking = ThinkingBlock("I will read a.txt first.", "sig-" + "x" * 40)
    redacted = RedactedThinkingBlock("opaque-data")
    use = ToolUse("toolu_think", "read_file", {"path": "a.txt"})
    reply = Completion(Message("assistant", (thinking, redacted, use)), "tool_use", Usage(100, 10))
    loop, provider, session = make_loop(tmp_path, [reply, say("done")])
    events = list(loop.run("read it"))
    shown = [e.text for e in events if isinstance(e, ThinkingText)]
    assert shown == ["I will read a.txt first."]  # the redacted block has nothing to show
    answered = provider.requests[1].messages
    assert answered[-2].content[:2] == (thinking, redacted)  # same blocks, same order
    assert answered[-1].tool_results[0].tool_use_id == "toolu_think"
    logged = session.messages[1]
    assert logged.thoughts == (thinking, redacted)
    assert not [e for e in session.events if isinstance(e, ThinkingText)]  # the message holds it already


def test_a_summary_call_counts_in_the_session_totals(tmp_path: Path) -> None:
    cost = Usage(input_tokens=5_000, output_tokens=300, cache_read_tokens=40_000, reasoning_tokens=120)

    class Costly(PassThroughContext):
        def compact(
            self, history: Sequence[Message], frame: Frame, focus: str | None, trigger: str
        ) -> Prepared:
            prepared = super().compact(history, frame, focus, trigger)
            return Prepared(prepared.messages, [dataclasses.replace(e, usage=cost) for e in prepared.events])

    loop, _, _ = make_loop(tmp_path, [say("first"), say("second")], context=Costly())
    list(loop.run("hello"))
    events = list(loop.compact("keep it"))
    (event,) = [e for e in events if isinstance(e, CompactEvent)]
    assert event.usage == cost and event.to_json()["usage"]["reasoning_tokens"] == 120
    result = result_of(list(loop.run("and now")))
    assert result.usage == Usage(100, 10) + Usage(100, 10) + cost  # two replies and the summary

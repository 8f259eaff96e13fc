"""AgentLoop: one user turn to completion, as a stream of typed events.

    run(prompt) -> prepare context -> request (reactive retry on overflow)
                -> assistant message -> tool round -> repeat
                -> ResultEvent

Each step returns a value the loop dispatches on: `_step` (one request and its
reply) a `NextStep` (RunAgain, FinalOutput, Interrupted, Stopped), the request
(model_request.py, with its reactive retry) a `Completion` or `Failed`, a round
of tool calls a `ToolRound`; everything observable is an event (yielded, logged
to the session, and `on_compact` for compactions). The history only ever holds
complete messages: a half-streamed reply, an interrupted tool round or a crash
leaves a valid history behind.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import assert_never

from agent_cli.agent.approvals import Approver
from agent_cli.agent.attachments import prompt_message
from agent_cli.agent.continuations import Continuations
from agent_cli.agent.door import Door
from agent_cli.agent.event_log import SessionSink
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.model_request import Answered, Failed, Remedied, RequestInputs, Tried, send
from agent_cli.agent.next_step import (
    FinalOutput,
    Interrupted,
    NextStep,
    RunAgain,
    Stopped,
    after_reply,
    reply_events,
)
from agent_cli.agent.request_frame import FrameParts
from agent_cli.agent.side_events import SideEvents
from agent_cli.agent.subagent import with_notes
from agent_cli.agent.tool_round import RoundCalls
from agent_cli.agent.tool_runner import ToolRound, ToolRunner, ToolWatch
from agent_cli.agent.turn_stops import (
    INTERRUPTED_TURN,
    STOPPED_BY_USER,
    answer_open_round,
    cut_short_events,
    too_many_requests,
)
from agent_cli.context.protocol import TOPIC as TODOS_TOPIC
from agent_cli.context.protocol import ContextPolicy, Frame, Prepared, carried
from agent_cli.core.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    ResultStop,
    StatusEvent,
)
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message, ToolUse, Usage
from agent_cli.core.pairing import repair_history
from agent_cli.core.requests import Completion
from agent_cli.core.thinking import strip_thinking
from agent_cli.core.todos import TodoItem, todos_to_json
from agent_cli.prompt.skills import TOPIC as SKILLS_TOPIC
from agent_cli.providers.base import Provider
from agent_cli.providers.retry import RetryPolicy
from agent_cli.tools.base import SkillLoad, ToolContext, ToolOutput, ToolRegistry

__all__ = ["AgentLoop", "SessionSink"]


class AgentLoop:
    def __init__(
        self,
        *,
        provider: Provider,
        tools: ToolRegistry,
        context: ContextPolicy,
        system: str,
        log: SessionSink,
        approver: Approver,
        tool_context: ToolContext,
        hooks: Hooks | None = None,
        max_iterations: int = 100,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        history: Sequence[Message] = (),
        redact: Callable[[str], str] | None = None,
        summary_model: str = "",
        watch: ToolWatch | None = None,  # what each tool call changes in the files (/rewind)
        side: SideEvents | None = None,  # the hooks', MCP servers', tasks' notes (agent/side_events.py)
    ) -> None:
        self.provider = provider
        self.summary_model = summary_model  # who writes the engine's summaries ("": the provider's model)
        self.tools = tools
        self.context = context
        self.frame_parts = FrameParts(system)  # the system prompt, pins, skills, todo list, goal's note
        self.log = log
        self.hooks = hooks or Hooks()
        self.max_iterations = max_iterations
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.history: list[Message] = repair_history(history)
        # What each model call reported, in order (summary calls too): /cost prices each one, since a
        # long request can cost more per token than a short one (Haiku 5.5, GPT-6.x).
        self.usage_log: list[tuple[str, Usage]] = []
        self.tool_context = tool_context
        self._runner = ToolRunner(tools, approver, self.hooks, redact, watch=watch)
        # The last message of the history as the last compaction left it: a compact call with
        # nothing but compact calls after it has nothing new to condense (no summary call).
        self._compacted_at: str | None = None
        self._start_context = ""  # what the SessionStart hooks said, until the first prompt takes it
        self.side = side or SideEvents()  # what the loop's producers put; read only at its door
        self._exit = Door(self.side)  # every event leaves through it (door.py)

    # ---- public surface -------------------------------------------------

    @property
    def frame(self) -> Frame:
        """What the next request carries besides the history (agent/request_frame.py)."""
        return self.frame_parts.frame(self.tools)

    def context_tokens(self) -> int:
        return self.context.tokens(self.history, self.frame)

    def cancel(self) -> None:
        """Stop the running tool (thread-safe). A model stream stops on KeyboardInterrupt."""
        self.tool_context.cancel.set()

    def reset(
        self,
        *,
        provider: Provider | None = None,
        history: Sequence[Message] | None = None,
        log: SessionSink | None = None,
        summary_model: str | None = None,
        images: bool | None = None,
    ) -> None:
        """From the next turn on: another model (and summary writer, and whether it takes images),
        another session's history and log."""
        self.provider = provider or self.provider
        if images is not None:
            self.tool_context = dataclasses.replace(self.tool_context, images=images)
        self.summary_model = self.summary_model if summary_model is None else summary_model
        self.log = log or self.log
        if history is not None:
            self.history = repair_history(history)

    def edit_frame(self, edit: Callable[[FrameParts], bool | None], reason: str) -> bool:
        """A change to what the requests carry besides the history (request_frame.py's FrameParts:
        pins, skills, the todo list, the goal's note), from the next request on. Thinking is bound
        to the whole prefix, the system prompt included: an edit that changed it (`edit` says
        True: the pins, the skills) unbinds the history's thinking. Returns what `edit` said."""
        changed = bool(edit(self.frame_parts))
        if changed and any(m.thoughts for m in self.history):
            self.replace_history(strip_thinking(self.history, 0), reason)
        return changed

    def _use_skill(self, load: SkillLoad) -> None:
        """The model loaded a skill: its body pinned from the next request on, and logged."""
        if self.edit_frame(lambda parts: parts.use_skill(load.name, load.body), "skills"):
            self.log.log_state(SKILLS_TOPIC, self.frame_parts.skills.state())

    def replace_history(self, messages: Sequence[Message], reason: str) -> None:
        """The user changed the context (an edited record, an undone compaction): from now on, logged."""
        self.history = list(messages)
        self.log.log_history(self.history, reason)

    def begin(self, source: str = "startup") -> Iterator[Event]:
        """The session opened: its hooks run; what they add to the context goes with the first prompt."""
        return self._door(self._begin(source))

    def _begin(self, source: str) -> Generator[Event, None, None]:
        self._start_context = self.hooks.on_session_start(source)
        yield from ()

    def awaiting_user(self) -> None:
        """The turn ended, the user is to speak: the context may start work (a record near the trigger)."""
        self.context.turn_ended(self.history, self.frame)

    def end(self) -> Iterator[Event]:
        """The agent leaves the session: its hooks run."""
        return self._door(self._end())

    def _end(self) -> Generator[Event, None, None]:
        self.hooks.on_session_end()
        yield from ()

    def use_tool(self, use: ToolUse, *, sandboxed: bool = False) -> ToolOutput:
        """Run a call for the user (`!command`, `@path`; a goal's check, `sandboxed` as bash runs), as
        they typed it: nothing asked."""
        self.tool_context = dataclasses.replace(self.tool_context, cancel=threading.Event())
        return self._runner.run_for_user(use, self.tool_context, sandboxed=sandboxed)

    def add_user_message(self, text: str) -> None:
        """The user's own message without a turn (what `!command` printed): the next prompt follows it."""
        self._append(Message.user(text))

    def run(self, prompt: str, attached: Sequence[str | ImageBlock] = ()) -> Generator[Event, None, None]:
        """Run one user turn to completion (`attached`: blocks after the prompt, the files its
        `@path` words name). The last event is always a ResultEvent."""
        return self._door(self._run(prompt, attached))

    def _run(self, prompt: str, attached: Sequence[str | ImageBlock]) -> Generator[Event, None, None]:
        # A fresh cancel signal per turn: a tool that ignored the last Ctrl-C keeps its own, still set.
        self.tool_context = dataclasses.replace(self.tool_context, cancel=threading.Event())
        verdict = self.hooks.on_user_prompt(prompt)
        if verdict.blocked is not None:  # the prompt is dropped: it never joins the history
            yield ErrorEvent(message=verdict.blocked, kind="hook")
            yield self._result("", "blocked", 0)
            return
        added = "\n\n".join(t for t in (self._start_context, verdict.context) if t.strip())
        self._start_context = ""
        self._append(prompt_message(prompt, attached, added))  # the prompt byte for byte, in its own block
        try:
            yield from self._turn()
        except KeyboardInterrupt:
            yield from self._interrupted(())
        finally:
            self._close_open_tool_round()

    def compact(self, focus: str | None = None) -> Iterator[Event]:
        """`/compact [focus]`: summarize the whole conversation so far."""
        return self._door(self._compact(focus))

    def _compact(self, focus: str | None) -> Generator[Event, None, None]:
        if not self.history:
            yield ErrorEvent(message="nothing to compact yet", kind="compact")
            return
        yield StatusEvent(text="summarizing")
        yield from self.apply(self.context.compact(self.history, self.frame, focus, "manual"), "manual")

    def clear(self) -> None:
        """`/clear`: start over with an empty working context (the log keeps everything); the
        skills the conversation loaded go with it."""
        self.history = []
        self.log.log_history([], "clear")
        if self.frame_parts.clear_skills():
            self.log.log_state(SKILLS_TOPIC, self.frame_parts.skills.state())

    # ---- the turn -------------------------------------------------------

    def _turn(self) -> Iterator[Event]:
        going_on = Continuations()
        final_text: list[str] = []
        held = False  # a Stop hook kept the turn going (its hooks are told: stop_hook_active)
        for iteration in range(1, self.max_iterations + 1):
            step = yield from self._step(going_on, final_text)
            match step:
                case RunAgain():
                    continue
                case FinalOutput(text=text):
                    reason = self.hooks.on_stop(text, held)
                    if reason is not None and iteration < self.max_iterations:
                        held = True  # Claude Code's contract: the reason goes to the model, which goes on
                        self._append(Message.user(f"Stop hook feedback:\n{reason}"))
                        final_text.clear()
                        continue
                    yield self._result(text, "end_turn", iteration)
                case Interrupted(cut_short=cut_short):
                    yield from self._interrupted(cut_short)
                case Stopped(stop=stop, message=message, kind=kind, text=text):
                    yield ErrorEvent(message=message, kind=kind)
                    yield self._result(text, stop, iteration)
                case _:  # mypy --strict proves every NextStep is handled
                    assert_never(step)
            return
        note = too_many_requests(self.max_iterations)
        yield ErrorEvent(message=note, kind="max_iterations")  # said once, as the error
        yield self._result("", "max_iterations", self.max_iterations)

    def _step(self, going_on: Continuations, final_text: list[str]) -> Generator[Event, None, NextStep]:
        """One model request and what its reply asks for: tools run, another request, or the end."""
        yield StatusEvent(text="checking the context")  # usually instant; a summary can take a while
        placed = carried(self.history, *self.frame.notes)  # (after /clear, an edited record: counted too)
        if placed is not None:
            self.replace_history(placed, "todos")
        reports = self._exit.reports()
        if reports:  # a background task ended: its report joins this request's newest user message
            self.replace_history(with_notes(self.history, reports), "task-report")
        prepared = self.context.prepare(self.history, self.frame)
        yield from self.apply(prepared, "prepare")
        outcome: Completion | Failed
        if prepared.unsendable is not None:  # far over the window even after every layer
            outcome = Failed(prepared.unsendable)
        else:
            outcome = yield from self._request()
        if isinstance(outcome, Failed):
            return Stopped("error", str(outcome.error), outcome.error.kind)
        message = outcome.message
        self._append(message)
        yield from reply_events(message)  # (its thinking, the provider's own searches, its text)
        if message.text:
            final_text.append(message.text)
        if message.tool_uses:
            final_text.clear()
            done = yield from self._tool_round(message.tool_uses)
            if done.interrupted:
                return Interrupted(done.cut_short)
            if done.stopped:
                return Stopped("refused", STOPPED_BY_USER, "refused")
            if done.compact is not None:
                yield StatusEvent(text="summarizing")
                prepared = self.context.compact(self.history, self.frame, done.compact.focus, "tool")
                yield from self.apply(prepared, "tool")
            return RunAgain()
        after, ask = after_reply(going_on, outcome.stop_reason, message, final_text)
        if ask is not None:  # (a reply cut off: the rest is asked for)
            self._append(ask)
        return after

    def _request(self) -> Generator[Event, None, Completion | Failed]:
        """Send the history (model_request.py); take what a remedy made of it and send again."""
        inputs = RequestInputs(self.provider, self.context, self.hooks, self.retry, self.sleep)
        tried = Tried()
        while True:
            sent = yield from send(inputs, self.history, self.frame, tried)
            match sent:
                case Answered(completion=completion, usage=usage):
                    self.usage_log.append(usage)
                    return completion
                case Failed():
                    return sent
                case Remedied(prepared=prepared, reason="overflow", tried=tried):
                    yield from self.apply(prepared, "overflow")
                case Remedied(prepared=prepared, reason=reason, tried=tried):
                    self.replace_history(prepared.messages, reason)
                    yield from prepared.events

    def _interrupted(self, cut_short: Sequence[ToolUse]) -> Iterator[Event]:
        """Ctrl-C: close what is open, say which calls were cut short, end the turn."""
        self._close_open_tool_round()
        yield from cut_short_events(cut_short)
        if self.history and self.history[-1].is_plain_user:
            # Say so in the history, so the next prompt does not read as a continuation of this one.
            self._append(Message.user(INTERRUPTED_TURN))
        yield ErrorEvent(message="interrupted by the user", kind="interrupted")
        yield self._result("", "interrupted", 0)

    # ---- tools ----------------------------------------------------------

    def _tool_round(self, uses: Sequence[ToolUse]) -> Generator[Event, None, ToolRound]:
        """Run the calls in order (tool_round.py); the results go into the history as one message,
        whatever happens, then the skills the calls loaded and the newest todo list."""
        calls = RoundCalls(uses, self._runner, self.hooks, self.context, self.tool_context)
        try:
            return (yield from calls.run(self.history, self._compacted_at))
        finally:
            self._append(calls.message())
            for load in calls.skills:
                self._use_skill(load)
            self._new_todos(calls.todos)

    # ---- history and events --------------------------------------------

    def _new_todos(self, todos: tuple[TodoItem, ...] | None) -> None:
        """A round's new todo list (todo_write's; its result holds the note), kept and logged."""
        if todos is not None and self.frame_parts.set_todos(todos):
            self.log.log_state(TODOS_TOPIC, {"todos": todos_to_json(todos)})

    def apply(self, prepared: Prepared, reason: str) -> Iterator[Event]:
        """The engine's prepared history becomes the history (logged), with the todo list's note
        placed again if a layer took the message holding it; its events go out."""
        messages = carried(prepared.messages, *self.frame.notes) or prepared.messages
        if messages != self.history:
            self.history = list(messages)
            self.log.log_history(self.history, reason)
        condensed = any(isinstance(e, CompactEvent) and e.layer.condenses for e in prepared.events)
        if condensed or reason in ("manual", "tool"):  # (a compaction that found nothing to do, too)
            self._compacted_at = self.history[-1].id if self.history else None
        for event in prepared.events:
            yield event
            if isinstance(event, CompactEvent):
                if event.usage is not None:  # a summary is a model call: it counts in /cost and the totals
                    self.usage_log.append((self.summary_model or self.provider.model, event.usage))
                self.hooks.on_compact(event)

    def _append(self, message: Message) -> None:
        self.history.append(message)
        self.log.log_message(message)

    def _close_open_tool_round(self) -> None:
        """If the history ends in an unanswered tool_use, answer it so the history stays valid."""
        answer = answer_open_round(self.history)
        if answer is not None:
            self._append(answer)

    def _result(self, text: str, stop: ResultStop, iterations: int) -> Event:
        usage = sum((each for _, each in self.usage_log), Usage())
        return ResultEvent(text=text, stop=stop, iterations=iterations, usage=usage, session_id=self.log.id)

    def _door(self, events: Generator[Event, None, None]) -> Generator[Event, None, None]:
        """Every event the loop yields leaves through its door (door.py): logged, after what the
        side queue holds."""
        return self._exit.relay(events, self.log)

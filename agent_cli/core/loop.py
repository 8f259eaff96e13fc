"""AgentLoop: one user turn to completion, as a stream of typed events.

    run(prompt) -> prepare context -> request (reactive retry on overflow)
                -> assistant message -> tools (approve, run, ingest) -> repeat
                -> ResultEvent

Each step returns a value the loop dispatches on; everything observable is an
event (yielded, logged to the session, and `on_compact` for compactions).
The history only ever holds complete messages: a half-streamed reply, an
interrupted tool round or a crash leaves a valid history behind.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_cli.context.engine import Frame, Prepared
from agent_cli.core.approvals import Approver
from agent_cli.core.errors import ContextOverflowError, ProviderError
from agent_cli.core.events import (
    AssistantText,
    AssistantTextDelta,
    CompactEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    RetryEvent,
    StatusEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from agent_cli.core.hooks import Hooks
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.core.pairing import repair_history
from agent_cli.providers.base import Completion, Provider, Request, TextDelta
from agent_cli.providers.retry import RetryPolicy, stream_with_retry
from agent_cli.tools.base import ToolContext, ToolRegistry

__all__ = ["AgentLoop", "ContextPolicy", "SessionSink"]

CONTINUE_AFTER_CUTOFF = "Your last reply hit the output token limit. Continue exactly where it stopped."
CONTINUE_AFTER_COMPACT = (
    "The conversation was compacted at your request. Continue the task from the summary above."
)
INTERRUPTED = "interrupted: the user stopped this tool call before it finished"
INTERRUPTED_TURN = "[The user interrupted the request above before it was answered.]"
MAX_CONTINUATIONS = 3
LOGGED_RESULT_CHARS = 400


class ContextPolicy(Protocol):
    """What the loop needs from the context engine (agent_cli.context.engine.ContextEngine)."""

    def ingest(
        self, use: ToolUse, result: ToolResult, *, round_size: int = 1
    ) -> tuple[ToolResult, CompactEvent | None]: ...
    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared: ...
    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> None: ...
    def on_overflow(
        self, history: Sequence[Message], frame: Frame, error: ContextOverflowError
    ) -> Prepared: ...
    def compact(
        self, history: Sequence[Message], frame: Frame, focus: str | None, trigger: str
    ) -> Prepared: ...
    def recall(self, query: str) -> str: ...
    def tokens(self, history: Sequence[Message], frame: Frame) -> int: ...

    @property
    def window(self) -> int: ...

    @property
    def max_output(self) -> int:
        """Tokens a reply may take (the engine lowers it when it learns a smaller window)."""
        ...


class SessionSink(Protocol):
    """Where the loop records what happens (agent_cli.store.session_log.SessionLog)."""

    def log_message(self, message: Message) -> None: ...
    def log_event(self, event: Event) -> None: ...
    def log_history(self, messages: Sequence[Message], reason: str) -> None: ...


@dataclass(frozen=True, slots=True)
class _Failed:
    error: ProviderError


class AgentLoop:
    def __init__(
        self,
        *,
        provider: Provider,
        tools: ToolRegistry,
        context: ContextPolicy,
        system: str,
        session: SessionSink,
        approver: Approver,
        tool_context: ToolContext,
        hooks: Hooks | None = None,
        max_iterations: int = 100,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        history: Sequence[Message] = (),
        session_id: str = "",
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.provider = provider
        self.tools = tools
        self.context = context
        self.system = system
        self.session = session
        self.approver = approver
        self.hooks = hooks or Hooks()
        self.max_iterations = max_iterations
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.session_id = session_id
        # Secrets in tool output (a command printing the environment) go neither to disk nor to the model.
        self.redact = redact or (lambda text: text)
        self.history: list[Message] = repair_history(history)
        self.usage_by_model: dict[str, Usage] = {}
        self.tool_context = tool_context
        self._pending_compact: list[str | None] = []
        self._cut_short: list[ToolUse] = []  # tool calls an interrupt stopped, reported after it
        tool_context.request_compact = self._request_compact
        tool_context.recall = context.recall

    # ---- public surface -------------------------------------------------

    @property
    def frame(self) -> Frame:
        return Frame(self.system, self.tools.specs())

    def context_tokens(self) -> int:
        return self.context.tokens(self.history, self.frame)

    def cancel(self) -> None:
        """Stop the running tool (thread-safe). A model stream stops on KeyboardInterrupt."""
        self.tool_context.cancel.set()

    def run(self, prompt: str) -> Iterator[Event]:
        """Run one user turn to completion. The last event is always a ResultEvent."""
        # A fresh cancel signal per turn: a tool that ignored the last Ctrl-C keeps its own, still set.
        self.tool_context = dataclasses.replace(self.tool_context, cancel=threading.Event())
        self._cut_short = []
        self._append(Message.user(prompt))
        try:
            yield from self._turn()
        except KeyboardInterrupt:
            self._close_open_tool_round(INTERRUPTED)
            for use in self._cut_short:
                yield self._emit(
                    ToolResultEvent(
                        id=use.id, name=use.name, content=INTERRUPTED, is_error=True, duration=0.0
                    )
                )
            if self.history and self.history[-1].is_plain_user:
                # Say so in the history, so the next prompt does not read as a continuation of this one.
                self._append(Message.user(INTERRUPTED_TURN))
            yield self._emit(ErrorEvent(message="interrupted by the user", kind="interrupted"))
            yield self._emit(
                ResultEvent(
                    text="",
                    stop="interrupted",
                    iterations=0,
                    usage=self._total_usage(),
                    session_id=self.session_id,
                )
            )
        finally:
            self._close_open_tool_round(INTERRUPTED)

    def compact(self, focus: str | None = None) -> Iterator[Event]:
        """`/compact [focus]`: summarize the whole conversation so far."""
        if not self.history:
            yield self._emit(ErrorEvent(message="nothing to compact yet", kind="compact"))
            return
        yield StatusEvent(text="summarizing")
        yield from self._apply(self.context.compact(self.history, self.frame, focus, "manual"), "manual")

    def clear(self) -> None:
        """`/clear`: start over with an empty working context (the log keeps everything)."""
        self.history = []
        self.session.log_history([], "clear")

    def set_provider(self, provider: Provider) -> None:
        self.provider = provider

    # ---- the turn -------------------------------------------------------

    def _turn(self) -> Iterator[Event]:
        continuations = 0
        final_text: list[str] = []
        for iteration in range(1, self.max_iterations + 1):
            yield StatusEvent(text="checking the context")  # usually instant; a summary can take a while
            yield from self._apply(self.context.prepare(self.history, self.frame), "prepare")
            outcome = yield from self._request_with_reactive_retry()
            if isinstance(outcome, _Failed):
                yield self._emit(ErrorEvent(message=str(outcome.error), kind=type(outcome.error).__name__))
                yield self._emit(
                    ResultEvent(
                        text="",
                        stop="error",
                        iterations=iteration,
                        usage=self._total_usage(),
                        session_id=self.session_id,
                    )
                )
                return
            message = outcome.message
            self._append(message)
            if message.text:
                final_text.append(message.text)
                yield self._emit(AssistantText(text=message.text))
            if message.tool_uses:
                final_text.clear()
                yield from self._run_tools(message.tool_uses)
                if self._pending_compact:
                    focus = self._pending_compact.pop()
                    self._pending_compact.clear()
                    yield StatusEvent(text="summarizing")
                    yield from self._apply(
                        self.context.compact(self.history, self.frame, focus, "tool"), "tool"
                    )
                    if self.history and self.history[-1].role == "assistant":
                        self._append(Message.user(CONTINUE_AFTER_COMPACT))
                continue
            if outcome.stop_reason == "max_tokens" and continuations < MAX_CONTINUATIONS:
                continuations += 1
                self._append(Message.user(CONTINUE_AFTER_CUTOFF))
                continue
            text = "".join(final_text) if continuations else message.text
            yield self._emit(
                ResultEvent(
                    text=text,
                    stop="end_turn",
                    iterations=iteration,
                    usage=self._total_usage(),
                    session_id=self.session_id,
                )
            )
            return
        note = (
            f"Stopped after {self.max_iterations} model requests in one turn (tools.max_iterations). "
            "Send another message to let it go on."
        )
        yield self._emit(ErrorEvent(message=note, kind="max_iterations"))  # said once, as the error
        yield self._emit(
            ResultEvent(
                text="",
                stop="max_iterations",
                iterations=self.max_iterations,
                usage=self._total_usage(),
                session_id=self.session_id,
            )
        )

    def _request_with_reactive_retry(self) -> Generator[Event, None, Completion | _Failed]:
        """Send the request; on a context overflow compact and retry once, never more."""
        forced = False
        while True:
            request = Request(self.system, tuple(self.history), self.tools.specs(), self.context.max_output)
            self.hooks.on_pre_request(request)
            yield StatusEvent(text="waiting for model")
            try:
                completion = yield from self._stream(request)
            except ContextOverflowError as exc:
                if forced:
                    return _Failed(
                        ContextOverflowError(
                            f"the request is still too large after compacting ({exc}); "
                            "try /compact with a focus, or /clear",
                            tokens=exc.tokens,
                            limit=exc.limit,
                        )
                    )
                forced = True
                try:
                    prepared = self.context.on_overflow(self.history, self.frame, exc)
                except ContextOverflowError as final:
                    return _Failed(final)
                yield from self._apply(prepared, "overflow")
                continue
            except ProviderError as exc:
                return _Failed(exc)
            self.context.observe(self.frame, request.messages, completion.usage)
            model = completion.model or self.provider.model
            self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + completion.usage
            yield self._emit(
                UsageEvent(
                    model=model,
                    usage=completion.usage,
                    context_tokens=completion.usage.prompt_tokens,
                    context_window=self.context.window,
                )
            )
            return completion

    def _stream(self, request: Request) -> Generator[Event, None, Completion]:
        for item in stream_with_retry(self.provider, request, policy=self.retry, sleep=self.sleep):
            if isinstance(item, RetryEvent):
                yield self._emit(item)
            elif isinstance(item, TextDelta):
                yield AssistantTextDelta(text=item.text)
            else:
                return item
        raise ProviderError("the provider stream ended without a reply")

    # ---- tools ----------------------------------------------------------

    def _run_tools(self, uses: Sequence[ToolUse]) -> Iterator[Event]:
        results: list[ToolResult] = []
        try:
            for use in uses:
                yield self._emit(ToolCallEvent(id=use.id, name=use.name, input=dict(use.input)))
                result, duration = self._run_one(use)
                result = self.hooks.on_post_tool(use, result)
                event = ToolResultEvent(
                    id=use.id,
                    name=use.name,
                    content=result.content,
                    is_error=result.is_error,
                    duration=duration,
                )
                result, cap = self.context.ingest(use, result, round_size=len(uses))
                results.append(result)
                yield self._emit(event)
                if cap is not None:
                    yield self._emit(cap)
                    self.hooks.on_compact(cap)
        finally:
            done = {r.tool_use_id for r in results}
            self._cut_short = [u for u in uses if u.id not in done]
            missing = [ToolResult(u.id, INTERRUPTED, True) for u in self._cut_short]
            self._append(Message("user", tuple(results + missing)))

    def _run_one(self, use: ToolUse) -> tuple[ToolResult, float]:
        """Approve, then run one call; the duration counts the tool, not the time spent asking."""
        decision = self.approver.decide(use.name, use.input)
        if not decision.allowed:
            reason = decision.reason or "the user did not approve this call"
            return ToolResult(use.id, f"Error: {reason}", True), 0.0
        veto = self.hooks.on_before_tool(use)
        if veto:
            return ToolResult(use.id, f"Error: {veto}", True), 0.0
        self.hooks.on_pre_tool(use)
        started = time.monotonic()
        result = self._run_in_thread(use)
        result = ToolResult(result.tool_use_id, self.redact(result.content), result.is_error)
        return result, time.monotonic() - started

    def _run_in_thread(self, use: ToolUse) -> ToolResult:
        """Tools run in a worker so Ctrl-C reaches the loop, which cancels the tool and waits for it."""
        box: list[ToolResult] = []

        def work() -> None:
            out = self.tools.run(use.name, use.input, self.tool_context)
            box.append(ToolResult(use.id, out.content, out.is_error))

        worker = threading.Thread(target=work, name=f"tool-{use.name}", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.05)
        except KeyboardInterrupt:
            self.tool_context.cancel.set()
            worker.join(10)
            raise
        return box[0] if box else ToolResult(use.id, f"Error: {use.name} produced no result", True)

    def _request_compact(self, focus: str | None) -> str:
        self._pending_compact.append(focus)
        return "Compaction scheduled: the conversation will be condensed right after this tool round."

    # ---- history and events --------------------------------------------

    def _apply(self, prepared: Prepared, reason: str) -> Iterator[Event]:
        if prepared.messages != self.history:
            self.history = list(prepared.messages)
            self.session.log_history(self.history, reason)
        for event in prepared.events:
            yield self._emit(event)
            if isinstance(event, CompactEvent):
                self.hooks.on_compact(event)

    def _append(self, message: Message) -> None:
        self.history.append(message)
        self.session.log_message(message)

    def _close_open_tool_round(self, note: str) -> None:
        """If the history ends in an unanswered tool_use, answer it so the history stays valid."""
        if not self.history or self.history[-1].role != "assistant" or not self.history[-1].tool_uses:
            return
        results = tuple(ToolResult(u.id, note, True) for u in self.history[-1].tool_uses)
        self._append(Message("user", results))

    def _emit(self, event: Event) -> Event:
        if isinstance(event, ToolResultEvent) and len(event.content) > LOGGED_RESULT_CHARS:
            # The full result is logged once, in its message; the event keeps a preview.
            more = f"… [{len(event.content):,} characters in the message]"
            preview = event.content[:LOGGED_RESULT_CHARS] + more
            self.session.log_event(dataclasses.replace(event, content=preview))
        elif not isinstance(event, AssistantTextDelta | StatusEvent):
            self.session.log_event(event)
        return event

    def _total_usage(self) -> Usage:
        total = Usage()
        for usage in self.usage_by_model.values():
            total = total + usage
        return total

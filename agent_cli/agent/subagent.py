"""The task tool: a sub-agent with a context of its own, run in the foreground or the background.

    task {"description": str, "prompt": str, "background": bool = false}

A call starts a *child*: a loop of its own (agent.loop.AgentLoop, made by the session's `ChildMaker`,
app_tasks.py) whose context is the system prompt, the project's instructions and pins, and the
task's prompt, not the parent's conversation; its own context engine and budget; the same tools and
approvals (a child never widens what runs), and a `task` tool of its own only while its depth is
below `tools.max_task_depth`. Its log and archive are a folder of the parent session's
(`tasks/<id>/`), which the parent's recall searches.

- Foreground (the default): the child is driven in the turn's own thread (`drive`), so all its
  requests come before the parent's next one, its approval questions are asked as the parent's
  are, and Esc reaches it (the KeyboardInterrupt is thrown into its loop, which closes its round;
  then the parent's round is interrupted too). Its progress is one line (`ToolProgress`): the
  call it is running and the tokens it has spent. Its final answer is the tool's result.
- Background: the call returns an id at once; the child runs in a thread of its own, where no
  question can be asked (what would ask is refused, as headless). When it ends, its report joins
  the parent's conversation as a note in the next request (a `TaskReport` on the side queue).

`SubAgents` keeps every task of the session (/cost prices each one's calls) and stops the
background ones when the session ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_cli.agent.side_events import SideEvents, TaskReport
from agent_cli.core.events import (
    ErrorEvent,
    Event,
    ResultEvent,
    ToolCallEvent,
    ToolProgress,
    ToolResultEvent,
    UsageEvent,
)
from agent_cli.core.messages import Message, TextBlock, Usage
from agent_cli.core.requests import ToolSpec
from agent_cli.core.text import one_line, visible
from agent_cli.tools.args import optional_bool, require_str
from agent_cli.tools.base import Approval, CallView, Tool, ToolContext, ToolError, ToolOutput

__all__ = ["TASK", "Child", "ChildLoop", "ChildMaker", "SubAgents", "TaskRecord", "TaskTool", "with_notes"]

TASK = "task"
# Said to the child after its prompt, in a block of its own: its last message is all the parent gets.
CHILD_NOTE = (
    "You are a sub-agent: another agent gave you the task above. Work on it with your tools; your "
    "final message is your report to that agent, which sees nothing else of your work, so put in it "
    "everything it needs (findings, file paths, what you changed, what is left)."
)
NO_REPORT = "(the sub-agent ended without a report)"
STOP_GRACE = 10.0  # seconds a background child gets to stop when the session ends


class ChildLoop(Protocol):
    """What the tool needs of a child's loop (agent.loop.AgentLoop)."""

    usage_log: list[tuple[str, Usage]]

    def run(self, prompt: str, attached: tuple[str, ...] = ()) -> Generator[Event, None, None]: ...

    def cancel(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Child:
    """A child ready to run: its loop, where its transcript is (as the model is told it), and how
    to close it (its log) once it ended."""

    loop: ChildLoop
    transcript: str
    close: Callable[[], None]


class ChildMaker(Protocol):
    """Makes a child at `depth` (1: the session's own); `task` is its own task tool (None at the
    limit); `quiet`: it runs where no question can be asked (a background task, or inside one)."""

    def __call__(self, description: str, depth: int, quiet: bool, task: Tool | None) -> Child: ...


@dataclass(slots=True)
class TaskRecord:
    """One task of the session: what /cost and the REPL say about it."""

    id: str
    description: str
    depth: int
    background: bool
    usage_log: list[tuple[str, Usage]] = field(default_factory=list)
    status: str = "running"  # running, done, failed, stopped
    doing: str = "starting"  # the call it runs now, for the progress line
    report: str = ""
    transcript: str = ""
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def tokens(self) -> int:
        """Every token its requests sent and received so far."""
        return sum(u.prompt_tokens + u.output_tokens for _, u in self.usage_log)

    def set(self, *, status: str | None = None, report: str | None = None, doing: str | None = None) -> None:
        """What changed about the task: how it stands, its report, the call it runs now."""
        self.status = self.status if status is None else status
        self.report = self.report if report is None else report
        self.doing = self.doing if doing is None else doing

    def started(self, child: Child) -> None:
        """Its child is made: its calls are followed in the child's own usage list as it grows."""
        self.usage_log = child.loop.usage_log
        self.transcript = child.transcript

    def line(self) -> str:
        """The progress line: what it does now and what it spent."""
        return f"{visible(one_line(self.description))[:40]} · {self.doing} · {self.tokens:,} tokens"


class SubAgents:
    """The session's tasks: started, followed, priced, their background reports handed over."""

    def __init__(
        self, max_depth: int, clock: Callable[[], float] = time.monotonic, side: SideEvents | None = None
    ) -> None:
        self.max_depth = max_depth
        self._side = side or SideEvents()  # the session's: a background task's report goes there
        self._make: ChildMaker | None = None
        self._clock = clock
        self._lock = threading.Lock()
        self._records: list[TaskRecord] = []
        self._threads: list[threading.Thread] = []

    def set_maker(self, make: ChildMaker) -> None:
        """How children are made (the composition root gives it once the session exists)."""
        self._make = make

    def tool(self, depth: int, quiet: bool = False) -> TaskTool | None:
        """The task tool of an agent at `depth` (0: the session's): None at the depth limit.
        `quiet`: the agent runs in the background, where its children cannot ask either."""
        return TaskTool(self, depth, quiet) if depth < self.max_depth else None

    @property
    def records(self) -> tuple[TaskRecord, ...]:
        with self._lock:
            return tuple(self._records)

    def usage(self) -> list[tuple[str, Usage]]:
        """Every child's calls, as (model, usage): the session's bill adds them to its own."""
        return [each for record in self.records for each in list(record.usage_log)]

    def running(self) -> list[TaskRecord]:
        return [r for r in self.records if r.status == "running"]

    def stop(self, task_id: str) -> TaskRecord | None:
        """Ask the background task `task_id` to stop (`/stop`): it stops at its next event, and its
        report says so. None when no task has that id."""
        record = next((r for r in self.records if r.id == task_id), None)
        if record is not None and record.background:
            record.stop.set()
        return record

    def join(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the background tasks to end; whether they all did."""
        for thread in list(self._threads):
            thread.join(timeout)
        return not any(t.is_alive() for t in self._threads)

    def close(self) -> None:
        """Stop the background tasks (the session ends) and wait a little for them."""
        for record in self.running():
            record.stop.set()
        for thread in list(self._threads):
            thread.join(STOP_GRACE)

    # ---- running ------------------------------------------------------------------

    def _start(self, description: str, depth: int, background: bool, quiet: bool) -> tuple[TaskRecord, Child]:
        if self._make is None:
            raise ToolError("sub-agents are not available in this session")
        with self._lock:
            record = TaskRecord(f"task{len(self._records) + 1}", description, depth, background)
            self._records.append(record)
        try:
            child = self._make(description, depth, quiet, self.tool(depth, quiet))
        except Exception as exc:
            record.set(status="failed")
            raise ToolError(f"the sub-agent could not start: {exc}") from exc
        except BaseException:  # Ctrl-C while it was being made
            record.set(status="stopped")
            raise
        record.started(child)
        return record, child

    def foreground(
        self,
        call_id: str,
        description: str,
        prompt: str,
        depth: int,
        ctx: ToolContext,
        *,
        quiet: bool = False,
    ) -> Generator[ToolProgress, None, ToolOutput]:
        record, child = self._start(description, depth, background=False, quiet=quiet)
        started = self._clock()
        events = child.loop.run(prompt, (CHILD_NOTE,))
        result: ResultEvent | None = None
        try:
            try:
                for event in events:
                    result = _follow(record, event) or result
                    if ctx.cancel.is_set():  # the parent's cancel (Esc while the screen redrew)
                        raise KeyboardInterrupt
                    yield ToolProgress(
                        id=call_id, name=TASK, lines=(record.line(),), elapsed=self._clock() - started, size=0
                    )
            except KeyboardInterrupt:
                result = _stopped(record, events) or result
                record.set(status="stopped")
                raise
            if result is not None and result.stop == "interrupted":  # it took the interrupt itself
                record.set(status="stopped")
                raise KeyboardInterrupt
        finally:
            child.close()
        output = _output(record, result)
        # How it ended, for the line the REPL says under the call (as a command's `exit 0 · 2.3s · 14 B`).
        ended = f"{record.status} · {record.tokens:,} tokens"
        elapsed = self._clock() - started
        size = len(output.content.encode())
        yield ToolProgress(id=call_id, name=TASK, lines=(), elapsed=elapsed, size=size, status=ended)
        return output

    def background(self, description: str, prompt: str, depth: int) -> ToolOutput:
        record, child = self._start(description, depth, background=True, quiet=True)
        thread = threading.Thread(
            target=self._run_background, args=(record, child, prompt), name=f"task-{record.id}", daemon=True
        )
        self._threads.append(thread)
        thread.start()
        return ToolOutput(
            f"Started {record.id} in the background ({record.description}). Its report joins the "
            "conversation when it ends; go on with other work meanwhile."
        )

    def _run_background(self, record: TaskRecord, child: Child, prompt: str) -> None:
        result: ResultEvent | None = None
        events = child.loop.run(prompt, (CHILD_NOTE,))
        try:
            for event in events:
                result = _follow(record, event) or result
                if record.stop.is_set():
                    child.loop.cancel()
                    result = _stopped(record, events) or result
                    record.set(status="stopped")
                    break
        except Exception as exc:  # a bug or a full disk must not pass unseen: the report says it
            record.set(status="failed", report=f"the sub-agent failed: {type(exc).__name__}: {exc}")
        finally:
            try:
                child.close()
            finally:
                output = _output(record, result)
                self._side.put(TaskReport(_report_note(record, output)))


class TaskTool:
    """The `task` tool of an agent at `depth` (its children are at depth + 1)."""

    spec = ToolSpec(
        name=TASK,
        description=(
            "Start a sub-agent for a self-contained piece of work (searching a codebase, reading many "
            "files, a side investigation). It gets a fresh context with the project's instructions "
            "but NOT this conversation, so the prompt must say everything it needs; it has the same "
            "tools and approvals. Its final message comes back as this tool's result, and everything "
            "it read or ran stays findable with recall. With background true it returns an id at "
            "once and its report joins the conversation when it ends."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A few words saying what the task is."},
                "prompt": {"type": "string", "description": "The whole task, as the sub-agent needs it."},
                "background": {
                    "type": "boolean",
                    "description": "Run it in the background and go on (default false).",
                },
            },
            "required": ["description", "prompt"],
        },
    )
    approval: Approval = "never"  # it runs nothing itself: each of its child's calls is asked
    view = CallView(main="description", quoted=True)

    def __init__(self, agents: SubAgents, depth: int, quiet: bool = False) -> None:
        self._agents = agents
        self.depth = depth
        self._quiet = quiet

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Without a driver (a call the user typed): in the background, or driven to its end here."""
        steps = self.drive("", args, ctx)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                output: ToolOutput = stop.value
                return output

    def drive(
        self, call_id: str, args: Mapping[str, Any], ctx: ToolContext
    ) -> Generator[ToolProgress, None, ToolOutput]:
        try:
            description = require_str(args, "description")
            prompt = require_str(args, "prompt")
            background = optional_bool(args, "background")
            if background:
                return self._agents.background(description, prompt, self.depth + 1)
            depth = self.depth + 1
            return (
                yield from self._agents.foreground(
                    call_id, description, prompt, depth, ctx, quiet=self._quiet
                )
            )
        except ToolError as exc:
            return ToolOutput(f"Error: {exc}", True)


def with_notes(history: Sequence[Message], notes: Sequence[str]) -> list[Message]:
    """The history with `notes` as text blocks at the end of its newest user message (a message of
    their own after a reply), so the next request carries them and the history stays append-only."""
    blocks = tuple(TextBlock(n) for n in notes)
    if history and history[-1].role == "user":
        last = history[-1]
        return [*history[:-1], last.replace((*last.content, *blocks))]
    return [*history, Message("user", blocks)]


def _follow(record: TaskRecord, event: Event) -> ResultEvent | None:
    """What a child's event changes on its progress line; its result when it is one."""
    if isinstance(event, ToolCallEvent):
        shown = next((v for v in event.input.values() if isinstance(v, str)), "")
        record.set(doing=visible(one_line(f"{event.name} {shown}".strip()))[:60])
    elif isinstance(event, ToolProgress) and event.name == TASK and event.lines:  # its own child's line
        record.set(doing=f"{TASK}: {event.lines[0]}"[:120])
    elif isinstance(event, ToolResultEvent | UsageEvent):
        record.set(doing="thinking")
    elif isinstance(event, ResultEvent):
        return event
    elif isinstance(event, ErrorEvent):
        record.set(report=event.message)
    return None


def _stopped(record: TaskRecord, events: Generator[Event, None, None]) -> ResultEvent | None:
    """Stop a child: the interrupt thrown into its loop, which closes its round; its last events read."""
    result = None
    try:
        event = events.throw(KeyboardInterrupt())
        while True:
            result = _follow(record, event) or result
            event = next(events)
    except (StopIteration, KeyboardInterrupt):
        pass
    return result


def _output(record: TaskRecord, result: ResultEvent | None) -> ToolOutput:
    """The child's result as the parent's tool result: its final answer, or why there is none."""
    where = f"\n\n[{record.id}'s whole transcript: {record.transcript}; recall searches it]"
    if record.status == "failed":
        return ToolOutput(f"Error: {record.report}{where}", True)
    if result is None or record.status == "stopped":
        record.set(status="stopped")
        return ToolOutput(f"Error: {record.id} was stopped before it finished.{where}", True)
    if result.stop != "end_turn":
        record.set(status="failed")
        why = record.report or result.stop
        partial = f"\nWhat it said last: {result.text}" if result.text.strip() else ""
        return ToolOutput(f"Error: {record.id} stopped ({why}).{partial}{where}", True)
    record.set(status="done", report=result.text.strip() or NO_REPORT)
    return ToolOutput(record.report + where)


def _report_note(record: TaskRecord, output: ToolOutput) -> str:
    """A background task's report, as the note the parent's next request carries."""
    return f"[Background task {record.id} ({record.description}) ended: {record.status}]\n{output.content}"

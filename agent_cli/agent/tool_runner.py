"""Running one tool call: approval, the embedder's veto, the tool in a worker, redaction.

    ToolRunner.run(use, ctx) -> yields ToolProgress ..., returns (ToolOutput, seconds)

The tool runs in a worker thread so Ctrl-C reaches the caller at once: the
runner then sets the tool's cancel signal, waits for it to stop, and lets the
KeyboardInterrupt go on. While it runs, the runner yields a `ToolProgress` every
`PROGRESS_SECONDS` (the elapsed time, and the last lines the tool wrote to its own
live tap, `ToolContext.live`), and one more with how it ended if it wrote to the tap;
a KeyboardInterrupt thrown in at one of those yields stops the tool the same way.
Secrets in a tool's output (a command printing the environment) are redacted
here, before the output (or a progress line) reaches history, disk, the screen or
the model. The duration counts the tool, not the time spent asking. A `ToolWatch` (the file
watch that `/rewind` reads, agent.file_watch) is around every call that runs, told the tool's
file effect: the one place where what a tool changes is seen, so the tools need not know.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Protocol, TypeVar

from agent_cli.agent.approvals import Approver, SandboxRefusals
from agent_cli.agent.hooks import Hooks
from agent_cli.core.events import ToolProgress
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.core.text import clean
from agent_cli.tools import children
from agent_cli.tools.base import CompactRequest, FileEffect, ToolContext, ToolOutput, ToolRegistry
from agent_cli.tools.live import LiveOutput, last_lines

__all__ = ["ToolRound", "ToolRunner", "ToolWatch", "run_through"]

CANCEL_GRACE = 10.0  # seconds a cancelled tool gets to stop before the caller moves on
PROGRESS_SECONDS = 0.25  # between two progress events: a live view redraws at most this often
PROGRESS_LINES = 5  # of a running tool's output, the last lines a progress event carries
_POLL_SECONDS = 0.05
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ToolRound:
    """What one round of tool calls came to (the loop runs the round, call by call)."""

    results: tuple[ToolResult, ...]  # one per call that finished, in call order
    cut_short: tuple[ToolUse, ...] = ()  # calls an interrupt stopped before they finished
    compact: CompactRequest | None = None  # the model asked to compact once the round is done
    interrupted: bool = False  # the user pressed Ctrl-C during the round
    stopped: bool = False  # the user refused a call and ended the turn with it


class ToolWatch(Protocol):
    """What is around each call that runs: it sees what the call changes in the files."""

    def around(self, use: ToolUse, effect: FileEffect, ctx: ToolContext) -> AbstractContextManager[None]: ...


class _Unwatched:
    def around(self, use: ToolUse, effect: FileEffect, ctx: ToolContext) -> AbstractContextManager[None]:
        return nullcontext()


class ToolRunner:
    def __init__(
        self,
        tools: ToolRegistry,
        approver: Approver,
        hooks: Hooks,
        redact: Callable[[str], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        watch: ToolWatch | None = None,
    ) -> None:
        self.tools = tools
        self._watch = watch or _Unwatched()
        self._clock = clock
        self._approver = approver
        self._hooks = hooks
        self._redact = redact or (lambda text: text)

    def run(self, use: ToolUse, ctx: ToolContext) -> Generator[ToolProgress, None, tuple[ToolOutput, float]]:
        """Approve, then run one call, yielding its progress. A refused call is an error output the
        model reads."""
        decision = self._approver.decide(use.name, use.input)
        if not decision.allowed:
            refused = f"Error: {decision.reason or 'the user did not approve this call'}"
            return ToolOutput(refused, True, denied=True, stop_turn=decision.stop), 0.0
        if decision.text is not None:  # the user's own wording (a memory edited before it is saved)
            use = dataclasses.replace(use, input={**use.input, "text": decision.text})
        veto = self._hooks.on_before_tool(use)
        if veto:
            return ToolOutput(f"Error: {veto}", True, denied=True), 0.0
        self._hooks.on_pre_tool(use)
        started = self._clock()
        live = LiveOutput()
        # This call's own tap (the cancel signal is shared); outside the sandbox only by the user's answer.
        ctx = dataclasses.replace(ctx, live=live, unconfined=decision.unconfined, protect=decision.protect)
        driven = self.tools.driven(use.name)  # (the task tool: its sub-agent runs in this thread)
        with self._watch.around(use, self.tools.effect(use.name), ctx):
            if driven is not None:
                output = yield from driven.drive(use.id, use.input, ctx)
            else:
                output = yield from self._in_worker(use, ctx, lambda: self._progress(use, live, started))
        if output.sandbox_denied and isinstance(self._approver, SandboxRefusals):
            self._approver.refused_by_sandbox(use.name, use.input)  # auto mode asks before a retry
        if live.used:  # how it ended, for the line shown after it
            yield self._progress(use, live, started)
        if decision.text is not None and not output.is_error:  # the model learns the words saved
            said = f"The user rewrote it before it was saved, as: {decision.text}\n{output.content}"
            output = dataclasses.replace(output, content=said)
        # Undecodable bytes (a file name that is not UTF-8) become U+FFFD before anything stores it.
        output = dataclasses.replace(output, content=self._redact(clean(output.content)))
        return output, self._clock() - started

    def run_for_user(self, use: ToolUse, ctx: ToolContext, *, sandboxed: bool = False) -> ToolOutput:
        """Run a call the user typed (`!command`, `@path`): nothing to approve, no hook to ask;
        Ctrl-C stops it as it stops a model's call. What it changes in the files is watched too.
        The user's own command runs as the user: outside the sandbox, unless `sandboxed` (a goal's
        check, which runs again and again unattended: in the session's sandbox, as bash's calls)."""
        ctx = dataclasses.replace(ctx, unconfined=not sandboxed)
        with self._watch.around(use, self.tools.effect(use.name), ctx):
            output = run_through(self._in_worker(use, ctx, None))  # (no progress to show)
        return dataclasses.replace(output, content=self._redact(clean(output.content)))

    def _progress(self, use: ToolUse, live: LiveOutput, started: float) -> ToolProgress:
        """The call's progress now. Its lines are redacted like its output, before anything shows
        them: a command printing the environment must not show a key even for a moment."""
        snap = live.snapshot()
        lines = last_lines(self._redact(clean(snap.text)), PROGRESS_LINES)
        elapsed = self._clock() - started
        return ToolProgress(
            id=use.id, name=use.name, lines=lines, elapsed=elapsed, size=snap.size, status=snap.status
        )

    def _in_worker(
        self, use: ToolUse, ctx: ToolContext, progress: Callable[[], ToolProgress] | None
    ) -> Generator[ToolProgress, None, ToolOutput]:
        """Run the call in a worker thread; with `progress`, yield it every PROGRESS_SECONDS meanwhile."""
        box: list[ToolOutput] = []
        done = threading.Event()

        def work() -> None:
            try:
                box.append(self.tools.run(use.name, use.input, ctx))
            finally:
                done.set()

        worker = threading.Thread(target=work, name=f"tool-{use.name}", daemon=True)
        worker.start()
        next_at = self._clock() + PROGRESS_SECONDS
        try:
            while not done.wait(_POLL_SECONDS):
                if progress is not None and self._clock() >= next_at:
                    yield progress()
                    next_at = self._clock() + PROGRESS_SECONDS
        except (KeyboardInterrupt, GeneratorExit):  # Ctrl-C, or the caller gave up on the turn
            # Not Thread.join: a join that a KeyboardInterrupt cut short can report the thread
            # finished when it is not, and the command would outlive the agent.
            ctx.cancel.set()
            if not done.wait(CANCEL_GRACE):
                children.kill_all()
            raise
        return box[0] if box else ToolOutput(f"Error: {use.name} produced no result", True)


def run_through(steps: Generator[ToolProgress, None, _T]) -> _T:
    """What a run comes to, its progress dropped (where nothing shows it)."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            result: _T = stop.value
            return result

"""Running one tool call: approval, the embedder's veto, the tool in a worker, redaction.

    ToolRunner.run(use, ctx) -> (ToolOutput, seconds)

The tool runs in a worker thread so Ctrl-C reaches the caller at once: the
runner then sets the tool's cancel signal, waits for it to stop, and lets the
KeyboardInterrupt go on. Secrets in a tool's output (a command printing the
environment) are redacted here, before the output reaches history, disk or
the model. The duration counts the tool, not the time spent asking. A `ToolWatch` (the file
watch that `/rewind` reads, agent.file_watch) is around every call that runs, told the tool's
file effect: the one place where what a tool changes is seen, so the tools need not know.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Protocol

from agent_cli.agent.approvals import Approver
from agent_cli.agent.hooks import Hooks
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.core.text import clean
from agent_cli.tools import children
from agent_cli.tools.base import CompactRequest, FileEffect, ToolContext, ToolOutput, ToolRegistry

__all__ = ["ToolRound", "ToolRunner", "ToolWatch"]

CANCEL_GRACE = 10.0  # seconds a cancelled tool gets to stop before the caller moves on


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

    def run(self, use: ToolUse, ctx: ToolContext) -> tuple[ToolOutput, float]:
        """Approve, then run one call. A refused call is an error output the model reads."""
        decision = self._approver.decide(use.name, use.input)
        if not decision.allowed:
            refused = f"Error: {decision.reason or 'the user did not approve this call'}"
            return ToolOutput(refused, True, denied=True, stop_turn=decision.stop), 0.0
        veto = self._hooks.on_before_tool(use)
        if veto:
            return ToolOutput(f"Error: {veto}", True, denied=True), 0.0
        self._hooks.on_pre_tool(use)
        started = self._clock()
        with self._watch.around(use, self.tools.effect(use.name), ctx):
            output = self._in_worker(use, ctx)
        # Undecodable bytes (a file name that is not UTF-8) become U+FFFD before anything stores it.
        output = dataclasses.replace(output, content=self._redact(clean(output.content)))
        return output, self._clock() - started

    def run_for_user(self, use: ToolUse, ctx: ToolContext) -> ToolOutput:
        """Run a call the user typed (`!command`, `@path`): nothing to approve, no hook to ask;
        Ctrl-C stops it as it stops a model's call. What it changes in the files is watched too."""
        with self._watch.around(use, self.tools.effect(use.name), ctx):
            output = self._in_worker(use, ctx)
        return dataclasses.replace(output, content=self._redact(clean(output.content)))

    def _in_worker(self, use: ToolUse, ctx: ToolContext) -> ToolOutput:
        box: list[ToolOutput] = []
        done = threading.Event()

        def work() -> None:
            try:
                box.append(self.tools.run(use.name, use.input, ctx))
            finally:
                done.set()

        worker = threading.Thread(target=work, name=f"tool-{use.name}", daemon=True)
        worker.start()
        try:
            while not done.wait(0.05):
                pass
        except KeyboardInterrupt:
            # Not Thread.join: a join that a KeyboardInterrupt cut short can report the thread
            # finished when it is not, and the command would outlive the agent.
            ctx.cancel.set()
            if not done.wait(CANCEL_GRACE):
                children.kill_all()
            raise
        return box[0] if box else ToolOutput(f"Error: {use.name} produced no result", True)

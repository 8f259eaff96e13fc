"""One round of tool calls: each call announced, run (tool_runner.py: approval, the tool, its
progress), its result told to the hooks and capped by L0 as it arrives.

    calls = RoundCalls(uses, runner, hooks, context, ctx)
    done = yield from calls.run(history, compacted_at)   # the round's events; its ToolRound
    calls.message()   # the results as one user message, whatever happened (an interrupt, a closed turn)
    calls.todos       # todo_write's newest list in the round (None: no new one)
    calls.skills      # the skills the round's calls loaded

What the round comes to is kept as it goes, so the loop reads it in a `finally` even when the
turn is closed in the middle of a call: the history it keeps stays valid and holds every result
that finished. The round changes no history and logs nothing: the loop takes what it returns.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from agent_cli.agent.compact_calls import honoured
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.tool_runner import ToolRound, ToolRunner
from agent_cli.agent.turn_stops import round_message
from agent_cli.context.protocol import ContextPolicy
from agent_cli.core.events import Event, ToolCallEvent, ToolResultEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.core.todos import TodoItem
from agent_cli.tools.base import CompactRequest, SkillLoad, ToolContext

__all__ = ["RoundCalls"]


class RoundCalls:
    def __init__(
        self,
        uses: Sequence[ToolUse],
        runner: ToolRunner,
        hooks: Hooks,
        context: ContextPolicy,
        ctx: ToolContext,
    ) -> None:
        self._uses = tuple(uses)
        self._runner = runner
        self._hooks = hooks
        self._context = context
        self._ctx = ctx
        self._results: list[ToolResult] = []
        self._compact: CompactRequest | None = None
        self._stopped = False
        self.todos: tuple[TodoItem, ...] | None = None
        self.skills: tuple[SkillLoad, ...] = ()

    def run(self, history: Sequence[Message], compacted_at: str | None) -> Generator[Event, None, ToolRound]:
        """Run the calls in order, until one's refusal stops the turn or Ctrl-C stops the round."""
        interrupted = False
        try:
            for use in self._uses:
                yield from self._call(use, history, compacted_at)
                if self._stopped:
                    break
        except KeyboardInterrupt:
            interrupted = True
        _, cut_short = round_message(self._uses, self._results, self._stopped)
        return ToolRound(tuple(self._results), cut_short, self._compact, interrupted, self._stopped)

    def message(self) -> Message:
        """The round's results as one user message: an error result for each call that did not finish."""
        return round_message(self._uses, self._results, self._stopped)[0]

    def _call(
        self, use: ToolUse, history: Sequence[Message], compacted_at: str | None
    ) -> Generator[Event, None, None]:
        yield ToolCallEvent(id=use.id, name=use.name, input=dict(use.input))
        output, duration = yield from self._runner.run(use, self._ctx)  # (its progress too)
        # One compaction a round at most, and none when nothing is new since the last.
        output = honoured(output, self._compact, history, compacted_at)
        self._compact = output.compact or self._compact
        if output.skill is not None and not output.is_error:
            self.skills += (output.skill,)
        if output.todos is not None and not output.is_error:
            self.todos = output.todos
        result = ToolResult(use.id, output.content, output.is_error, output.images)
        result = self._hooks.on_post_tool(use, result)
        event = ToolResultEvent(
            id=use.id,
            name=use.name,
            content=result.content,
            is_error=result.is_error,
            duration=duration,
            denied=output.denied,
        )
        result, cap = self._context.ingest(use, result, round_size=len(self._uses))
        self._results.append(result)
        yield event
        if cap is not None:
            yield cap
            self._hooks.on_compact(cap)
        self._stopped = output.stop_turn

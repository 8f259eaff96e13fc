"""The hook surface: observe or adjust the loop at fixed points.

Subclass `Hooks` and override what you need; every method is a no-op by
default. Approval has its own injected `Approver`; `on_before_tool` is an
extra veto for embedders (return a reason to deny).

The session's life has its points too (`on_session_start`, `on_user_prompt`,
`on_stop`, `on_session_end`), and the engine asks `on_pre_compact` before
each summary (context/protocol.py, `Gate`). What a hook has to tell the user (a line a
command printed, a warning) it puts on the session's side queue (agent/side_events.py, as
hooks_user's `UserHooks` does), which the loop reads before each event it yields.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.context.protocol import OPEN, CompactGate
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.core.requests import Request

__all__ = ["Hooks", "PromptVerdict"]


@dataclass(frozen=True, slots=True)
class PromptVerdict:
    """What becomes of a prompt: dropped (`blocked`, with the reason shown), or sent with `context`
    (text for the model, added after the prompt in its own block) when there is any."""

    blocked: str | None = None
    context: str = ""


class Hooks:
    def on_session_start(self, source: str) -> str:
        """The session opened (`source`: "startup" or "resume"); text for the model's context, sent
        with the first prompt ("" for none)."""
        return ""

    def on_user_prompt(self, prompt: str) -> PromptVerdict:
        """Called with each prompt before it joins the history."""
        return PromptVerdict()

    def on_pre_request(self, request: Request) -> None:
        """Called with every request just before it is sent (summaries included: a record prepared
        ahead calls it from the thread that prepares it)."""

    def on_before_tool(self, use: ToolUse) -> str | None:
        """Return a reason to refuse this tool call; None lets it run."""
        return None

    def on_pre_tool(self, use: ToolUse) -> None:
        """Called right before an approved tool runs."""

    def on_post_tool(self, use: ToolUse, result: ToolResult) -> ToolResult:
        """May replace a tool's result before the model sees it."""
        return result

    def on_pre_compact(self, layer: CompactLayer, trigger: CompactTrigger, focus: str | None) -> CompactGate:
        """Called before a summary is asked for (L2, L3): skip an automatic one, or add to its
        instruction."""
        return OPEN

    def on_compact(self, event: CompactEvent) -> None:
        """Called once per compaction, whatever the layer."""

    def on_stop(self, reply: str, active: bool = False) -> str | None:
        """The model's turn ended with its final reply; a reason to go on instead (a Stop hook that
        blocks, as Claude Code's do), or None. `active`: the turn already goes on because of one."""
        return None

    def on_session_end(self) -> None:
        """The agent is leaving the session (the REPL exits, a headless task ends)."""

"""A turn that stops short of its answer, and the valid history it leaves behind; pure.

A turn stops short when the user presses Ctrl-C, refuses a call and ends the turn with it, or
when it reaches `tools.max_iterations` requests. Every tool call in the history gets its result
whatever happens: a stopped round is closed with a result for each call that did not finish, and
a turn stopped before its reply is marked, so the next prompt does not read as a continuation of
it. The texts here are what the model (or the user) reads afterwards.

    round_message(uses, results, stopped)   the round's one results message, and the calls cut short
    answer_open_round(history)              the results an unanswered last tool round still needs
    cut_short_events(cut_short)             a result event for each call cut short, for the screen
    too_many_requests(limit)                what the user is told when the turn reached the limit
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.core.events import ToolResultEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse

__all__ = [
    "INTERRUPTED",
    "INTERRUPTED_TURN",
    "NOT_RUN_STOPPED",
    "STOPPED_BY_USER",
    "answer_open_round",
    "cut_short_events",
    "round_message",
    "too_many_requests",
]

INTERRUPTED = "interrupted: the user stopped this tool call before it finished"
INTERRUPTED_TURN = "[The user interrupted the request above before it was answered.]"
NOT_RUN_STOPPED = "not run: the user declined an earlier call of this round and stopped the turn"
STOPPED_BY_USER = "you declined the call and stopped the turn: say what to do instead"


def round_message(
    uses: Sequence[ToolUse], results: Sequence[ToolResult], stopped: bool
) -> tuple[Message, tuple[ToolUse, ...]]:
    """The round's results as one user message: each finished call's, then an error result for
    each call that did not finish (not run after a refusal that `stopped` the turn, interrupted
    otherwise); and the calls cut short."""
    done = {r.tool_use_id for r in results}
    cut_short = tuple(u for u in uses if u.id not in done)
    unfinished = NOT_RUN_STOPPED if stopped else INTERRUPTED
    missing = [ToolResult(u.id, unfinished, True) for u in cut_short]
    return Message("user", (*results, *missing)), cut_short


def answer_open_round(history: Sequence[Message]) -> Message | None:
    """If the history ends in an unanswered tool_use, the message that answers each call as
    interrupted; None when nothing is open."""
    if not history or history[-1].role != "assistant" or not history[-1].tool_uses:
        return None
    return Message("user", tuple(ToolResult(u.id, INTERRUPTED, True) for u in history[-1].tool_uses))


def cut_short_events(cut_short: Sequence[ToolUse]) -> list[ToolResultEvent]:
    """What the screen shows for each call an interrupt cut short."""
    return [
        ToolResultEvent(id=use.id, name=use.name, content=INTERRUPTED, is_error=True, duration=0.0)
        for use in cut_short
    ]


def too_many_requests(limit: int) -> str:
    """The error line of a turn stopped at `limit` model requests (tools.max_iterations)."""
    return (
        f"Stopped after {limit} model requests in one turn (tools.max_iterations). "
        "Send another message to let it go on."
    )

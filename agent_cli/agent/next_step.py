"""What a model reply asks for next: the value the loop's turn dispatches on.

`AgentLoop._step` sends one request and handles its reply (its tool round, a requested
compaction, a continuation); it returns one of these and `_turn` matches on it: another request,
the answer, an interrupt, or a stop with its error. (openai-agents' runner does the same with its
NextStep values.) `reply_events` is what a reply shows as it joins the history; `after_reply` what
a reply without tool calls asks for (continuations.py counts the turn's continued replies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from agent_cli.agent.continuations import CONTINUE_AFTER_CUTOFF, TOO_MANY_PAUSES, Continuations
from agent_cli.core.events import AssistantText, ErrorKind, Event, ResultStop, ThinkingText, WebSearchEvent
from agent_cli.core.messages import Message, ServerToolBlock, ToolUse

__all__ = ["FinalOutput", "Interrupted", "NextStep", "RunAgain", "Stopped", "after_reply", "reply_events"]


@dataclass(frozen=True, slots=True)
class RunAgain:
    """Send another request: tools ran, or the reply paused or was cut off (and is continued)."""


@dataclass(frozen=True, slots=True)
class FinalOutput:
    """The turn's answer: the reply's text, or every continued reply's."""

    text: str


@dataclass(frozen=True, slots=True)
class Interrupted:
    """Ctrl-C during the tool round; `cut_short` are the calls it stopped."""

    cut_short: tuple[ToolUse, ...]


@dataclass(frozen=True, slots=True)
class Stopped:
    """The turn ends without an answer: the error said, and the result's stop reason."""

    stop: ResultStop
    message: str
    kind: ErrorKind
    text: str = ""


NextStep: TypeAlias = RunAgain | FinalOutput | Interrupted | Stopped


def reply_events(message: Message) -> list[Event]:
    """What a reply shows as it joins the history: the text of each thinking block or reasoning
    summary that has any, the provider's own searches (run on its servers), then its text."""
    thoughts: list[Event] = [ThinkingText(text=b.text) for b in message.thoughts if b.text.strip()]
    searches = [
        WebSearchEvent(query=b.query) for b in message.content if isinstance(b, ServerToolBlock) and b.query
    ]
    return [*thoughts, *searches, *([AssistantText(text=message.text)] if message.text else [])]


def after_reply(
    going_on: Continuations, stop_reason: str | None, message: Message, final_text: Sequence[str]
) -> tuple[NextStep, Message | None]:
    """What a reply without tool calls asks for, and the message to send first, if any: a paused
    reply (the history's last message now) goes back as it is; one cut off at the output limit is
    continued (the user's message asking for the rest); a provider that pauses too often stops the
    turn; else the turn's answer: the text of every reply when some were continued (`final_text`),
    or this reply's."""
    match going_on.after(stop_reason):
        case "paused":
            return RunAgain(), None
        case "cut_off":
            return RunAgain(), Message.user(CONTINUE_AFTER_CUTOFF)
        case "too_many_pauses":
            return Stopped("pause_turn", TOO_MANY_PAUSES, "pause_turn", "".join(final_text)), None
        case "done":
            return FinalOutput("".join(final_text) if going_on.continued else message.text), None

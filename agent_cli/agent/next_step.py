"""What a model reply asks for next: the value the loop's turn dispatches on.

`AgentLoop._step` sends one request and handles its reply (its tool round, a requested
compaction, a continuation); it returns one of these and `_turn` matches on it: another request,
the answer, an interrupt, or a stop with its error. (openai-agents' runner does the same with its
NextStep values.) `reply_events` is what a reply shows as it joins the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from agent_cli.core.events import AssistantText, ErrorKind, Event, ResultStop, ThinkingText, WebSearchEvent
from agent_cli.core.messages import Message, ServerToolBlock, ToolUse

__all__ = ["FinalOutput", "Interrupted", "NextStep", "RunAgain", "Stopped", "reply_events"]


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

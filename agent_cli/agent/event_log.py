"""What of the loop's events the session log keeps, and where it keeps them.

SessionSink          where the loop records what happens (store.session_log.SessionLog is one)
log_event(sink, e)   the event as the log keeps it: display-only ones (deltas, the spinner's
                     status, a running tool's progress, thinking, which its message holds) not
                     at all; a long tool result as a preview, since its message holds it whole
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agent_cli.core.events import (
    AssistantTextDelta,
    Event,
    StatusEvent,
    ThinkingText,
    ThinkingTextDelta,
    ToolProgress,
    ToolResultEvent,
)
from agent_cli.core.messages import Message

__all__ = ["LOGGED_RESULT_CHARS", "SessionSink", "log_event"]

LOGGED_RESULT_CHARS = 400
_DISPLAY_ONLY = (AssistantTextDelta, ThinkingTextDelta, ThinkingText, StatusEvent, ToolProgress)


class SessionSink(Protocol):
    """Where the loop records what happens (agent_cli.store.session_log.SessionLog)."""

    @property
    def id(self) -> str: ...

    def log_message(self, message: Message) -> None: ...
    def log_event(self, event: Event) -> None: ...
    def log_history(self, messages: Sequence[Message], reason: str) -> None: ...
    def log_state(self, topic: str, data: Mapping[str, Any]) -> None: ...


def log_event(sink: SessionSink, event: Event) -> None:
    if isinstance(event, ToolResultEvent) and len(event.content) > LOGGED_RESULT_CHARS:
        more = f"… [{len(event.content):,} characters in the message]"
        sink.log_event(dataclasses.replace(event, content=event.content[:LOGGED_RESULT_CHARS] + more))
    elif not isinstance(event, _DISPLAY_ONLY):
        sink.log_event(event)

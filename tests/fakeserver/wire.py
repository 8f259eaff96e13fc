"""What one API module gives the server (`WireApi`), and the small helpers the API modules share.

The server is API-neutral: it routes a request by its path to the module whose `PATH` it ends
with, and that module does everything that differs between APIs: how the prompt splits into
cacheable units, what the real API rejects, its error envelope and overflow message, and how a
script item becomes stream events, a non-streamed body and SSE frames. Each API module is itself
the implementation (mypy checks a module against a Protocol), so adding an API is one module
plus one entry in the server's table.

*Events* are the API's stream payloads as dicts, in order; the non-streamed body is assembled
from the same events, so a streamed and a non-streamed answer to the same reply always agree.
*Usage* is neutral: input_tokens (uncached), output_tokens, cache_read_tokens, cache_write_tokens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, TypeAlias

from .script import Fault, Reply, ToolCallSpec

__all__ = ["JSON", "WireApi", "arguments", "blocks", "default_message", "neutral_stop", "pieces"]

JSON: TypeAlias = dict[str, Any]

_DEFAULT_MESSAGES = {
    401: "invalid x-api-key",
    403: "permission denied",
    413: "Request exceeds the maximum size",
    429: "Rate limit exceeded, please retry later",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    529: "Overloaded",
}


class WireApi(Protocol):
    """One API as the server sees it; implemented by a module (see the module docstring)."""

    NAME: str  # recorded as RecordedRequest.api
    PATH: str  # requests whose path ends with this are this API's
    CACHES_PROMPTS: bool  # simulate prompt caching at cache_control breakpoints

    def units(self, body: JSON) -> list[JSON]:
        """The prompt as cacheable units, in the API's prefix order."""
        ...

    def validate(self, body: JSON) -> str | None:
        """The real API's 400 message for a request it would reject, else None."""
        ...

    def auth_fault(self, key: str) -> Fault:
        """The real API's 401 for a wrong key."""
        ...

    def overflow_fault(self, estimate: int, window: int) -> Fault:
        """The real API's 400 for a prompt longer than the context window."""
        ...

    def error_body(self, fault: Fault) -> JSON:
        """The fault in the API's error envelope."""
        ...

    def events(self, reply: Reply, usage: Mapping[str, int], model: str, size: int) -> list[JSON]:
        """The stream of one reply; text and arguments in pieces of `size` characters."""
        ...

    def message(self, events: list[JSON], *, truncated: bool) -> JSON:
        """The non-streamed body assembled from the events; `truncated` leaves out the stop reason."""
        ...

    def without_stop(self, events: list[JSON]) -> list[JSON]:
        """The stream without its stop reason (and usage), ending cleanly."""
        ...

    def error_event(self, kind: str, message: str) -> JSON:
        """An error event inside a 200 stream."""
        ...

    def frame(self, event: JSON) -> str:
        """One event as server-sent-events text."""
        ...


def blocks(content: Any) -> list[JSON]:
    """Message or system content as a list of blocks (a plain string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def arguments(call: ToolCallSpec) -> str:
    """The call's arguments as the JSON text the model streams."""
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(dict(call.input))


def neutral_stop(reply: Reply) -> str:
    """Why the reply stopped, in neutral words (Anthropic's): as scripted, else from its tool calls."""
    return reply.stop or ("tool_use" if reply.tool_calls else "end_turn")


def default_message(status: int) -> str:
    """The error message for a fault scripted without one."""
    return _DEFAULT_MESSAGES.get(status, f"HTTP {status}")

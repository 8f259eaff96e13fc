"""What one API module gives the server (`WireApi`), and the small helpers the API modules share.

The server is API-neutral: it routes a request by its path to the module whose `PATH` it ends
with, and that module does everything that differs between APIs: how the prompt splits into
cacheable units, what the real API rejects, its error envelope and overflow message, and how a
script item becomes stream events, a non-streamed body and SSE frames. Each API module is itself
the implementation (mypy checks a module against a Protocol), so adding an API is one module
plus one entry in the server's table.

An *admission* is a request the API takes, as its model will read it: replayed reasoning the
API drops without an error (another model's thinking, a seal that no longer matches under
`drop_block`, OpenAI's withheld reasoning items) is left out of its body, so it is neither
counted nor cached. *Events* are the API's stream payloads as dicts, in order; the non-streamed
body is assembled from the same events, so a streamed and a non-streamed answer to the same reply
always agree. *Usage* is neutral: input_tokens (uncached), output_tokens (reasoning included),
cache_read_tokens, cache_write_tokens, reasoning_tokens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from .script import Fault, Reply, ToolCallSpec

__all__ = [
    "JSON",
    "Admission",
    "Caching",
    "WireApi",
    "arguments",
    "blocks",
    "default_message",
    "neutral_stop",
    "pieces",
    "total",
]

JSON: TypeAlias = dict[str, Any]
Caching: TypeAlias = Literal["breakpoints", "automatic", "none"]

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


@dataclass(frozen=True)
class Admission:
    """A request the API takes: what its model reads, and what the answer needs to know."""

    body: JSON  # the request without the replayed reasoning the API dropped silently
    headers: Mapping[str, str]  # lower-case names
    key: bytes  # the server's signing key, for seals (see `binding`)
    # How the reply reasons: "" (not at all), "omitted" (reasoning without text), "summarized"
    # (with text), "updates" (only progress blocks carry text), "between_tools" (no leading block).
    thinking: str = ""
    accepted: int = 0  # replayed reasoning the model reads (thinking blocks, reasoning items)
    withheld: int = 0  # replayed reasoning dropped without an error
    transformations: tuple[JSON, ...] | None = None  # reported on the answer; None: no such field


class WireApi(Protocol):
    """One API as the server sees it; implemented by a module (see the module docstring)."""

    NAME: str  # recorded as RecordedRequest.api
    PATH: str  # requests whose path ends with this are this API's
    # Prompt caching: at cache_control "breakpoints" (Anthropic), "automatic" prefixes (OpenAI
    # Responses), or "none".
    CACHING: Caching

    def units(self, body: JSON) -> list[JSON]:
        """The prompt as cacheable units, in the API's prefix order."""
        ...

    def admit(
        self, body: JSON, headers: Mapping[str, str], key: bytes, paused: frozenset[str] = frozenset()
    ) -> Admission | Fault:
        """The request as the model reads it, or the real API's 4xx for a request it would reject.
        `paused`: the `paused_key`s of the replies this server paused (a request may send one back
        as its last turn, to continue it)."""
        ...

    def paused_key(self, body: JSON, events: list[JSON]) -> str | None:
        """For a reply to `body` that paused its turn (Anthropic's `pause_turn`), what identifies the
        turn when it is sent back (with the paused replies before it, when `body` continued one);
        None for any other reply (or an API without paused turns)."""
        ...

    def auth_fault(self, key: str) -> Fault:
        """The real API's 401 for a wrong key."""
        ...

    def overflow_fault(self, estimate: int, window: int) -> Fault:
        """The real API's 400 for a prompt longer than the context window."""
        ...

    def overflow_events(self, fault: Fault, admission: Admission) -> list[JSON] | None:
        """The same overflow inside a 200 stream, where the API has that form, else None."""
        ...

    def error_body(self, fault: Fault) -> JSON:
        """The fault in the API's error envelope."""
        ...

    def events(self, reply: Reply, admission: Admission, usage: Mapping[str, Any], size: int) -> list[JSON]:
        """The stream of one reply; text and arguments in pieces of `size` characters."""
        ...

    def message(self, events: list[JSON], *, truncated: bool) -> JSON:
        """The non-streamed body assembled from the events; `truncated` leaves out the stop reason."""
        ...

    def without_stop(self, events: list[JSON]) -> list[JSON]:
        """The stream without its stop reason (and usage), ending cleanly."""
        ...

    def error_event(self, kind: str, message: str, replaced: JSON) -> JSON:
        """An error event inside a 200 stream, sent in place of the event `replaced`."""
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


def total(*figures: Any) -> Any:
    """The sum of usage figures; a script that set an odd one (a string, a float, a bool) gets its
    first figure as it is, so a test of a lying server sends exactly what it scripted."""
    if all(type(f) is int for f in figures):
        return sum(figures)
    return figures[0]


def default_message(status: int) -> str:
    """The error message for a fault scripted without one."""
    return _DEFAULT_MESSAGES.get(status, f"HTTP {status}")

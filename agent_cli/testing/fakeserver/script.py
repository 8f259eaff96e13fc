"""What a test scripts the fake to do next: the script items, and reading them from a JSON file.

Each request the fake answers takes one item: a `Reply` (text and tool calls), or one of the
ways a real API fails: a `Fault` (an HTTP error), a `Drop` (the connection dies mid-answer), a
`Truncate` (the stream ends cleanly but never says why it stopped) or a `StreamError` (an error
event inside a 200 stream). Items are API-neutral; each API module renders them in its own wire
format.

A script file is a JSON list of items in this form:
    {"text": ..., "tool_calls": [{"name": ..., "input": {...}}], "stop": ..., "usage": {...},
     "thinking": ..., "progress": [...], "redacted": true, "reasoning_tokens": 200,
     "searches": ["a query"]}
    {"fault": {"status": 529, "message": ..., "headers": {...}, "kind": ...}}
    {"drop": {"after_events": 3}}   {"truncate": {}}   {"stream_error": {"kind": "api_error"}}
    {"stall": {"after_events": 2, "seconds": 30}}   {"drip": {"interval": 0.2}}
    {"pings": {"interval": 0.3, "seconds": 60}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "DEFAULT_THINKING",
    "Drip",
    "Drop",
    "Fault",
    "Pings",
    "Reply",
    "ScriptItem",
    "Stall",
    "StreamError",
    "ToolCallSpec",
    "Truncate",
    "load_script",
    "script_item",
]


@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call the fake model makes. `raw_arguments` sends that text verbatim (e.g. broken JSON)."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None


DEFAULT_THINKING = "Looking at the request."


@dataclass(frozen=True)
class Reply:
    """One answer. `stop` is neutral ("end_turn", "tool_use", "max_tokens", "refusal") or the API's own word
    (e.g. "model_context_window_exceeded"); `usage` overrides any of input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reasoning_tokens.

    What a model that reasons shows of it (other models ignore these): `thinking` is the text of
    the leading thinking block (Anthropic, under display "summarized") or of the reasoning summary
    (OpenAI, when `reasoning.summary` is set); `progress` the texts of thinking blocks placed one
    before each tool call, in order (Anthropic, as Opus 5.5 narrates between tools); `redacted`
    adds a `redacted_thinking` block after the leading one (Anthropic); `reasoning_tokens` is what
    the reasoning cost, counted in the output tokens and shared out over the reply's thinking blocks.

    `extra` are content blocks (Anthropic) or output items (Responses) sent as given before the
    text: a type the client does not know yet. `searches` are queries the model runs through the
    provider's web search before its text, when the request offers that tool (a `server_tool_use` and
    its `web_search_tool_result` on Anthropic, a `web_search_call` on Responses; `search_shapes`).
    `stop="pause_turn"` pauses the turn (Anthropic): the
    server then takes this reply back as the last turn of the next request, to continue it.
    """

    text: str = ""
    tool_calls: Sequence[ToolCallSpec] = ()
    stop: str | None = None
    usage: Mapping[str, Any] | None = None  # any value goes out as scripted (a lying server)
    thinking: str = DEFAULT_THINKING
    progress: Sequence[str] = ()
    redacted: bool = False
    reasoning_tokens: int = 200
    extra: Sequence[Mapping[str, Any]] = ()
    searches: Sequence[str] = ()


@dataclass(frozen=True)
class Fault:
    """An HTTP error in the API's own envelope.

    `kind` overrides the error type (Anthropic) or code (OpenAI); `headers` are sent as given (retry-after);
    `param` is the OpenAI Responses error's `param`; `raw` is sent verbatim as text/html instead of
    the envelope (a proxy's HTML 502, or a 200 whose body is not JSON); `error_code` is an Anthropic
    error's `details.error_code` (the SDK raises the class it names, e.g. a compaction error).
    """

    status: int
    message: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    kind: str | None = None
    param: str | None = None
    raw: str | None = None
    error_code: str | None = None


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly after `after_events` stream events (half the body when not streaming)."""

    after_events: int = 3
    reply: Reply = Reply("This answer will be cut off half way through, so nobody may keep it.")


@dataclass(frozen=True)
class Truncate:
    """End the stream cleanly but without the stop/finish reason (and without usage)."""

    reply: Reply = Reply("This answer ends early without saying why it stopped.")


@dataclass(frozen=True)
class StreamError:
    """An error event inside a 200 stream after `after_events` events (Anthropic `event: error`,
    OpenAI `data: {"error": ...}`), then a clean end. Not streaming: the same as a 529/500 Fault."""

    kind: str = "overloaded_error"
    message: str = "Overloaded"
    after_events: int = 3
    reply: Reply = Reply("This answer is interrupted by an error event.")


@dataclass(frozen=True)
class Stall:
    """Go quiet after `after_events` stream events (half the body when not streaming) for `seconds`,
    keeping the connection open, then hang up: a server that stopped sending."""

    after_events: int = 2
    seconds: float = 30.0
    reply: Reply = Reply("This answer stops arriving half way through and never resumes.")


@dataclass(frozen=True)
class Drip:
    """Send the answer a byte at a time, `interval` seconds apart: never quiet long enough to stall,
    never done in time (a slow proxy, a server trickling its reply)."""

    interval: float = 0.2
    reply: Reply = Reply("This answer arrives one byte at a time, far too slowly for anyone to wait for it.")


@dataclass(frozen=True)
class Pings:
    """Send nothing but keep-alives, `interval` seconds apart, for `seconds`, then hang up: Anthropic's
    `ping` events, an SSE comment for the OpenAI APIs, a space of JSON whitespace when not streaming."""

    interval: float = 0.3
    seconds: float = 60.0
    reply: Reply = Reply("")  # never sent


ScriptItem: TypeAlias = Reply | Fault | Drop | Truncate | StreamError | Stall | Drip | Pings


def script_item(data: Mapping[str, Any]) -> ScriptItem:
    """One script item from its JSON form (see the module docstring)."""
    if "fault" in data:
        f = data["fault"]
        return Fault(int(f["status"]), str(f.get("message", "")), dict(f.get("headers") or {}), f.get("kind"))
    if "drop" in data:
        return Drop(int((data["drop"] or {}).get("after_events", 3)))
    if "stall" in data:
        s = data["stall"] or {}
        return Stall(int(s.get("after_events", 2)), float(s.get("seconds", 30.0)))
    if "drip" in data:
        return Drip(float((data["drip"] or {}).get("interval", 0.2)))
    if "pings" in data:
        p = data["pings"] or {}
        return Pings(float(p.get("interval", 0.3)), float(p.get("seconds", 60.0)))
    if "truncate" in data:
        return Truncate()
    if "stream_error" in data:
        e = data["stream_error"] or {}
        return StreamError(str(e.get("kind", "overloaded_error")), str(e.get("message", "Overloaded")))
    calls = [ToolCallSpec(str(c["name"]), dict(c.get("input") or {})) for c in data.get("tool_calls") or []]
    return Reply(
        str(data.get("text", "")),
        calls,
        data.get("stop"),
        data.get("usage"),
        thinking=str(data.get("thinking", DEFAULT_THINKING)),
        progress=tuple(str(p) for p in data.get("progress") or ()),
        redacted=bool(data.get("redacted", False)),
        reasoning_tokens=int(data.get("reasoning_tokens", 200)),
        searches=tuple(str(q) for q in data.get("searches") or ()),
    )


def load_script(path: str) -> list[ScriptItem]:
    """The items of a script file, in order."""
    with open(path, encoding="utf-8") as handle:
        return [script_item(item) for item in json.load(handle)]

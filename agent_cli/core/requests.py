"""The request and reply shapes, in provider-neutral terms.

A provider turns a `Request` into a stream of `TextDelta`s (and `ThinkingDelta`s) ending in exactly
one `Completion`; the caller only ever adds `Completion.message` to the history. Values only: the
interface that produces them is `agent_cli.providers.base.Provider`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from agent_cli.core.messages import Message, Usage

__all__ = [
    "Completion",
    "Request",
    "RequestOptions",
    "StopReason",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolSpec",
]

# "pause_turn": the provider paused a long turn (Anthropic); sending the reply back continues it.
StopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to the model: name, description and a JSON schema for its input."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """A request's hints: they do not change what is asked, only how it is sent.

    `tool_choice` "none": a summary request keeps the tools, so the cached prefix is reused, but asks
    for no calls. `cache_anchor`: the index of the last message the context engine's next clear will
    keep (a cache that works at marked points marks it). `cache_newest`: whether such a cache should
    write the newest message too (False when the next clear is expected to change it).
    `cache_span_end`: the index of the last message of the span the engine's next summary would
    condense, so that summary's request reads the span back instead of writing it again.
    `cache_checkpoint`: the index of a message such a cache keeps for an hour (a request after a
    long pause reads the conversation back up to it: `context/cache_choices._checkpoint`)."""

    tool_choice: Literal["auto", "none"] = "auto"
    cache_anchor: int | None = None
    cache_newest: bool = True
    cache_span_end: int | None = None
    cache_checkpoint: int | None = None


@dataclass(frozen=True, slots=True)
class Request:
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    options: RequestOptions = field(default_factory=RequestOptions)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text as it streams in (for display only)."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's visible thinking as it streams in (for display only)."""

    text: str


@dataclass(frozen=True, slots=True)
class Completion:
    """The finished assistant message, why it stopped, and the usage reported for the request.

    `notes` are what the adapter has to tell the user about the reply itself (a usage report whose
    figures were not token counts): one line each, said once per provider."""

    message: Message
    stop_reason: StopReason
    usage: Usage
    model: str = ""
    notes: tuple[str, ...] = ()


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | Completion

"""Provider-neutral conversation values: blocks, messages and usage (the model's reasoning blocks
are `thought_blocks.py`'s).

Everything here is a frozen value with an explicit JSON round trip
(`to_json` / `from_json`). Provider adapters translate these to and from their
wire formats; nothing else knows what a wire format looks like.

A message's `id` names exactly one content: the session log records it, the
token counter caches counts under it, and `recall` cites it. Changing content
means a new message with a new id.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from agent_cli.core.images import ImageBlock, image_from_json
from agent_cli.core.thought_blocks import (
    THOUGHT_TYPES,
    ReasoningBlock,
    RedactedThinkingBlock,
    ThinkingBlock,
    ThoughtBlock,
)

__all__ = [
    "CLEARED_PREFIX",
    "RAW_ARGUMENTS",
    "Block",
    "ImageBlock",
    "Message",
    "NativeRecord",
    "Role",
    "ServerToolBlock",
    "SummaryBlock",
    "TextBlock",
    "ToolResult",
    "ToolUse",
    "UnknownBlockType",
    "Usage",
    "block_from_json",
    "new_id",
    "tool_arguments",
]

Role: TypeAlias = Literal["user", "assistant"]
JSON: TypeAlias = dict[str, Any]


def new_id(prefix: str = "m") -> str:
    """A short random id, unique enough for one project's transcripts."""
    return f"{prefix}_{secrets.token_hex(8)}"


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str

    def to_json(self) -> JSON:
        return {"type": "text", "text": self.text}


# Tool-call arguments that are not a JSON object keep their text under this one key: the call keeps
# its id (so its pair stays valid) and the tool layer answers with a readable error.
RAW_ARGUMENTS = "_raw"

# How a tool result the context engine cleared begins (its stub, context/clear.py); the store's
# search reads the result as it was sent instead.
CLEARED_PREFIX = "[cleared to save context: "


def tool_arguments(raw: str) -> dict[str, Any]:
    """Tool-call arguments sent as JSON text, as a dict: {} for none, `{RAW_ARGUMENTS: raw}` when
    they are not a JSON object."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {RAW_ARGUMENTS: raw}
    return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS: raw}


@dataclass(frozen=True, slots=True)
class ToolUse:
    """The model asks for a tool to run. `id` pairs it with its ToolResult. `item_id` is the
    provider's own id of the call, when it has one apart from `id` (a Responses API function_call's
    `fc_...`, sent back with the call as the API returned it)."""

    id: str
    name: str
    input: Mapping[str, Any]
    item_id: str = ""

    def to_json(self) -> JSON:
        data: JSON = {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}
        if self.item_id:
            data["item_id"] = self.item_id
        return data


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned, sent back in a user message after its ToolUse: its text, and the
    images it read (`read_file` on a picture, `recall` of one), which go with the text."""

    tool_use_id: str
    content: str
    is_error: bool = False
    images: tuple[ImageBlock, ...] = ()

    def to_json(self) -> JSON:
        data: JSON = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }
        if self.images:
            data["images"] = [i.to_json() for i in self.images]
        return data


@dataclass(frozen=True, slots=True)
class SummaryBlock:
    """A summary of earlier conversation that replaced it in the working context.

    Rendered to providers as plain text in a user message (followed by an
    assistant acknowledgement), which every provider accepts. `transcript`
    names the file holding the messages it replaced.
    """

    text: str
    transcript: str | None = None

    def to_json(self) -> JSON:
        return {"type": "summary", "text": self.text, "transcript": self.transcript}


@dataclass(frozen=True, slots=True)
class NativeRecord:
    """A record the provider wrote (opt-in, `context.summarizer = "native"`): Anthropic's signed
    `compaction` block, or the output of OpenAI's `/responses/compact` (the user's messages and an
    encrypted `compaction` item). Carried byte for byte and never edited: `wire` is the JSON text of
    what the API returned (one block, or a list of items), sent back as it parses; `provider` says
    whose it is (another provider's is not sent); `text` is what a person may read of it (Anthropic's
    summary; OpenAI's item is encrypted, so only the note of what it holds).

    It is alone in the first message of the history; the `SummaryBlock` of ours that carries what it
    does not (the user's messages verbatim, the transcript's name, how to recall) follows the turns
    kept after it (context/condense.py)."""

    provider: str
    wire: str
    text: str = ""
    readable: bool = True  # `text` is the provider's summary itself (False: only a note of what it holds)
    # The provider's docs say the turns sent right after the record keep their thinking valid (Anthropic's
    # keep-tail compaction): replacing the span by it is not a change to what follows (core/thinking.py).
    keeps_tail: bool = False
    keeps_user_messages: bool = False  # it holds the user's messages as sent (OpenAI's output does)

    def to_json(self) -> JSON:
        return {
            "type": "native_record",
            "provider": self.provider,
            "wire": self.wire,
            "text": self.text,
            "readable": self.readable,
            "keeps_tail": self.keeps_tail,
            "keeps_user_messages": self.keeps_user_messages,
        }


@dataclass(frozen=True, slots=True)
class ServerToolBlock:
    """A block of a tool the provider ran itself (its web search): Anthropic's `server_tool_use` or
    `web_search_tool_result`, OpenAI's `web_search_call`. Kept in the history and sent back byte for
    byte to the provider that wrote it (`wire`: the JSON text of the block or item), never to another;
    `query` is what was searched (for the one line the REPL shows), "" for a result."""

    provider: str
    wire: str
    query: str = ""

    def to_json(self) -> JSON:
        return {"type": "server_tool", "provider": self.provider, "wire": self.wire, "query": self.query}


Block: TypeAlias = (
    TextBlock | ToolUse | ToolResult | SummaryBlock | ThoughtBlock | NativeRecord | ServerToolBlock
    | ImageBlock
)


class UnknownBlockType(ValueError):
    """A block of a type this version does not know (a newer version wrote it)."""


def block_from_json(data: Mapping[str, Any]) -> Block:
    """The block `data` holds; UnknownBlockType for a type not known here, ValueError, KeyError or
    TypeError for one that does not fit its type."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(str(data["text"]))
    if kind == "tool_use":
        item_id = str(data.get("item_id") or "")
        return ToolUse(str(data["id"]), str(data["name"]), dict(data.get("input") or {}), item_id)
    if kind == "tool_result":
        images = tuple(image_from_json(i) for i in data.get("images") or ())
        return ToolResult(
            str(data["tool_use_id"]), str(data["content"]), bool(data.get("is_error", False)), images
        )
    if kind == "image":
        return image_from_json(data)
    if kind == "summary":
        transcript = data.get("transcript")
        return SummaryBlock(str(data["text"]), None if transcript is None else str(transcript))
    if kind == "thinking":
        return ThinkingBlock(str(data["thinking"]), str(data["signature"]))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(str(data["data"]))
    if kind == "reasoning":
        summary = data.get("summary") or []
        return ReasoningBlock(str(data["id"]), str(data["encrypted_content"]), tuple(str(x) for x in summary))
    if kind == "native_record":
        readable, keeps = bool(data.get("readable", True)), bool(data.get("keeps_tail", False))
        users = bool(data.get("keeps_user_messages", False))
        return NativeRecord(
            str(data["provider"]), str(data["wire"]), str(data.get("text") or ""), readable, keeps, users
        )
    if kind == "server_tool":
        return ServerToolBlock(str(data["provider"]), str(data["wire"]), str(data.get("query") or ""))
    raise UnknownBlockType(f"unknown block type: {kind!r}")


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: tuple[Block, ...]
    id: str = field(default_factory=new_id)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", (TextBlock(text),))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", (TextBlock(text),))

    @classmethod
    def of(cls, role: Role, blocks: Iterable[Block]) -> Message:
        return cls(role, tuple(blocks))

    @property
    def text(self) -> str:
        """The text blocks joined; summaries included, tool blocks not."""
        parts = [b.text for b in self.content if isinstance(b, TextBlock | SummaryBlock)]
        return "\n".join(p for p in parts if p)

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolUse))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolResult))

    @property
    def images(self) -> tuple[ImageBlock, ...]:
        """Every image the message carries: its own, then those of its tool results, in order."""
        found: list[ImageBlock] = []
        for b in self.content:
            if isinstance(b, ImageBlock):
                found.append(b)
            elif isinstance(b, ToolResult):
                found.extend(b.images)
        return tuple(found)

    @property
    def thoughts(self) -> tuple[ThoughtBlock, ...]:
        """The reasoning blocks (thinking, redacted thinking, reasoning items), in order."""
        return tuple(b for b in self.content if isinstance(b, THOUGHT_TYPES))

    @property
    def summary(self) -> SummaryBlock | None:
        for b in self.content:
            if isinstance(b, SummaryBlock):
                return b
        return None

    @property
    def native(self) -> NativeRecord | None:
        """The provider's own record in this message (a native compaction), if it holds one."""
        for b in self.content:
            if isinstance(b, NativeRecord):
                return b
        return None

    @property
    def is_plain_user(self) -> bool:
        """A message the user typed (not tool results, not a summary, not the provider's record)."""
        return self.role == "user" and not self.tool_results and self.summary is None and self.native is None

    def replace(self, content: Iterable[Block]) -> Message:
        """A new message (new id) with the same role and new content.

        Content never changes under an id, so anything keyed by id (token
        counts, log records) stays true.
        """
        return Message(self.role, tuple(content))

    def to_json(self) -> JSON:
        return {"id": self.id, "role": self.role, "content": [b.to_json() for b in self.content]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        role = data["role"]
        if role not in ("user", "assistant"):
            raise ValueError(f"unknown role: {role!r}")
        blocks = tuple(block_from_json(b) for b in data["content"])
        return cls(role, blocks, str(data.get("id") or new_id()))


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a provider reported for one request.

    `input_tokens` excludes what was read from or written to the prompt cache;
    `reasoning_tokens` is the part of `output_tokens` spent thinking; `web_searches` the provider's
    own searches it reported (billed per use, not per token).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    web_searches: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Everything the request sent, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.web_searches + other.web_searches,
        )

    def to_json(self) -> JSON:
        data: JSON = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }
        return {**data, "web_searches": self.web_searches} if self.web_searches else data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        return cls(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("cache_read_tokens", 0)),
            int(data.get("cache_write_tokens", 0)),
            int(data.get("reasoning_tokens", 0)),
            int(data.get("web_searches", 0)),
        )

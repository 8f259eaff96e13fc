"""What a message or a frame costs, kind by kind, given how one text is counted; and a count's
upper bound that needs no vocabulary.

    tally_message(msg, raw) -> MessageTokens      raw tokens by kind (text, tool calls, results ...)
    tally_frame(system, tools, raw) -> (system, tools)
    byte_bound(text) -> int                       at least what any tiktoken encoding counts

`raw` is the counter's count of one text (tiktoken's, or the character estimate). A tiktoken
token is one or more bytes of the text's UTF-8, so the text's length in bytes bounds its count
from above, and so it bounds the character estimate (`estimate.py`: at least 1.5 characters a
token for CJK, each three bytes); `TokenCounter` uses that bound to decide, without loading a
vocabulary, that a small request is far from every line. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import (
    Message,
    NativeRecord,
    ServerToolBlock,
    SummaryBlock,
    TextBlock,
    ToolResult,
    ToolUse,
)
from agent_cli.core.requests import ToolSpec
from agent_cli.core.thought_blocks import ReasoningBlock, RedactedThinkingBlock, ThinkingBlock
from agent_cli.tokens.images import ImageRule, image_tokens

__all__ = [
    "MESSAGE_OVERHEAD",
    "OPAQUE_CHARS_PER_TOKEN",
    "REQUEST_OVERHEAD",
    "SUMMARY_OVERHEAD",
    "TOOL_RESULT_OVERHEAD",
    "TOOL_SPEC_OVERHEAD",
    "TOOL_USE_OVERHEAD",
    "MessageTokens",
    "byte_bound",
    "canonical_json",
    "tally_frame",
    "tally_message",
]

# Wire framing the text alone does not show, in raw tokens. OpenAI's chat format
# spends ~3 tokens per message and 3 to prime the reply; tool calls and results
# also carry ids, types and JSON wrapping. The ratio absorbs what is left.
MESSAGE_OVERHEAD = 4
TOOL_USE_OVERHEAD = 8
TOOL_RESULT_OVERHEAD = 8
SUMMARY_OVERHEAD = 16  # the adapters wrap a summary in a short preface and an acknowledgement
TOOL_SPEC_OVERHEAD = 8
REQUEST_OVERHEAD = 3
# A signature or encrypted reasoning is base64 of the reasoning it carries, which the provider counts as
# input when it is sent back: about 5 characters per token of reasoning (4/3 base64 growth over ~4 bytes
# a token). The anchor on the next usage report corrects what this misses.
OPAQUE_CHARS_PER_TOKEN = 5

Raw = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class MessageTokens:
    """Raw tokens of one message by kind of content."""

    text: int = 0
    tool_uses: int = 0
    tool_results: int = 0
    summaries: int = 0
    overhead: int = 0
    thoughts: int = 0  # thinking / reasoning blocks sent back (their opaque part estimated)
    images: int = 0  # images, by the provider's rule (never their base64 text)

    @property
    def total(self) -> int:
        return (
            self.text + self.tool_uses + self.tool_results + self.summaries + self.overhead + self.thoughts
            + self.images
        )


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def byte_bound(text: str) -> int:
    """An upper bound on any tiktoken count of `text` (and on the character estimate): its UTF-8 bytes."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def tally_message(msg: Message, raw: Raw, images: ImageRule = "any") -> MessageTokens:
    """Raw tokens of `msg` by kind, each text counted by `raw`, each image by the rule `images`."""
    text = uses = results = summaries = thoughts = 0
    pictures = sum(image_tokens(i.width, i.height, images) for i in msg.images)
    overhead = MESSAGE_OVERHEAD
    for block in msg.content:
        if isinstance(block, TextBlock):
            text += raw(block.text)
        elif isinstance(block, ToolUse):
            uses += raw(block.name) + raw(canonical_json(dict(block.input)))
            overhead += TOOL_USE_OVERHEAD + raw(block.id)
        elif isinstance(block, ImageBlock):
            overhead += TOOL_RESULT_OVERHEAD  # its wrapping; its pixels are counted above
        elif isinstance(block, ToolResult):
            results += raw(block.content)
            overhead += TOOL_RESULT_OVERHEAD + raw(block.tool_use_id)
        elif isinstance(block, SummaryBlock):
            summaries += raw(block.text)
            overhead += SUMMARY_OVERHEAD
        elif isinstance(block, ThinkingBlock):
            thoughts += raw(block.thinking) + len(block.signature) // OPAQUE_CHARS_PER_TOKEN
        elif isinstance(block, RedactedThinkingBlock):
            thoughts += len(block.data) // OPAQUE_CHARS_PER_TOKEN
        elif isinstance(block, ReasoningBlock):
            thoughts += raw(block.text) + len(block.encrypted_content) // OPAQUE_CHARS_PER_TOKEN
        elif isinstance(block, NativeRecord):
            # A readable record is read as its summary (Anthropic's block: its signature and
            # encrypted_content are metadata); an encrypted one (OpenAI's) as what it sends.
            summaries += raw(block.text)
            if not block.readable:
                summaries += len(block.wire) // OPAQUE_CHARS_PER_TOKEN
            overhead += SUMMARY_OVERHEAD
        elif isinstance(block, ServerToolBlock):  # the provider's search and its results, as sent
            results += raw(block.wire)
    return MessageTokens(text, uses, results, summaries, overhead, thoughts, pictures)


def tally_frame(system: str, tools: Sequence[ToolSpec], raw: Raw) -> tuple[int, int]:
    """Raw tokens of the system prompt (with the request's framing) and of the tool definitions."""
    tool_raw = sum(
        TOOL_SPEC_OVERHEAD + raw(t.name) + raw(t.description) + raw(canonical_json(dict(t.input_schema)))
        for t in tools
    )
    return raw(system) + REQUEST_OVERHEAD, tool_raw

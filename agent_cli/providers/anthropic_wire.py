"""The Anthropic Messages API on the wire: requests out, replies in (pure, over plain dicts).

`to_wire` builds the keyword arguments of `messages.create`; `from_wire` reads
a non-streamed reply; `StreamAssembler` builds the same reply from stream
events. An SDK object is turned into a dict with `model_dump()` first, so
all of this is tested without a network.

Wire rules:
- consecutive same-role messages become one wire message (the context engine
  may produce them; the API wants turns); in a user turn tool results go first,
  as the API requires them to lead the message that answers the tool calls;
- `SummaryBlock` is a plain text block; empty text blocks are dropped (the API
  rejects them), but a thinking block goes back exactly as it came, empty text
  and all: it is bound to the conversation before it;
- OpenAI reasoning items (another model's) are not sent;
- a native record (Anthropic's `compaction` block, `native_wire.py`) goes first, alone in an
  assistant turn, as the API returned it (the docs: "put the returned message in their place"),
  and every request that carries one names the compaction beta; the rest of its message (our
  carrier: the user's words, the transcript) follows the kept turns. To a model that cannot read the
  block (`compaction=False`: one switched to with /model) its readable summary goes as text
  instead. Another provider's is not sent;
- a history that ends with an assistant message is sent as it is: the loop does that only to
  continue a turn the API paused (`pause_turn`, the one documented case of a trailing assistant
  turn); the paused reply and its continuation are consecutive assistant messages, so they go as
  one assistant turn, as the docs' example sends them;
- the provider's web search (`web_search=True`, `server_search.py`) goes first in the tool list;
  its `server_tool_use` and `web_search_tool_result` blocks are kept (`ServerToolBlock`) and go
  back verbatim, as the API requires (another provider's are not sent, nor any to a request
  that does not offer the tool); reply blocks of another type this client does not know (a newer
  API's) are skipped: the SDK keeps them as sent, without its serializer's warnings
  (`SDKProvider._as_dict`);
- prompt caching puts `cache_control` where `cache_marks.place_marks` says (at most 4): the
  system block, the last block of the last message, the last block of the turn that ends with
  the last message the context engine's next clear keeps (the request's `cache_anchor`), and,
  given what earlier requests wrote (`WrittenPrefixes`), a bridge to the latest of those
  prefixes when no other breakpoint is within the API's 20-block look-back of it, the end of the
  span the engine's next summary would condense (`cache_span_end`), the engine's 1-hour
  checkpoint (`cache_checkpoint`) and the last tool, when slots are left. The API reads a cached
  prefix only where a request marked one;
- the request's `tool_choice` "none" sends `tool_choice: none` but keeps the tools (the
  messages' cached prefix is then not read: a `tool_choice` change invalidates it);
- thinking and effort are sent only as the model table says the model takes
  them (`ThinkingConfig.for_model`); sampling parameters, a prefilled reply and
  forced tool use are never sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.core.errors import ContextOverflowError, TransientError
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import (
    Block,
    Message,
    ServerToolBlock,
    SummaryBlock,
    TextBlock,
    ToolResult,
    ToolUse,
    Usage,
    tool_arguments,
)
from agent_cli.core.requests import Completion, Request, StopReason, TextDelta, ThinkingDelta
from agent_cli.core.thought_blocks import RedactedThinkingBlock, ThinkingBlock
from agent_cli.providers.cache_marks import WrittenPrefixes, place_marks
from agent_cli.providers.model_info import Accepts
from agent_cli.providers.registry import ANTHROPIC
from agent_cli.providers.server_search import ANTHROPIC_SEARCH_TOOL, server_block, without_searches
from agent_cli.providers.usage import UsageReading, mapping, token_count

__all__ = [
    "BINDING_BETA",
    "COMPACT_BETA",
    "StreamAssembler",
    "ThinkingConfig",
    "from_wire",
    "reply_usage",
    "to_wire",
]

BINDING_BETA = "thinking-binding-controls-2026-08-01"
# On-demand compaction (platform.claude.com/docs/en/build-with-claude/compaction-keep-recent-turns):
# the compaction request and every later request that sends its block back carry it.
COMPACT_BETA = "compact-2026-09-04"
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
}
_CUT_SHORT = "stream ended before the message was complete"
# The reply ran into the window: the docs ask to treat it like "prompt is too long".
_WINDOW_FULL = "model_context_window_exceeded"


@dataclass(frozen=True, slots=True)
class ThinkingConfig:
    """What a request says about thinking: its type and display, the effort, the binding behaviour."""

    thinking: Mapping[str, Any] | None = None
    effort: str | None = None
    drop_invalid: bool = False  # thinking.block_binding.prefix_mismatch_behavior = "drop_block"

    @classmethod
    def for_model(
        cls, accepts: Accepts, *, effort: str | None, display: str | None, drop_invalid: bool = False
    ) -> ThinkingConfig:
        """Only what `accepts` allows: an unknown model (no table entry) gets `Accepts()`, so nothing."""
        if accepts.thinking != "adaptive":
            return cls(effort=effort if effort in accepts.efforts else None)
        thinking: dict[str, Any] = {"type": "adaptive"}
        if display and accepts.display:
            thinking["display"] = display
        if drop_invalid and accepts.binds_thinking:
            thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
        bound = drop_invalid and accepts.binds_thinking
        return cls(thinking, effort if effort in accepts.efforts else None, bound)


# -- request ------------------------------------------------------------------


def _image(block: ImageBlock) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}


def _block_to_wire(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock | SummaryBlock):
        return {"type": "text", "text": block.text} if block.text.strip() else None
    if isinstance(block, ToolUse):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    if isinstance(block, ImageBlock):
        return _image(block)
    if isinstance(block, ToolResult):
        content: str | list[dict[str, Any]] = block.content
        if block.images:  # the text, then the images it read (a tool_result's content may hold both)
            content = [{"type": "text", "text": block.content}, *(_image(i) for i in block.images)]
        return {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": content,
            "is_error": block.is_error,
        }
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ServerToolBlock) and block.provider == ANTHROPIC.name:
        wire: dict[str, Any] = json.loads(block.wire)  # verbatim, as the API requires
        return wire
    return None  # an OpenAI reasoning item: another provider's, not ours to send


def _wire_messages(
    messages: tuple[Message, ...], marked: Sequence[int | None] = (), *, compaction: bool = True
) -> tuple[list[dict[str, Any]], list[int | None]]:
    """The wire turns, and for each index of `marked` the turn that ends with that message (None when
    it shares its turn with a later message, or there is none)."""
    turns: list[dict[str, Any]] = []
    ends: list[int | None] = [None] * len(marked)
    for i, message in enumerate(messages):
        native = message.native
        blocks = [b for b in (_block_to_wire(x) for x in message.content) if b is not None]
        if native is not None and native.provider == ANTHROPIC.name:
            if compaction:
                turns.append({"role": "assistant", "content": [json.loads(native.wire)]})
            elif native.text.strip():
                blocks.insert(
                    0, {"type": "text", "text": f"[Earlier conversation, summarized]\n{native.text}"}
                )
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].extend(blocks)
            # a later message joined a marked message's turn: its end is not stable
            ends = [None if end == len(turns) - 1 else end for end in ends]
        else:
            turns.append({"role": message.role, "content": blocks})
        ends = [len(turns) - 1 if i == index else end for index, end in zip(marked, ends, strict=True)]
    for turn in turns:
        if turn["role"] == "user":
            # Stable partition: the results answering the previous turn lead.
            content = turn["content"]
            turn["content"] = [b for b in content if b["type"] == "tool_result"] + [
                b for b in content if b["type"] != "tool_result"
            ]
    return turns, ends


def to_wire(
    request: Request,
    model: str,
    *,
    caching: bool,
    thinking: ThinkingConfig | None = None,
    compaction: bool = True,
    web_search: bool = False,
    written: WrittenPrefixes | None = None,
    at: float | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `messages.create` (without `stream`); `compaction`: the model reads the
    provider's compaction blocks (`native_support`); `web_search`: offer the provider's search;
    `written`: the prefixes the session's earlier requests wrote, at time `at` (seconds), to bridge
    to (and this request's are added to it)."""
    wire: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
    }
    messages = request.messages if web_search else without_searches(request.messages)
    options = request.options
    marked = (options.cache_anchor, options.cache_span_end, options.cache_checkpoint)
    wire["messages"], (anchor_turn, span_turn, hour_turn) = _wire_messages(
        messages, marked, compaction=compaction
    )
    if request.system:
        wire["system"] = [{"type": "text", "text": request.system}]
    if request.tools or web_search:
        tools = [dict(ANTHROPIC_SEARCH_TOOL)] if web_search else []
        wire["tools"] = tools
        tools += [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
            for t in request.tools
        ]
        if request.options.tool_choice == "none":
            wire["tool_choice"] = {"type": "none"}
    if thinking is not None:
        if thinking.thinking is not None:
            wire["thinking"] = dict(thinking.thinking)
        if thinking.effort:
            wire["output_config"] = {"effort": thinking.effort}
    if caching:
        place_marks(
            wire, anchor_turn, written, at,
            newest=options.cache_newest, span_end=span_turn, checkpoint=hour_turn,
        )  # fmt: skip
    betas = [BINDING_BETA] if thinking is not None and thinking.drop_invalid else []
    if compaction and any(
        m.native is not None and m.native.provider == ANTHROPIC.name for m in request.messages
    ):
        betas.append(COMPACT_BETA)
    if betas:
        wire["extra_headers"] = {"anthropic-beta": ",".join(betas)}
    return wire


# -- response -----------------------------------------------------------------


def _usage(data: object) -> tuple[Usage, tuple[str, ...]]:
    """The report's figures, each a token count or unknown (`usage.UsageReading`), and a note."""
    read = UsageReading()
    # Searches are counted apart (billed per use); absent when none ran, so not read as a figure.
    searches = token_count(mapping(mapping(data).get("server_tool_use")).get("web_search_requests"))
    usage = Usage(
        input_tokens=read.figure(data, "input_tokens"),
        output_tokens=read.figure(data, "output_tokens"),
        cache_read_tokens=read.figure(data, "cache_read_input_tokens"),
        cache_write_tokens=read.figure(data, "cache_creation_input_tokens"),
        reasoning_tokens=read.figure(data, "output_tokens_details", "thinking_tokens"),
        web_searches=searches or 0,
    )
    note = read.note(ANTHROPIC.name)
    return usage, (note,) if note else ()


def reply_usage(data: object) -> Usage:
    """A usage report's figures (a compaction reply's, which `from_wire` does not read)."""
    return _usage(data)[0]


def _stop(reason: str) -> StopReason:
    if reason == _WINDOW_FULL:
        raise ContextOverflowError(
            "the conversation filled the model's context window before the reply was complete "
            f"(stop_reason {_WINDOW_FULL})"
        )
    return _STOP_REASONS.get(reason, "end_turn")


def _block_from_wire(item: Mapping[str, Any], partial_json: str | None = None) -> Block | None:
    kind = item.get("type")
    if kind == "text":
        return TextBlock(str(item["text"])) if item.get("text") else None
    if kind == "tool_use":
        raw = partial_json if partial_json is not None else ""
        arguments = tool_arguments(raw) if raw.strip() else dict(item.get("input") or {})
        return ToolUse(str(item.get("id")), str(item.get("name")), arguments)
    if kind == "thinking":  # kept even when its text is empty: the signature is the reasoning
        return ThinkingBlock(str(item.get("thinking") or ""), str(item.get("signature") or ""))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(str(item.get("data") or ""))
    if kind == "server_tool_use" and partial_json is not None and partial_json.strip():
        item = {**item, "input": tool_arguments(partial_json)}  # streamed: its input came as deltas
    return server_block(ANTHROPIC.name, item)


def from_wire(data: Mapping[str, Any], model: str = "") -> Completion:
    """A Completion from a non-streamed Messages API response body."""
    reason = data.get("stop_reason")
    if not reason:
        raise TransientError(_CUT_SHORT)
    blocks = [b for b in (_block_from_wire(item) for item in data.get("content") or []) if b is not None]
    usage, notes = _usage(data.get("usage"))
    return Completion(
        message=Message.of("assistant", blocks),
        stop_reason=_stop(str(reason)),
        usage=usage,
        model=str(data.get("model") or model),
        notes=notes,
    )


class StreamAssembler:
    """Builds one Completion from raw stream events (as dicts), in arrival order.

    `feed` returns what to show of a text or thinking delta, else None. `finish`
    raises TransientError if the stream never said why it stopped: a stream
    cut short must never look like a complete (shorter) answer.
    """

    def __init__(self, model: str = "") -> None:
        self.model = model
        self._blocks: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None

    def feed(self, event: Mapping[str, Any]) -> TextDelta | ThinkingDelta | None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.model = str(message.get("model") or self.model)
            self._usage.update({k: v for k, v in mapping(message.get("usage")).items() if v is not None})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            block["_json"] = ""
            self._blocks[int(event.get("index", len(self._blocks)))] = block
        elif kind == "content_block_delta":
            return self._delta(event)
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason") or self._stop
            # message_delta usage is cumulative: it overrides message_start's.
            self._usage.update({k: v for k, v in mapping(event.get("usage")).items() if v is not None})
        return None

    def _delta(self, event: Mapping[str, Any]) -> TextDelta | ThinkingDelta | None:
        block = self._blocks.setdefault(int(event.get("index", 0)), {"type": "text", "text": "", "_json": ""})
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text") or "")
            block["text"] = str(block.get("text") or "") + text
            return TextDelta(text) if text else None
        if kind == "thinking_delta":
            text = str(delta.get("thinking") or "")
            block["thinking"] = str(block.get("thinking") or "") + text
            return ThinkingDelta(text) if text else None
        if kind == "signature_delta":
            block["signature"] = str(block.get("signature") or "") + str(delta.get("signature") or "")
        elif kind == "input_json_delta":
            block["_json"] += str(delta.get("partial_json") or "")
        return None

    def finish(self) -> Completion:
        if not self._stop:
            raise TransientError(_CUT_SHORT)
        stop = _stop(self._stop)
        blocks: list[Block] = []
        for _, item in sorted(self._blocks.items()):
            block = _block_from_wire(item, item.get("_json", ""))
            if block is not None:
                blocks.append(block)
        usage, notes = _usage(self._usage)
        return Completion(Message.of("assistant", blocks), stop, usage, self.model, notes)

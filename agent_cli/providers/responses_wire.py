"""The OpenAI Responses API on the wire: input items out, output items in (pure, over plain dicts).

Requests are stateless, as Codex sends them: `store=false`, the whole
conversation as input items on every request, and reasoning items passed
back with their `encrypted_content` (`include=["reasoning.encrypted_content"]`)
so the model keeps its reasoning between tool calls. Each item goes back with
the fields the API reference gives it, as the API returned it:

    reasoning             id, summary, encrypted_content (all three: `id` and `summary` are
                          required, and an id without encrypted_content refers to a stored item,
                          which with store=false does not exist; one without encrypted_content
                          is not sent)
    function_call         call_id, name, arguments; and its own `id` (`fc_...`) only beside the
                          reasoning item it came with: the API refuses an id whose reasoning
                          item is missing
    message (assistant)   role, output_text parts (no id: we keep none, and it is optional)
    function_call_output  call_id, output (first in a user turn)
    message (user)        role, input_text parts (user text and records)
    system prompt         instructions
    web_search_call       the provider's search (`web_search=True`: `{"type": "web_search"}` leads
                          the tools; `server_search.py`), kept and sent back as it came; another
                          provider's is not sent, nor any to a request without the tool
    native record         the whole output of `/responses/compact` (the user's messages and the
                          `compaction` item), as it came, in place of what it compacted; then our
                          carrier of the record as a user message. Another provider's is not sent

Replies: `StreamAssembler` reads the stream events (`response.output_item.*`,
`response.output_text.delta`, `response.function_call_arguments.delta`,
`response.reasoning_summary_text.delta`, and the terminal `response.completed`,
`response.incomplete`, `response.failed` or `error`); `from_wire` reads a
non-streamed response. A failed response is raised as the error tree's member
(`context_length_exceeded` is a ContextOverflowError, as over HTTP).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.core.errors import FatalProviderError, ProviderError, TransientError
from agent_cli.core.images import ImageBlock, data_url
from agent_cli.core.messages import (
    RAW_ARGUMENTS,
    Block,
    Message,
    ServerToolBlock,
    SummaryBlock,
    TextBlock,
    ToolResult,
    ToolUse,
    Usage,
    new_id,
    tool_arguments,
)
from agent_cli.core.requests import Completion, Request, StopReason, TextDelta, ThinkingDelta
from agent_cli.core.thought_blocks import ReasoningBlock
from agent_cli.providers.errors import classify_http
from agent_cli.providers.registry import OPENAI
from agent_cli.providers.server_search import OPENAI_SEARCH_TOOL, server_block, without_searches
from agent_cli.providers.usage import UsageReading

__all__ = ["ReasoningConfig", "StreamAssembler", "from_wire", "reply_usage", "to_wire"]

_CUT_SHORT = "stream ended before response.completed"
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


@dataclass(frozen=True, slots=True)
class ReasoningConfig:
    """The request's `reasoning` object: sent only to models the table knows to reason."""

    effort: str | None = None
    summary: bool = True  # ask for reasoning summaries (what the REPL shows between tool calls)


# -- request ------------------------------------------------------------------


def _image(block: ImageBlock) -> dict[str, Any]:
    return {"type": "input_image", "image_url": data_url(block), "detail": "auto"}


def _user_parts(blocks: list[Block]) -> list[dict[str, Any]]:
    """A user message's text and images, in order (a tool result's images go with its output)."""
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if isinstance(b, TextBlock | SummaryBlock) and b.text.strip():
            parts.append({"type": "input_text", "text": b.text})
        elif isinstance(b, ImageBlock):
            parts.append(_image(b))
    return parts


def _result_text(result: ToolResult) -> str:
    if result.is_error and not result.content.lstrip().lower().startswith("error"):
        return f"Error: {result.content}"
    return result.content


def _assistant_items(blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    reasoned = False  # a reasoning item of this reply goes back: its calls may carry their own ids
    for block in blocks:
        if isinstance(block, ReasoningBlock):
            if not block.encrypted_content:
                continue  # nothing to replay statelessly; its id alone would name a stored item
            summary = [{"type": "summary_text", "text": t} for t in block.summary]
            item = {"type": "reasoning", "id": block.id, "summary": summary}
            items.append({**item, "encrypted_content": block.encrypted_content})
            reasoned = True
        elif isinstance(block, TextBlock | SummaryBlock) and block.text.strip():
            content = [{"type": "output_text", "text": block.text}]
            items.append({"type": "message", "role": "assistant", "content": content})
        elif isinstance(block, ToolUse):
            arguments = block.input.get(RAW_ARGUMENTS) if set(block.input) == {RAW_ARGUMENTS} else None
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(dict(block.input)),
            }
            if block.item_id and reasoned:
                call["id"] = block.item_id
            items.append(call)
        elif isinstance(block, ServerToolBlock) and block.provider == OPENAI.name:
            items.append(json.loads(block.wire))  # verbatim, as it came
    # A reasoning item goes back only with the item that followed it (the API refuses one alone).
    while items and items[-1].get("type") == "reasoning":
        items.pop()
    return items


def input_items(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        native = message.native
        if native is not None and native.provider == OPENAI.name:
            items.extend(json.loads(native.wire))
        if message.role == "assistant":
            items.extend(_assistant_items(message.content))
            continue
        for block in message.content:
            if isinstance(block, ToolResult):
                output: str | list[dict[str, Any]] = _result_text(block)
                if block.images:  # the output as a list: its text, then the images it read
                    output = [{"type": "input_text", "text": output}, *(_image(i) for i in block.images)]
                items.append({"type": "function_call_output", "call_id": block.tool_use_id, "output": output})
        parts = _user_parts(list(message.content))
        if parts:
            items.append({"type": "message", "role": "user", "content": parts})
    return items


def to_wire(
    request: Request, model: str, *, reasoning: ReasoningConfig | None = None, web_search: bool = False
) -> dict[str, Any]:
    """Keyword arguments for `responses.create` (without `stream`); `web_search`: offer the
    provider's search."""
    wire: dict[str, Any] = {
        "model": model,
        "input": input_items(request.messages if web_search else without_searches(request.messages)),
        "max_output_tokens": request.max_tokens,
        "store": False,
    }
    if request.system:
        wire["instructions"] = request.system
    if request.tools or web_search:
        wire["tools"] = [dict(OPENAI_SEARCH_TOOL)] if web_search else []
        wire["tools"] += [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.input_schema),
                "strict": False,
            }
            for t in request.tools
        ]
        wire["tool_choice"] = request.options.tool_choice
    if reasoning is not None:
        body: dict[str, Any] = {}
        if reasoning.effort:
            body["effort"] = reasoning.effort
        if reasoning.summary:
            body["summary"] = "auto"
        wire["reasoning"] = body
        wire["include"] = ["reasoning.encrypted_content"]
    return wire


# -- response -----------------------------------------------------------------


def reply_usage(data: object) -> Usage:
    """A usage report's figures (a compacted response's, which `from_wire` does not read)."""
    return _usage(data)[0]


def _usage(data: object) -> tuple[Usage, tuple[str, ...]]:
    """The report's figures, each a token count or unknown (`usage.UsageReading`), and a note."""
    read = UsageReading()
    whole = read.figure(data, "input_tokens")
    cached = min(read.figure(data, "input_tokens_details", "cached_tokens"), whole)
    written = min(read.figure(data, "input_tokens_details", "cache_write_tokens"), whole - cached)
    usage = Usage(
        input_tokens=whole - cached - written,
        output_tokens=read.figure(data, "output_tokens"),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=read.figure(data, "output_tokens_details", "reasoning_tokens"),
    )
    note = read.note(OPENAI.name)
    return usage, (note,) if note else ()


def failure(error: Mapping[str, Any] | None) -> ProviderError:
    """A failed response or an `error` event as the error tree's member."""
    error = error or {}
    code = error.get("code") or error.get("type")
    message = str(error.get("message") or code or "the response failed")
    classified = classify_http(None, message, {}, code=str(code) if code else None, provider=OPENAI.name)
    # Codex's reading: a failed response is worth retrying unless it says overflow, auth or quota.
    if type(classified) is FatalProviderError and code != "insufficient_quota":
        return TransientError(str(classified))
    return classified


def _block(item: Mapping[str, Any]) -> Block | None:
    kind = item.get("type")
    if kind == "reasoning":
        summary = tuple(str(p.get("text") or "") for p in item.get("summary") or [] if isinstance(p, Mapping))
        encrypted = str(item.get("encrypted_content") or "")
        return ReasoningBlock(str(item.get("id") or new_id("rs")), encrypted, summary)
    if kind == "message":
        parts = [p for p in item.get("content") or [] if isinstance(p, Mapping)]
        text = "".join(str(p.get("text") or p.get("refusal") or "") for p in parts)
        return TextBlock(text) if text else None
    if kind == "function_call":
        arguments = tool_arguments(str(item.get("arguments") or ""))
        call_id = str(item.get("call_id") or new_id("call"))
        return ToolUse(call_id, str(item.get("name")), arguments, str(item.get("id") or ""))
    return server_block(OPENAI.name, item)


def _completion(response: Mapping[str, Any], items: Sequence[Mapping[str, Any]], model: str) -> Completion:
    blocks = [b for b in (_block(i) for i in items) if b is not None]
    stop: StopReason = "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"
    if response.get("status") == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        stop = "refusal" if reason == "content_filter" else "max_tokens"
    if not any(not isinstance(b, ReasoningBlock) for b in blocks) and stop == "end_turn":
        blocks = [b for b in blocks if not isinstance(b, ReasoningBlock)]  # reasoning alone: nothing said
    usage, notes = _usage(response.get("usage"))
    said = str(response.get("model") or model)
    return Completion(Message.of("assistant", blocks), stop, usage, said, notes)


def from_wire(data: Mapping[str, Any], model: str = "") -> Completion:
    """A Completion from a non-streamed response."""
    status = data.get("status")
    if status == "failed":
        raise failure(data.get("error"))
    if status not in ("completed", "incomplete"):
        raise TransientError(f"the response ended with status {status!r}")
    items = [i for i in data.get("output") or [] if isinstance(i, Mapping)]
    return _completion(data, items, model)


class StreamAssembler:
    """Builds one Completion from stream events (as dicts); the final items come from
    `response.output_item.done` (the one to pass back: `added` may hold partial reasoning)."""

    def __init__(self, model: str = "") -> None:
        self.model = model
        self._items: dict[int, dict[str, Any]] = {}
        self._response: Mapping[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> TextDelta | ThinkingDelta | None:
        kind = event.get("type")
        if kind == "response.created":
            self.model = str((event.get("response") or {}).get("model") or self.model)
        elif kind in ("response.output_item.added", "response.output_item.done"):
            index = int(event.get("output_index") or 0)
            item = dict(event.get("item") or {})
            streamed = self._items.get(index, {}).get("arguments")
            if item.get("type") == "function_call" and not item.get("arguments") and streamed:
                item["arguments"] = streamed
            self._items[index] = item
        elif kind == "response.output_text.delta":
            text = str(event.get("delta") or "")
            return TextDelta(text) if text else None
        elif kind == "response.reasoning_summary_text.delta":
            text = str(event.get("delta") or "")
            return ThinkingDelta(text) if text else None
        elif kind == "response.function_call_arguments.delta":
            item = self._items.setdefault(int(event.get("output_index") or 0), {"type": "function_call"})
            item["arguments"] = str(item.get("arguments") or "") + str(event.get("delta") or "")
        elif kind in _TERMINAL:
            self._response = event.get("response") or {}
            if kind == "response.failed":
                raise failure(self._response.get("error"))
        elif kind == "error":
            raise failure(event)
        return None

    def finish(self) -> Completion:
        if self._response is None:
            raise TransientError(_CUT_SHORT)
        items = [self._items[i] for i in sorted(self._items)]
        return _completion(self._response, items, self.model)

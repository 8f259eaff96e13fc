"""OpenAI's Chat Completions on the wire: messages out, a completion or its chunks in (pure, over dicts).

Two wires speak it (`registry.Wire`): `chat`, as OpenAI's own endpoint takes it, and
`chat-compatible`, as compatible servers (vLLM, llama.cpp, Ollama) take it. They differ in
one field name, the output cap: OpenAI's reference deprecates `max_tokens` for
`max_completion_tokens` (which counts reasoning tokens too; its reasoning models refuse the older
name), while Ollama's OpenAI compatibility lists only `max_tokens` and llama.cpp's server reads
`max_tokens` (its own `n_predict` besides): the older name is the one every compatible server takes.

Wire rules:
- the system prompt is the first `{"role": "system"}` message;
- consecutive same-role messages are merged first (strict chat templates of
  local servers reject two user turns in a row);
- `ToolResult` -> one `{"role": "tool"}` message each, before any user text of
  the same turn (they must follow the assistant's `tool_calls` directly);
  error results start with "Error: " so the model sees they failed (the wire
  has no is_error flag);
- `SummaryBlock` -> user text; assistant `ToolUse` -> `tool_calls` with the
  arguments as a JSON string;
- the request's `tool_choice` "none" sends `tool_choice: "none"` with the tools.

Tool-call arguments that are not a JSON object arrive as a `ToolUse` whose
input is `{RAW_ARGUMENTS: "<the text as sent>"}`: the call keeps its id (so the pair
stays valid) and the tool layer answers with a readable error. The adapter is `openai.py`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from agent_cli.core.errors import TransientError
from agent_cli.core.images import ImageBlock, data_url
from agent_cli.core.messages import (
    Block,
    Message,
    SummaryBlock,
    TextBlock,
    ToolResult,
    ToolUse,
    Usage,
    new_id,
    tool_arguments,
)
from agent_cli.core.requests import Completion, Request, StopReason, TextDelta, ThinkingDelta
from agent_cli.providers.registry import OPENAI, Wire
from agent_cli.providers.usage import UsageReading, mapping

__all__ = ["MAX_TOKENS_PARAM", "ChatWire", "ChunkAssembler", "chat_wire", "from_wire", "to_wire"]

ChatWire: TypeAlias = Literal["chat", "chat-compatible"]
# The output cap's field on each wire (see the module docstring).
MAX_TOKENS_PARAM: dict[ChatWire, str] = {"chat": "max_completion_tokens", "chat-compatible": "max_tokens"}


def chat_wire(wire: Wire) -> ChatWire:
    """`wire` as one of this module's two; ValueError for another API's."""
    if wire == "chat" or wire == "chat-compatible":
        return wire
    raise ValueError(f"{wire!r} is not a Chat Completions wire")


_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_CUT_SHORT = "stream ended before the message was complete"


# -- request ------------------------------------------------------------------


def _merged(messages: tuple[Message, ...]) -> list[tuple[str, list[Block]]]:
    turns: list[tuple[str, list[Block]]] = []
    for message in messages:
        if turns and turns[-1][0] == message.role:
            turns[-1][1].extend(message.content)
        else:
            turns.append((message.role, list(message.content)))
    return turns


def _text_of(blocks: list[Block]) -> str:
    parts = [b.text for b in blocks if isinstance(b, TextBlock | SummaryBlock) and b.text.strip()]
    return "\n\n".join(parts)


def _image_parts(blocks: list[Block]) -> list[dict[str, Any]]:
    """The images of a user turn, in order: its own, and those its tool results read (a tool message
    takes text only, so they ride in the user message that follows the results)."""
    images: list[ImageBlock] = []
    for b in blocks:
        if isinstance(b, ImageBlock):
            images.append(b)
        elif isinstance(b, ToolResult):
            images.extend(b.images)
    return [{"type": "image_url", "image_url": {"url": data_url(i)}} for i in images]


def _result_text(result: ToolResult) -> str:
    if result.is_error and not result.content.lstrip().lower().startswith("error"):
        return f"Error: {result.content}"
    return result.content


def to_wire(
    request: Request, model: str, *, wire: ChatWire = "chat", effort: str | None = None
) -> dict[str, Any]:
    """Keyword arguments for `chat.completions.create` (without `stream`), as `wire` takes them."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for role, blocks in _merged(request.messages):
        text = _text_of(blocks)
        if role == "user":
            for block in blocks:
                if isinstance(block, ToolResult):
                    messages.append(
                        {"role": "tool", "tool_call_id": block.tool_use_id, "content": _result_text(block)}
                    )
            images = _image_parts(blocks)
            if images:
                said = text or "[the images the tool results above read]"
                messages.append({"role": "user", "content": [{"type": "text", "text": said}, *images]})
            elif text:
                messages.append({"role": "user", "content": text})
            continue
        calls = [
            {
                "id": b.id,
                "type": "function",
                "function": {"name": b.name, "arguments": json.dumps(dict(b.input))},
            }
            for b in blocks
            if isinstance(b, ToolUse)
        ]
        if not text and not calls:
            continue
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
    body: dict[str, Any] = {"model": model, "messages": messages, MAX_TOKENS_PARAM[wire]: request.max_tokens}
    if effort:
        body["reasoning_effort"] = effort
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                },
            }
            for t in request.tools
        ]
        if request.options.tool_choice == "none":
            body["tool_choice"] = "none"
    return body


# -- response -----------------------------------------------------------------


def _usage(data: object) -> tuple[Usage, tuple[str, ...]]:
    """The report's figures, each a token count or unknown (`usage.UsageReading`), and a note."""
    read = UsageReading()
    prompt = read.figure(data, "prompt_tokens")
    cached = min(read.figure(data, "prompt_tokens_details", "cached_tokens"), prompt)
    output = read.figure(data, "completion_tokens")
    usage = Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)
    note = read.note(OPENAI.name)
    return usage, (note,) if note else ()


def _completion(
    text: str, calls: list[ToolUse], finish: str, usage: tuple[Usage, tuple[str, ...]], model: str
) -> Completion:
    blocks: list[Block] = [TextBlock(text)] if text else []
    blocks.extend(calls)
    stop = _FINISH.get(finish, "end_turn")
    if calls and stop == "end_turn":
        # Some compatible servers say "stop" after a tool call; the calls decide.
        stop = "tool_use"
    return Completion(Message.of("assistant", blocks), stop, usage[0], model, usage[1])


def from_wire(data: Mapping[str, Any], model: str = "") -> Completion:
    """A Completion from a non-streamed chat completion body."""
    choices = data.get("choices") or []
    if not choices or not choices[0].get("finish_reason"):
        raise TransientError(_CUT_SHORT)
    choice = choices[0]
    message = choice.get("message") or {}
    calls = [
        ToolUse(
            str(call.get("id") or new_id("call")),
            str((call.get("function") or {}).get("name") or ""),
            tool_arguments(str((call.get("function") or {}).get("arguments") or "")),
        )
        for call in message.get("tool_calls") or []
    ]
    text = str(message.get("content") or message.get("refusal") or "")
    return _completion(
        text, calls, str(choice["finish_reason"]), _usage(data.get("usage")), str(data.get("model") or model)
    )


class ChunkAssembler:
    """Builds one Completion from streamed chunks (as dicts), accumulating tool calls by index."""

    def __init__(self, model: str = "") -> None:
        self.model = model
        self._text: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._finish: str | None = None
        self._usage: Mapping[str, Any] | None = None

    def feed(self, chunk: Mapping[str, Any]) -> TextDelta | ThinkingDelta | None:
        """Take one chunk; return what to show of it, if anything.

        Compatible servers that think (vLLM, llama.cpp, Ollama with a reasoning
        model) stream the thinking as `reasoning_content` or `reasoning`: shown
        while it streams, not kept (they take no thinking back).
        """
        self.model = str(chunk.get("model") or self.model)
        if chunk.get("usage"):
            self._usage = mapping(chunk["usage"])
        shown: list[str] = []
        thought: list[str] = []
        for choice in chunk.get("choices") or []:
            if int(choice.get("index") or 0) != 0:
                continue
            delta = choice.get("delta") or {}
            piece = delta.get("content") or delta.get("refusal")
            if piece:
                self._text.append(str(piece))
                shown.append(str(piece))
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                thought.append(reasoning)
            for call in delta.get("tool_calls") or []:
                slot = self._calls.setdefault(
                    int(call.get("index") or 0), {"id": "", "name": "", "arguments": ""}
                )
                function = call.get("function") or {}
                if call.get("id"):
                    slot["id"] = str(call["id"])
                if function.get("name"):
                    slot["name"] += str(function["name"])
                if function.get("arguments"):
                    slot["arguments"] += str(function["arguments"])
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
        if shown:
            return TextDelta("".join(shown))
        return ThinkingDelta("".join(thought)) if thought else None

    def finish(self) -> Completion:
        if not self._finish:
            raise TransientError(_CUT_SHORT)
        calls = [
            ToolUse(slot["id"] or new_id("call"), slot["name"], tool_arguments(slot["arguments"]))
            for _, slot in sorted(self._calls.items())
        ]
        return _completion("".join(self._text), calls, self._finish, _usage(self._usage), self.model)

"""The Anthropic Messages API adapter: wire translation, stream assembly, error mapping.

The only module importing `anthropic` (lazily, inside functions). `to_wire`,
`from_wire` and `StreamAssembler` are pure over plain dicts (an SDK object is
turned into one with `model_dump()` first), so the translation is tested
without a network. The SDK's own retries are off: `providers.retry` retries,
including a stream that dies half way, which the SDK never retries.

Wire rules:
- consecutive same-role messages become one wire message (the context engine
  may produce them; the API wants turns); in a user turn tool results go first,
  as the API requires them to lead the message that answers the tool calls;
- `SummaryBlock` is a plain text block; empty text blocks are dropped (the API
  rejects them);
- prompt caching puts `cache_control` on the system block, the last tool and
  the last block of the last message (3 of the 4 breakpoints allowed);
- `options["tool_choice"] == "none"` sends `tool_choice: none` but keeps the
  tools, so the cached prefix stays byte-identical (used for summaries).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_cli.core.errors import ProviderError, TransientError
from agent_cli.core.messages import Block, Message, SummaryBlock, TextBlock, ToolUse, Usage
from agent_cli.providers.base import Completion, Request, StopReason
from agent_cli.providers.errors import body_message, classify_http
from agent_cli.providers.sdk_client import SDKProvider

__all__ = ["AnthropicProvider", "StreamAssembler", "from_wire", "load_sdk", "to_wire"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
_EPHEMERAL = {"type": "ephemeral"}
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "end_turn",
    # The output ran into the window: for the loop that is "out of output room".
    "model_context_window_exceeded": "max_tokens",
}
_CUT_SHORT = "stream ended before the message was complete"


# -- request ------------------------------------------------------------------


def _block_to_wire(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock | SummaryBlock):
        return {"type": "text", "text": block.text} if block.text.strip() else None
    if isinstance(block, ToolUse):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content,
        "is_error": block.is_error,
    }


def _wire_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        blocks = [b for b in (_block_to_wire(x) for x in message.content) if b is not None]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": message.role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            # Stable partition: the results answering the previous turn lead.
            content = turn["content"]
            turn["content"] = [b for b in content if b["type"] == "tool_result"] + [
                b for b in content if b["type"] != "tool_result"
            ]
    return turns


def to_wire(request: Request, model: str, *, caching: bool) -> dict[str, Any]:
    """Keyword arguments for `messages.create` (without `stream`)."""
    wire: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": _wire_messages(request.messages),
    }
    if request.system:
        system: dict[str, Any] = {"type": "text", "text": request.system}
        if caching:
            system["cache_control"] = dict(_EPHEMERAL)
        wire["system"] = [system]
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
            for t in request.tools
        ]
        if caching:
            tools[-1]["cache_control"] = dict(_EPHEMERAL)
        wire["tools"] = tools
        if request.options.get("tool_choice") == "none":
            wire["tool_choice"] = {"type": "none"}
    if caching and wire["messages"]:
        wire["messages"][-1]["content"][-1]["cache_control"] = dict(_EPHEMERAL)
    return wire


# -- response -----------------------------------------------------------------


def _usage(data: Mapping[str, Any] | None) -> Usage:
    data = data or {}
    return Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        cache_read_tokens=int(data.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(data.get("cache_creation_input_tokens") or 0),
    )


def _stop(reason: str) -> StopReason:
    return _STOP_REASONS.get(reason, "end_turn")


def from_wire(data: Mapping[str, Any], model: str = "") -> Completion:
    """A Completion from a non-streamed Messages API response body."""
    reason = data.get("stop_reason")
    if not reason:
        raise TransientError(_CUT_SHORT)
    blocks: list[Block] = []
    for item in data.get("content") or []:
        kind = item.get("type")
        if kind == "text" and item.get("text"):
            blocks.append(TextBlock(str(item["text"])))
        elif kind == "tool_use":
            blocks.append(ToolUse(str(item["id"]), str(item["name"]), dict(item.get("input") or {})))
    return Completion(
        message=Message.of("assistant", blocks),
        stop_reason=_stop(str(reason)),
        usage=_usage(data.get("usage")),
        model=str(data.get("model") or model),
    )


class StreamAssembler:
    """Builds one Completion from raw stream events (as dicts), in arrival order.

    `feed` returns the text to show for a text delta, else None. `finish`
    raises TransientError if the stream never said why it stopped: a stream
    cut short must never look like a complete (shorter) answer.
    """

    def __init__(self, model: str = "") -> None:
        self.model = model
        self._blocks: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None

    def feed(self, event: Mapping[str, Any]) -> str | None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.model = str(message.get("model") or self.model)
            self._usage.update({k: v for k, v in (message.get("usage") or {}).items() if v is not None})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            block["_json"] = ""
            self._blocks[int(event.get("index", len(self._blocks)))] = block
        elif kind == "content_block_delta":
            block = self._blocks.setdefault(
                int(event.get("index", 0)), {"type": "text", "text": "", "_json": ""}
            )
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                text = str(delta.get("text") or "")
                block["text"] = str(block.get("text") or "") + text
                return text or None
            if delta.get("type") == "input_json_delta":
                block["_json"] += str(delta.get("partial_json") or "")
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason") or self._stop
            # message_delta usage is cumulative: it overrides message_start's.
            self._usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        return None

    def finish(self) -> Completion:
        if not self._stop:
            raise TransientError(_CUT_SHORT)
        blocks: list[Block] = []
        for _, block in sorted(self._blocks.items()):
            if block.get("type") == "text" and block.get("text"):
                blocks.append(TextBlock(str(block["text"])))
            elif block.get("type") == "tool_use":
                raw = block["_json"]
                try:
                    parsed = json.loads(raw) if raw.strip() else dict(block.get("input") or {})
                except json.JSONDecodeError:
                    parsed = {"_raw": raw}
                if not isinstance(parsed, dict):
                    parsed = {"_raw": raw}
                blocks.append(ToolUse(str(block.get("id")), str(block.get("name")), parsed))
        return Completion(Message.of("assistant", blocks), _stop(self._stop), _usage(self._usage), self.model)


def load_sdk() -> None:
    """Import the SDK (about a second on a small machine); later imports are free."""
    import anthropic  # noqa: F401
    import httpx2  # noqa: F401


# -- errors -------------------------------------------------------------------


def _classify(exc: BaseException) -> ProviderError | None:
    """The error-tree member for an exception from the SDK or its transport, or None."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        # An SSE `error` event arrives on a 200 response: the body's type decides.
        status = exc.status_code if exc.status_code >= 400 else None
        message = body_message(exc.body, exc.api_message or "") or exc.api_message or ""
        return classify_http(status, message, exc.response.headers, code=exc.type, provider="anthropic")
    if isinstance(exc, anthropic.APITimeoutError):
        return TransientError("anthropic: the request timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return TransientError(f"anthropic: connection failed: {exc.message}")
    if isinstance(exc, httpx2.TimeoutException):
        return TransientError("anthropic: the stream stalled (read timed out)")
    if isinstance(exc, httpx2.RequestError):
        return TransientError(f"anthropic: connection lost mid-stream ({type(exc).__name__})")
    if isinstance(exc, json.JSONDecodeError):
        return TransientError("anthropic: the stream sent a malformed event")
    return None


# -- provider -----------------------------------------------------------------


class AnthropicProvider(SDKProvider):
    """`Provider` for the Anthropic Messages API (or anything serving it at `base_url`)."""

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 600.0,
        prompt_caching: bool = True,
        streaming: bool = True,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout=timeout,
            streaming=streaming,
        )
        self.prompt_caching = prompt_caching

    def _new_client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(
            api_key=self._api_key, base_url=self._base_url, timeout=self._timeout, max_retries=0
        )

    def _to_wire(self, request: Request) -> dict[str, Any]:
        return to_wire(request, self._model, caching=self.prompt_caching)

    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        return (
            self._sdk().messages.create(**wire, stream=True)
            if stream
            else self._sdk().messages.create(**wire)
        )

    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        return from_wire(body, self._model)

    def _assembler(self) -> StreamAssembler:
        return StreamAssembler(self._model)

    @staticmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        return _classify(exc)

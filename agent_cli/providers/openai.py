"""The OpenAI Chat Completions adapter: wire translation, stream assembly, error mapping.

It imports `openai` lazily, inside functions (so does `openai_responses.py`, its sibling for
the Responses API; no other module does). With a `base_url` it drives any compatible server
(vLLM, llama.cpp, Ollama). `to_wire`, `from_wire` and `ChunkAssembler` are pure over plain dicts.

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
- `max_completion_tokens` for api.openai.com, `max_tokens` for other servers
  (compatible servers, llmock included, know only the older name);
- `options["tool_choice"] == "none"` sends `tool_choice: "none"` with the tools.

Tool-call arguments that are not a JSON object arrive as a `ToolUse` whose
input is `{RAW_ARGUMENTS: "<the text as sent>"}`: the call keeps its id (so the pair
stays valid) and the tool layer answers with a readable error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_cli.core.errors import FatalProviderError, ProviderError, StalledError, TransientError
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
from agent_cli.providers.errors import body_message, classify_http
from agent_cli.providers.sdk_client import STALL_SECONDS, SDKProvider
from agent_cli.providers.usage import UsageReading, mapping

__all__ = ["ChunkAssembler", "OpenAIProvider", "from_wire", "load_sdk", "to_wire"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
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


def _result_text(result: ToolResult) -> str:
    if result.is_error and not result.content.lstrip().lower().startswith("error"):
        return f"Error: {result.content}"
    return result.content


def to_wire(
    request: Request,
    model: str,
    *,
    max_tokens_param: str = "max_completion_tokens",
    effort: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `chat.completions.create` (without `stream`)."""
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
            if text:
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
    wire: dict[str, Any] = {"model": model, "messages": messages, max_tokens_param: request.max_tokens}
    if effort:
        wire["reasoning_effort"] = effort
    if request.tools:
        wire["tools"] = [
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
        if request.options.get("tool_choice") == "none":
            wire["tool_choice"] = "none"
    return wire


# -- response -----------------------------------------------------------------


def _usage(data: object) -> tuple[Usage, tuple[str, ...]]:
    """The report's figures, each a token count or unknown (`usage.UsageReading`), and a note."""
    read = UsageReading()
    prompt = read.figure(data, "prompt_tokens")
    cached = min(read.figure(data, "prompt_tokens_details", "cached_tokens"), prompt)
    output = read.figure(data, "completion_tokens")
    usage = Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)
    note = read.note("openai")
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


# -- errors -------------------------------------------------------------------


def load_sdk() -> None:
    """Import the SDK (about a second on a small machine); later imports are free."""
    import httpx2  # noqa: F401
    import openai  # noqa: F401


def _error_code(exc: Any) -> str | None:
    """The error's code, or its type when the code is only a number (llama.cpp sends `"code": 400`)."""
    code = getattr(exc, "code", None)
    if code is None or str(code).isdigit():
        return getattr(exc, "type", None) or (None if code is None else str(code))
    return str(code)


def classify(exc: BaseException) -> ProviderError | None:
    """The error-tree member for an exception from the SDK or its transport, or None."""
    import httpx2
    import openai

    if isinstance(exc, openai.APIStatusError):
        message = body_message(exc.body, exc.message)
        return classify_http(
            exc.status_code, message, exc.response.headers, code=_error_code(exc), provider="openai"
        )
    if isinstance(exc, openai.APITimeoutError):
        return StalledError("openai: the request timed out (no answer in time)")
    if isinstance(exc, openai.APIConnectionError):
        return TransientError(f"openai: connection failed: {exc.message}")
    if isinstance(exc, openai.APIError):
        # An error object inside a stream (no HTTP status): retry unless it says overflow/auth.
        error = classify_http(None, exc.message, {}, code=_error_code(exc), provider="openai")
        return TransientError(str(error)) if isinstance(error, FatalProviderError) else error
    if isinstance(exc, httpx2.TimeoutException):
        return StalledError("openai: the stream stalled (nothing received for a while)")
    if isinstance(exc, httpx2.RequestError):
        return TransientError(f"openai: connection lost mid-stream ({type(exc).__name__})")
    if isinstance(exc, json.JSONDecodeError):
        return TransientError("openai: the stream sent a malformed chunk")
    return None


# -- provider -----------------------------------------------------------------


class OpenAIProvider(SDKProvider):
    """`Provider` for OpenAI Chat Completions and compatible servers."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 1800.0,
        stall: float = STALL_SECONDS,
        streaming: bool = True,
        effort: str | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout=timeout,
            stall=stall,
            streaming=streaming,
        )
        self._max_tokens_param = "max_completion_tokens" if base_url is None else "max_tokens"
        self.effort = effort

    def _new_client(self) -> Any:
        import openai

        return openai.OpenAI(
            api_key=self._api_key,
            base_url=self._base_url,
            timeout=self._timeouts(),
            max_retries=0,
            http_client=self._http_client(openai.DefaultHttpxClient),
        )

    def _to_wire(self, request: Request) -> dict[str, Any]:
        return to_wire(request, self._model, max_tokens_param=self._max_tokens_param, effort=self.effort)

    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        completions = self._sdk().chat.completions
        if not stream:
            return completions.create(**wire)
        return completions.create(**wire, stream=True, stream_options={"include_usage": True})

    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        return from_wire(body, self._model)

    def _assembler(self) -> ChunkAssembler:
        return ChunkAssembler(self._model)

    @staticmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        return classify(exc)

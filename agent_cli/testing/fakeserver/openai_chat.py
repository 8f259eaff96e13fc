"""OpenAI Chat Completions (POST .../chat/completions) as the fake speaks it; implements `WireApi`.

The prompt's prefix order is tools, then messages; nothing is cached. Requests are rejected as the
real API does: no messages, a tool message that answers no open tool call, an assistant's tool
calls not all answered before the next message. Errors come as `{"error": {"message", "type",
"param", "code"}}`; a stream is `data:` chunks, a last chunk with usage and no choices, then
`data: [DONE]`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from .script import Fault, Reply
from .wire import JSON, Admission, Caching, arguments, default_message, neutral_stop, pieces, total

__all__ = [
    "CACHING",
    "NAME",
    "PATH",
    "admit",
    "auth_fault",
    "error_body",
    "error_event",
    "events",
    "frame",
    "message",
    "overflow_events",
    "overflow_fault",
    "paused_key",
    "units",
    "without_stop",
]

NAME = "openai"
PATH = "/chat/completions"
CACHING: Caching = "none"

_FINISH_REASONS = {  # neutral stop -> finish_reason; other words are sent as given
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
    "stop_sequence": "stop",
}
_DONE: JSON = {"done": True}  # the end of the stream, framed as `data: [DONE]`


def units(body: JSON) -> list[JSON]:
    found = [dict(t) for t in body.get("tools") or []]
    for message in body.get("messages") or []:
        text = message.get("content")
        if text:
            found.append({"type": "text", "text": text if isinstance(text, str) else json.dumps(text)})
        if message.get("tool_calls"):
            found.append({"type": "tool_calls", "calls": message["tool_calls"]})
    return found


def admit(
    body: JSON, headers: Mapping[str, str], key: bytes, paused: frozenset[str] = frozenset()
) -> Admission | Fault:
    problem = _problem(body)
    return Fault(400, problem) if problem else Admission(body, headers, key)


def _problem(body: JSON) -> str | None:
    messages = body.get("messages") or []
    if not messages:
        return "[] is too short - 'messages'"
    open_calls: set[str] = set()
    answering = False
    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if not answering or call_id not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'."
                )
            open_calls.discard(call_id)
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(sorted(open_calls))}"
            )
        open_calls = {str(c.get("id")) for c in message.get("tool_calls") or []}
        answering = bool(open_calls)
    if open_calls:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: "
            f"{', '.join(sorted(open_calls))}"
        )
    return None


def paused_key(body: JSON, events: list[JSON]) -> str | None:
    return None  # this API has no paused turns


def auth_fault(key: str) -> Fault:
    return Fault(401, f"Incorrect API key provided: {key[:4]}****.", kind="invalid_api_key")


def overflow_fault(estimate: int, window: int) -> Fault:
    return Fault(
        400,
        f"This model's maximum context length is {window} tokens. However, "
        f"your messages resulted in {estimate} tokens. Please reduce the length "
        "of the messages.",
        kind="context_length_exceeded",
    )


def overflow_events(fault: Fault, admission: Admission) -> list[JSON] | None:
    return None


def error_body(fault: Fault) -> JSON:
    if fault.message:
        text = fault.message
    else:
        text = "Incorrect API key provided." if fault.status == 401 else default_message(fault.status)
    if fault.status >= 500:
        kind = "server_error"
    else:
        kind = "requests" if fault.status == 429 else "invalid_request_error"
    code = fault.kind or ("rate_limit_exceeded" if fault.status == 429 else None)
    param = "messages" if code == "context_length_exceeded" else None
    return {"error": {"message": text, "type": kind, "param": param, "code": code}}


def events(reply: Reply, admission: Admission, usage: Mapping[str, Any], size: int) -> list[JSON]:
    model = str(admission.body.get("model", ""))
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "usage": None,
    }

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    stream = [chunk({"role": "assistant", "content": "", "refusal": None})]
    stream += [chunk({"content": piece}) for piece in pieces(reply.text, size)]
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id or f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        stream.append(chunk({"tool_calls": [head]}))
        stream += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in pieces(arguments(call), size) or [""]
        ]
    neutral = neutral_stop(reply)
    stream.append(chunk({}, _FINISH_REASONS.get(neutral, neutral)))
    prompt = total(usage["input_tokens"], usage["cache_read_tokens"], usage["cache_write_tokens"])
    stream.append(
        {
            **base,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": usage["output_tokens"],
                "total_tokens": total(prompt, usage["output_tokens"]),
                "prompt_tokens_details": {"cached_tokens": usage["cache_read_tokens"], "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
        }
    )
    stream.append(_DONE)
    return stream


def message(events: list[JSON], *, truncated: bool) -> JSON:
    text, finish, usage = "", None, None
    calls: dict[int, JSON] = {}
    for event in events:
        if event.get("usage"):
            usage = event["usage"]
        for choice in event.get("choices") or []:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    call["index"],
                    {"id": call.get("id"), "type": "function", "function": {"name": "", "arguments": ""}},
                )
                slot["function"]["name"] += call.get("function", {}).get("name", "")
                slot["function"]["arguments"] += call.get("function", {}).get("arguments", "")
            finish = choice.get("finish_reason") or finish
    answer: JSON = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        answer["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": events[0]["id"],
        "object": "chat.completion",
        "created": events[0]["created"],
        "model": events[0]["model"],
        "system_fingerprint": "fp_fake",
        "choices": [
            {"index": 0, "message": answer, "logprobs": None, "finish_reason": None if truncated else finish}
        ],
        "usage": usage,
    }


def without_stop(events: list[JSON]) -> list[JSON]:
    def finishes(event: JSON) -> bool:
        return any(c.get("finish_reason") for c in event.get("choices") or [])

    return [e for e in events if e != _DONE and not e.get("usage") and not finishes(e)]


def error_event(kind: str, message: str, replaced: JSON) -> JSON:
    return {"error": {"type": kind, "message": message}}


def frame(event: JSON) -> str:
    return "data: [DONE]\n\n" if event == _DONE else f"data: {json.dumps(event)}\n\n"

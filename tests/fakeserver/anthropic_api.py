"""The Anthropic Messages API (POST /v1/messages) as the fake speaks it; implements `WireApi`.

The prompt's prefix order is tools, system, messages, and prompt caching is simulated at
`cache_control` breakpoints. Requests are rejected as the real API does: no messages, no
max_tokens, an empty text block, a tool_result without the tool_use before it, a tool_use whose
result is not in the next message, more than four cache_control breakpoints. Errors come as
`{"type": "error", "error": {"type", "message"}}`; a stream is `event:`/`data:` frames from
message_start to message_stop.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping

from .script import Fault, Reply
from .wire import JSON, arguments, blocks, default_message, neutral_stop, pieces

__all__ = [
    "CACHES_PROMPTS",
    "NAME",
    "PATH",
    "auth_fault",
    "error_body",
    "error_event",
    "events",
    "frame",
    "message",
    "overflow_fault",
    "units",
    "validate",
    "without_stop",
]

NAME = "anthropic"
PATH = "/v1/messages"
CACHES_PROMPTS = True

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def units(body: JSON) -> list[JSON]:
    found = [dict(t) for t in body.get("tools") or []]
    system = body.get("system")
    found += blocks(system) if system else []
    for message in body.get("messages") or []:
        found += [{**b, "_role": message.get("role")} for b in blocks(message.get("content"))]
    return found


def validate(body: JSON) -> str | None:
    messages = body.get("messages")
    if not messages:
        return "messages: at least one message is required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    marks = sum(1 for u in [*blocks(body.get("system")), *(body.get("tools") or [])] if "cache_control" in u)
    previous_uses: set[str] = set()
    for i, message in enumerate(messages):
        content = blocks(message.get("content"))
        marks += sum(1 for b in content if "cache_control" in b)
        if any(b.get("type") == "text" and not str(b.get("text", "")).strip() for b in content):
            return "messages: text content blocks must be non-empty"
        results = {str(b.get("tool_use_id")) for b in content if b.get("type") == "tool_result"}
        for j, block in enumerate(content):
            if block.get("type") == "tool_result" and str(block.get("tool_use_id")) not in previous_uses:
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
        missing = sorted(previous_uses - results)
        if missing:
            return (
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."
            )
        previous_uses = {str(b.get("id")) for b in content if b.get("type") == "tool_use"}
    if previous_uses:
        return (
            f"messages.{len(messages)}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(sorted(previous_uses))}."
        )
    if marks > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {marks}."
    return None


def auth_fault(key: str) -> Fault:
    return Fault(401, "invalid x-api-key")


def overflow_fault(estimate: int, window: int) -> Fault:
    return Fault(400, f"prompt is too long: {estimate} tokens > {window} maximum")


def error_body(fault: Fault) -> JSON:
    kind = fault.kind or _ERROR_TYPES.get(
        fault.status, "api_error" if fault.status >= 500 else "invalid_request_error"
    )
    message = fault.message or default_message(fault.status)
    return {"type": "error", "error": {"type": kind, "message": message}}


def events(reply: Reply, usage: Mapping[str, int], model: str, size: int) -> list[JSON]:
    stream: list[JSON] = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "cache_creation_input_tokens": usage["cache_write_tokens"],
                    "cache_read_input_tokens": usage["cache_read_tokens"],
                    "output_tokens": 1,
                },
            },
        }
    ]
    index = 0
    # A reply with only tool calls has no text block; an empty reply still has one, as the API sends.
    if reply.text or not reply.tool_calls:
        stream.append(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        )
        stream.append({"type": "ping"})
        stream += [
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
            for piece in pieces(reply.text, size)
        ]
        stream.append({"type": "content_block_stop", "index": 0})
        index = 1
    for offset, call in enumerate(reply.tool_calls):
        at = index + offset
        block = {
            "type": "tool_use",
            "id": call.id or f"toolu_{uuid.uuid4().hex[:24]}",
            "name": call.name,
            "input": {},
        }
        stream.append({"type": "content_block_start", "index": at, "content_block": block})
        stream += [
            {
                "type": "content_block_delta",
                "index": at,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in ["", *pieces(arguments(call), size)]
        ]
        stream.append({"type": "content_block_stop", "index": at})
    stream.append(
        {
            "type": "message_delta",
            # The neutral stop words are Anthropic's own; any other word is sent as given.
            "delta": {"stop_reason": neutral_stop(reply), "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    stream.append({"type": "message_stop"})
    return stream


def message(events: list[JSON], *, truncated: bool) -> JSON:
    body: JSON = dict(events[0]["message"])
    content_blocks: dict[int, JSON] = {}
    for event in events:
        if event["type"] == "content_block_start":
            content_blocks[event["index"]] = {**event["content_block"], "_json": ""}
        elif event["type"] == "content_block_delta":
            delta, block = event["delta"], content_blocks[event["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["_json"] += delta["partial_json"]
        elif event["type"] == "message_delta":
            body["stop_reason"] = event["delta"]["stop_reason"]
            body["usage"] = {**body["usage"], **event["usage"]}
    content = []
    for _, block in sorted(content_blocks.items()):
        raw = block.pop("_json")
        if block["type"] == "tool_use":
            try:
                block["input"] = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                block["input"] = {"_raw": raw}  # the real API never sends broken input when not streaming
        content.append(block)
    body["content"] = content
    if truncated:
        body["stop_reason"] = None
    return body


def without_stop(events: list[JSON]) -> list[JSON]:
    return [e for e in events if e.get("type") not in {"message_delta", "message_stop"}]


def error_event(kind: str, message: str) -> JSON:
    return {"type": "error", "error": {"type": kind, "message": message}}


def frame(event: JSON) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

"""The Anthropic Messages API (POST /v1/messages) as the fake speaks it; implements `WireApi`.

The prompt's prefix order is tools, system, messages, and prompt caching is simulated at
`cache_control` breakpoints (thinking blocks are ordinary units of the prefix). Requests are
rejected as the real API does: no messages, no max_tokens, an empty text block, a tool_result
without the tool_use before it, a tool_use whose result is not in the next message, more than four
cache_control breakpoints; then what a thinking model refuses (`model_rules`) and replayed thinking
that no longer holds (`thinking`). Errors come as `{"type": "error", "error": {"type", "message"}}`;
a stream is `event:`/`data:` frames from message_start to message_stop.

A thinking model's reply begins with a thinking block (a `redacted_thinking` block after it when
scripted), has a progress thinking block before each tool call the script gives a text for, and
reports its reasoning in `usage.output_tokens_details.thinking_tokens`. A thinking block streams as
`content_block_start` (empty), `thinking_delta`s only when the display returns text, one
`signature_delta`, `content_block_stop`; a redacted block arrives whole in its start event.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from .compaction import anthropic_compaction_fault
from .model_rules import BINDING_BETA, anthropic_display, anthropic_problem, drops_blocks, has_beta, thinks
from .script import Fault, Reply, ToolCallSpec
from .search_shapes import anthropic_blocks, offers_search
from .thinking import is_thinking, review, seals
from .wire import JSON, Admission, Caching, arguments, blocks, default_message, neutral_stop, pieces

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

NAME = "anthropic"
PATH = "/v1/messages"
CACHING: Caching = "breakpoints"

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


def admit(
    body: JSON, headers: Mapping[str, str], key: bytes, paused: frozenset[str] = frozenset()
) -> Admission | Fault:
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    # "pause_turn": send the paused reply back as it came, as the last turn, to let the model go on.
    continuing = last.get("role") == "assistant" and _turn_key(blocks(last.get("content"))) in paused
    compaction = anthropic_compaction_fault(body, headers, key)
    if compaction is not None:
        return compaction
    # A compaction request may end on a finished assistant turn: nothing is sampled after it.
    continuing = continuing or body.get("compaction") is not None
    problem = _problem(body) or anthropic_problem(body, headers, continuing=continuing)
    if problem:
        return Fault(400, problem)
    model = str(body.get("model", ""))
    if not thinks(model):
        return Admission(body, headers, key)
    verdict = review(body, model, key, drop=drops_blocks(body, headers))
    beta = has_beta(headers, BINDING_BETA)
    if verdict.failure:
        return Fault(400, _unbound(verdict.failure, beta))
    return Admission(
        verdict.body,
        headers,
        key,
        thinking=anthropic_display(body),
        accepted=verdict.kept,
        withheld=len(verdict.dropped),
        transformations=verdict.dropped if beta else None,
    )


def _unbound(path: str, beta: bool) -> str:
    text = (
        f"{path}: Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
        'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )
    if not beta:
        text += f" That setting requires the `{BINDING_BETA}` value in the `anthropic-beta` header."
    return text


def _problem(body: JSON) -> str | None:
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
    return _ttl_problem(body)


def _ttl_problem(body: JSON) -> str | None:
    """A 1-hour breakpoint after a 5-minute one, in the order the API reads the prompt (tools,
    system, messages), is refused (the prompt-caching page's rule on mixing TTLs)."""
    units = [*(body.get("tools") or []), *blocks(body.get("system"))]
    for message in body["messages"]:
        units += blocks(message.get("content"))
    marks = [u["cache_control"] for u in units if isinstance(u.get("cache_control"), dict)]
    ttls = [str(mark.get("ttl", "5m")) for mark in marks]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        return "cache_control: a breakpoint with a 1h ttl must come before any with a 5m ttl"
    return None


_KEYED = ("text", "thinking", "redacted_thinking", "tool_use")


def _turn_key(content: list[JSON]) -> str:
    """What of an assistant turn's content must come back unchanged: the blocks a client keeps, as
    sent (without cache_control or empty text)."""
    kept = [
        {k: v for k, v in b.items() if k != "cache_control"}
        for b in content
        if b.get("type") in _KEYED and not (b.get("type") == "text" and not str(b.get("text", "")).strip())
    ]
    return json.dumps(kept, sort_keys=True)


def paused_key(body: JSON, events: list[JSON]) -> str | None:
    done = message(events, truncated=False)
    if done.get("stop_reason") != "pause_turn":
        return None
    # Paused again while continuing: what comes back next is the whole turn so far, every paused
    # reply's content in order, as one assistant turn.
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    before = blocks(last.get("content")) if last.get("role") == "assistant" else []
    return _turn_key([*before, *done["content"]])


def auth_fault(key: str) -> Fault:
    return Fault(401, "invalid x-api-key")


def overflow_fault(estimate: int, window: int) -> Fault:
    return Fault(400, f"prompt is too long: {estimate} tokens > {window} maximum")


def overflow_events(fault: Fault, admission: Admission) -> list[JSON] | None:
    return None


def error_body(fault: Fault) -> JSON:
    kind = fault.kind or _ERROR_TYPES.get(
        fault.status, "api_error" if fault.status >= 500 else "invalid_request_error"
    )
    message = fault.message or default_message(fault.status)
    error: JSON = {"type": kind, "message": message}
    if fault.error_code:
        error["details"] = {"error_code": fault.error_code}
    return {"type": "error", "error": error}


def _reply_blocks(reply: Reply, display: str, body: Mapping[str, Any]) -> list[JSON]:
    """The reply's content blocks, thinking blocks still unsigned, tool inputs whole."""
    found: list[JSON] = []
    if display and display != "between_tools":
        found.append({"type": "thinking", "thinking": reply.thinking if display == "summarized" else ""})
        if reply.redacted:
            found.append({"type": "redacted_thinking", "data": ""})
    found += [dict(block) for block in reply.extra]
    if reply.searches and offers_search(body):
        found += anthropic_blocks(list(reply.searches))
    # A reply with only tool calls has no text block; an empty reply still has one, as the API sends.
    if reply.text or not reply.tool_calls:
        found.append({"type": "text", "text": reply.text})
    for n, call in enumerate(reply.tool_calls):
        if display and n < len(reply.progress):
            shown = reply.progress[n] if display != "omitted" else ""
            found.append({"type": "thinking", "thinking": shown})
        tool_id = call.id or f"toolu_{uuid.uuid4().hex[:24]}"
        found.append({"type": "tool_use", "id": tool_id, "name": call.name, "input": _input(call)})
    return found


def _input(call: ToolCallSpec) -> JSON:
    try:
        parsed = json.loads(arguments(call))
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _sign(found: list[JSON], reply: Reply, admission: Admission) -> None:
    """Seal the thinking blocks, sharing the reply's reasoning tokens out over them."""
    count = sum(1 for b in found if is_thinking(b))
    if not count:
        return
    share = [reply.reasoning_tokens // count] * count
    share[0] += reply.reasoning_tokens - sum(share)
    model = str(admission.body.get("model", ""))
    made = iter(seals(admission.body, model, admission.key, found, share))
    for block in found:
        if is_thinking(block):
            block["signature" if block["type"] == "thinking" else "data"] = next(made)


def _block_events(at: int, block: JSON, size: int, raw: str) -> list[JSON]:
    """A block's start and delta events; `raw` is a tool call's arguments as the model streams them."""
    kind = block["type"]
    if kind == "server_tool_use":  # its input streams as a tool call's does
        kind, raw = "tool_use", json.dumps(block["input"])
    if kind == "redacted_thinking" or kind not in _KEYED:  # (or a type the client may not know) whole
        return [{"type": "content_block_start", "index": at, "content_block": dict(block)}]
    if kind == "thinking":
        start: JSON = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces(block["thinking"], size)]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"], size)]
    else:
        start = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in ["", *pieces(raw, size)]]
    return [
        {"type": "content_block_start", "index": at, "content_block": start},
        *({"type": "content_block_delta", "index": at, "delta": delta} for delta in deltas),
    ]


def events(reply: Reply, admission: Admission, usage: Mapping[str, Any], size: int) -> list[JSON]:
    display = admission.thinking
    found = _reply_blocks(reply, display, admission.body)
    _sign(found, reply, admission)
    start: JSON = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": str(admission.body.get("model", "")),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage["cache_write_tokens"],
            "cache_read_input_tokens": usage["cache_read_tokens"],
            "output_tokens": 1,
        },
    }
    if admission.transformations is not None:
        start["input_transformations"] = list(admission.transformations)
    stream: list[JSON] = [{"type": "message_start", "message": start}]
    raw = iter([arguments(call) for call in reply.tool_calls])
    for at, block in enumerate(found):
        block_events = _block_events(at, block, size, next(raw) if block["type"] == "tool_use" else "")
        if at == 0 and block["type"] != "tool_use":
            block_events.insert(1, {"type": "ping"})
        stream += block_events
        stream.append({"type": "content_block_stop", "index": at})
    delta_usage: JSON = {"output_tokens": usage["output_tokens"]}
    searched = sum(1 for b in found if b["type"] == "server_tool_use")
    if searched:
        delta_usage["server_tool_use"] = {"web_search_requests": searched}
    if display:
        delta_usage["output_tokens_details"] = {"thinking_tokens": usage["reasoning_tokens"]}
    stream.append(
        {
            "type": "message_delta",
            # The neutral stop words are Anthropic's own; any other word is sent as given.
            "delta": {"stop_reason": neutral_stop(reply), "stop_sequence": None},
            "usage": delta_usage,
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
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                block["_json"] += delta["partial_json"]
        elif event["type"] == "message_delta":
            body["stop_reason"] = event["delta"]["stop_reason"]
            body["usage"] = {**body["usage"], **event["usage"]}
    content = []
    for _, block in sorted(content_blocks.items()):
        raw = block.pop("_json")
        if block["type"] in ("tool_use", "server_tool_use"):
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


def error_event(kind: str, message: str, replaced: JSON) -> JSON:
    return {"type": "error", "error": {"type": kind, "message": message}}


def frame(event: JSON) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

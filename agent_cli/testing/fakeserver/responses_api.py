"""The OpenAI Responses API (POST /v1/responses) as the fake speaks it; implements `WireApi`.

The prompt's prefix order is tools, instructions, input items, and prompt caching is automatic, as
OpenAI's is (`prompt_cache`): the longest prefix seen before is read from the cache when it is at
least 1024 tokens. Requests are rejected as the real API does: what a model refuses
(`model_rules`), items without a required field or that do not pair up (`responses_items`);
replayed reasoning that no longer holds is withheld silently. Errors come as
`{"error": {"message", "type", "param", "code"}}`; the context overflow is a 400
`context_length_exceeded`, or, with the server's `overflow_in_stream`, `response.created` then
`response.failed` inside a 200 stream.

A reply is a Response whose output is a reasoning item first (for a model that reasons: its
summary only when `reasoning.summary` is set, its encrypted_content only when `include` asks for
"reasoning.encrypted_content"), then a message and/or function calls. Its stream is
`response.created`, `response.in_progress`, per item `response.output_item.added` ...
`response.output_item.done` (summary, text and argument events in between), then
`response.completed`, or `response.incomplete` for a reply that stopped on length. Every event has
a `sequence_number`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from . import openai_chat
from .compaction import responses_compaction_fault
from .model_rules import openai_problem, openai_reasons
from .responses_items import (
    bound_call_id,
    input_items,
    item_kind,
    missing_field,
    pairing_fault,
    replay,
    seal_reasoning,
)
from .script import Fault, Reply
from .search_shapes import offers_search, responses_items
from .wire import JSON, Admission, Caching, arguments, blocks, neutral_stop, pieces, total

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

NAME = "openai-responses"
PATH = "/v1/responses"
CACHING: Caching = "automatic"

OVERFLOW = "Your input exceeds the context window of this model. Please adjust your input and try again."
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
_INCOMPLETE = {"max_tokens": "max_output_tokens", "refusal": "content_filter"}  # other stops: as given
_CODES = {"overloaded_error": "server_error", "api_error": "server_error"}


def units(body: JSON) -> list[JSON]:
    found = [dict(t) for t in body.get("tools") or []]
    if body.get("instructions"):
        found.append({"type": "text", "text": str(body["instructions"])})
    for item in input_items(body):
        what = item_kind(item)
        if what == "message":
            text = "".join(str(part.get("text", "")) for part in blocks(item.get("content")))
            found.append({"type": "text", "text": text})
        elif what == "function_call_output":
            output = item.get("output")
            found.append({"type": "text", "text": output if isinstance(output, str) else json.dumps(output)})
        elif what == "function_call":
            fields = ("type", "call_id", "name", "arguments")
            found.append({k: item.get(k) for k in fields})
        else:
            found.append(dict(item))
    return found


def admit(
    body: JSON, headers: Mapping[str, str], key: bytes, paused: frozenset[str] = frozenset()
) -> Admission | Fault:
    items = input_items(body)
    fault = openai_problem(body) or missing_field(items) or pairing_fault(items)
    fault = fault or responses_compaction_fault(items, key)
    if fault is not None:
        return fault
    verdict = replay(body, str(body.get("model", "")), key)
    thinking = ""
    if openai_reasons(body):
        thinking = "summarized" if (body.get("reasoning") or {}).get("summary") else "omitted"
    return Admission(
        verdict.body,
        headers,
        key,
        thinking=thinking,
        accepted=verdict.accepted,
        withheld=len(verdict.withheld),
        transformations=verdict.withheld or None,
    )


def paused_key(body: JSON, events: list[JSON]) -> str | None:
    return None  # this API has no paused turns


def auth_fault(key: str) -> Fault:
    return openai_chat.auth_fault(key)


def overflow_fault(estimate: int, window: int) -> Fault:
    return Fault(400, OVERFLOW, kind="context_length_exceeded", param="input")


def error_body(fault: Fault) -> JSON:
    body = openai_chat.error_body(fault)
    code = body["error"]["code"]
    body["error"]["param"] = fault.param or ("input" if code == "context_length_exceeded" else None)
    return body


def _response(body: JSON, rid: str, status: str, output: list[JSON], usage: JSON | None) -> JSON:
    reasoning = body.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, dict) else {}
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "prompt_cache_key": body.get("prompt_cache_key"),
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def overflow_events(fault: Fault, admission: Admission) -> list[JSON] | None:
    failed = _response(admission.body, f"resp_{uuid.uuid4().hex[:24]}", "failed", [], None)
    failed["error"] = {"code": fault.kind, "message": fault.message}
    created = {**failed, "status": "in_progress", "error": None}
    return [
        {"type": "response.created", "sequence_number": 0, "response": created},
        {"type": "response.failed", "sequence_number": 1, "response": failed},
    ]


def _output(reply: Reply, admission: Admission, stem: str) -> list[JSON]:
    """The reply's output items, as `response.output_item.done` carries them."""
    body, found = admission.body, []
    if admission.thinking:
        rs_id = f"rs_{stem}"
        summary: list[JSON] = []
        if admission.thinking == "summarized":
            summary.append({"type": "summary_text", "text": reply.thinking})
        sealed = None
        if "reasoning.encrypted_content" in (body.get("include") or []):
            model = str(body.get("model", ""))
            sealed = seal_reasoning(body, model, admission.key, rs_id, reply.reasoning_tokens)
        found.append({"id": rs_id, "type": "reasoning", "summary": summary, "encrypted_content": sealed})
    found += [{"id": f"x_{uuid.uuid4().hex[:24]}", **item} for item in reply.extra]
    if reply.searches and offers_search(body):
        found += responses_items(list(reply.searches))
    if reply.text or not reply.tool_calls:
        part = {"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}
        found.append(
            {
                "id": f"msg_{stem if admission.thinking else uuid.uuid4().hex[:24]}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    for n, call in enumerate(reply.tool_calls):
        found.append(
            {
                "id": bound_call_id(stem, n) if admission.thinking else f"fc_{uuid.uuid4().hex[:24]}",
                "type": "function_call",
                "status": "completed",
                "arguments": arguments(call),
                "call_id": call.id or f"call_{uuid.uuid4().hex[:24]}",
                "name": call.name,
            }
        )
    return found


def _item_events(at: int, item: JSON, size: int) -> list[JSON]:
    """The events of one output item, from output_item.added to output_item.done."""
    ref = {"item_id": item["id"], "output_index": at}
    what = item["type"]
    if what not in ("reasoning", "message", "function_call"):  # a type the client may not know
        return [
            {"type": "response.output_item.added", "output_index": at, "item": item},
            {"type": "response.output_item.done", "output_index": at, "item": item},
        ]
    if what == "reasoning":
        added = {**item, "summary": [], "encrypted_content": None}  # the done event has the full item
        inner: list[JSON] = []
        for n, part in enumerate(item["summary"]):
            at_part = {**ref, "summary_index": n}
            inner += [
                {"type": "response.reasoning_summary_part.added", **at_part, "part": {**part, "text": ""}},
                *(
                    {"type": "response.reasoning_summary_text.delta", **at_part, "delta": piece}
                    for piece in pieces(part["text"], size)
                ),
                {"type": "response.reasoning_summary_text.done", **at_part, "text": part["text"]},
                {"type": "response.reasoning_summary_part.done", **at_part, "part": part},
            ]
    elif what == "message":
        added = {**item, "status": "in_progress", "content": []}
        part, at_part = item["content"][0], {**ref, "content_index": 0}
        inner = [
            {"type": "response.content_part.added", **at_part, "part": {**part, "text": ""}},
            *(
                {"type": "response.output_text.delta", **at_part, "delta": piece, "logprobs": []}
                for piece in pieces(part["text"], size)
            ),
            {"type": "response.output_text.done", **at_part, "text": part["text"], "logprobs": []},
            {"type": "response.content_part.done", **at_part, "part": part},
        ]
    else:
        added = {**item, "status": "in_progress", "arguments": ""}
        inner = [
            *(
                {"type": "response.function_call_arguments.delta", **ref, "delta": piece}
                for piece in pieces(item["arguments"], size)
            ),
            {"type": "response.function_call_arguments.done", **ref, "arguments": item["arguments"]},
        ]
    return [
        {"type": "response.output_item.added", "output_index": at, "item": added},
        *inner,
        {"type": "response.output_item.done", "output_index": at, "item": item},
    ]


def events(reply: Reply, admission: Admission, usage: Mapping[str, Any], size: int) -> list[JSON]:
    stem = uuid.uuid4().hex[:24]
    output = _output(reply, admission, stem)
    neutral = neutral_stop(reply)
    complete = neutral in ("end_turn", "tool_use", "stop_sequence")
    if not complete and output and "status" in output[-1]:
        output[-1]["status"] = "incomplete"
    rid = f"resp_{stem}"
    started = _response(admission.body, rid, "in_progress", [], None)
    stream: list[JSON] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
    ]
    for at, item in enumerate(output):
        stream += _item_events(at, item, size)
    whole = total(usage["input_tokens"], usage["cache_read_tokens"], usage["cache_write_tokens"])
    final = _response(
        admission.body,
        rid,
        "completed" if complete else "incomplete",
        output,
        {
            "input_tokens": whole,
            "input_tokens_details": {"cached_tokens": usage["cache_read_tokens"], "cache_write_tokens": 0},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
            "total_tokens": total(whole, usage["output_tokens"]),
        },
    )
    if not complete:
        final["incomplete_details"] = {"reason": _INCOMPLETE.get(neutral, neutral)}
    if admission.transformations is not None:
        final["input_transformations"] = list(admission.transformations)
    stream.append({"type": "response.completed" if complete else "response.incomplete", "response": final})
    return [{**event, "sequence_number": n} for n, event in enumerate(stream)]


def message(events: list[JSON], *, truncated: bool) -> JSON:
    final = next((e["response"] for e in reversed(events) if e["type"] in _TERMINAL), None)
    if final is not None and not truncated:
        return dict(final)
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    return {**events[0]["response"], "output": done}  # never finished: still in progress, no usage


def without_stop(events: list[JSON]) -> list[JSON]:
    return [e for e in events if e.get("type") not in _TERMINAL]


def error_event(kind: str, message: str, replaced: JSON) -> JSON:
    return {
        "type": "error",
        "code": _CODES.get(kind, kind),
        "message": message,
        "param": None,
        "sequence_number": replaced.get("sequence_number", 0),
    }


def frame(event: JSON) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

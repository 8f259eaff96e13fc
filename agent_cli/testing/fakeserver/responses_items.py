"""The input of an OpenAI Responses request: its items checked as the real API checks them, and
replayed reasoning read or withheld.

Terms. An *item* is one element of `input` (a plain string input is one user message): a message
(`type` "message", or just a `role`), a `function_call`, a `function_call_output`, a `reasoning`
item. *Output items* are the kinds a model writes: reasoning, function_call, an assistant message;
a *run* is a stretch of output items, as one response produced them. A reasoning item's *identity*
is its `id`, else the id sealed in its encrypted_content.

Required fields (the API reference's; a missing one is the real 400 `missing_required_parameter`
naming it, e.g. `input[3].id`): a reasoning item's `id` and `summary`, a function_call's `call_id`,
`name` and `arguments`, a function_call_output's `call_id` and `output`, a message's `content`.
Clients that sent reasoning items back without their id got exactly this.

Pairing (the real API's texts, as its users quote them; all 400 `param: "input"` but the 404):
- a function_call_output needs an earlier function_call with its call_id;
- a function_call needs its output before the next user message, or before the end;
- a reasoning item sent with an id but no encrypted_content is a reference to a stored item (404:
  nothing is stored with `store: false`);
- a reasoning item must be followed by an output item of its run;
- a function_call sent with the fake's reasoning-bound id (`fc_<stem><nn>`, written by a response
  that reasoned, whose reasoning item is `rs_<stem>`) needs that reasoning item earlier in its run.

Replay: encrypted_content is a seal (`binding`) over the model and the *prefix*: instructions,
tools and the non-reasoning items before it, normalized (ids, statuses, part types and JSON
formatting of arguments do not count). A reasoning item whose seal does not hold (another model,
an edited prefix, not a seal at all) is *withheld*: left out of what the model reads, and reported
in the response's `input_transformations`; never an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .binding import canonical, holds, same_model, seal, unseal
from .script import Fault
from .wire import JSON, blocks

__all__ = [
    "Replay",
    "bound_call_id",
    "input_items",
    "item_kind",
    "missing_field",
    "pairing_fault",
    "replay",
    "seal_reasoning",
]

_BOUND_CALL = re.compile(r"^fc_([0-9a-f]{24})[0-9a-f]{2}$")
_OUTPUT_KINDS = ("reasoning", "function_call", "web_search_call")  # (a reasoning item may lead a search)


def input_items(body: JSON) -> list[JSON]:
    value = body.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return [item for item in value or [] if isinstance(item, dict)]


def item_kind(item: JSON) -> str:
    return str(item.get("type") or ("message" if "role" in item else ""))


def _is_output(item: JSON) -> bool:
    what = item_kind(item)
    return what in _OUTPUT_KINDS or (what == "message" and item.get("role") == "assistant")


def _identity(item: JSON) -> str:
    found = unseal(str(item.get("encrypted_content") or ""))
    return str(item.get("id") or (found.ref if found else "rs_?"))


def bound_call_id(stem: str, index: int) -> str:
    """The id of a function call written by a response that reasoned; its reasoning item is rs_<stem>."""
    return f"fc_{stem}{index:02x}"


def _fault(status: int, message: str) -> Fault:
    return Fault(status, message, param="input")


_REQUIRED = {
    "reasoning": ("id", "summary"),
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id", "output"),
    "message": ("content",),
}


def missing_field(items: Sequence[JSON]) -> Fault | None:
    """The real API's 400 for the first item without a field the reference requires, else None."""
    for n, item in enumerate(items):
        for name in _REQUIRED.get(item_kind(item), ()):
            if item.get(name) is None:
                return Fault(
                    400,
                    f"Missing required parameter: 'input[{n}].{name}'.",
                    kind="missing_required_parameter",
                    param=f"input[{n}].{name}",
                )
    return None


def pairing_fault(items: Sequence[JSON]) -> Fault | None:
    """The real API's error for items that do not pair up, else None."""
    calls: set[str] = set()
    open_calls: list[str] = []
    run: set[str] = set()  # identities of the reasoning items of the current run
    for n, item in enumerate(items):
        what = item_kind(item)
        if not _is_output(item):
            run = set()
        if what == "reasoning":
            if item.get("id") and not item.get("encrypted_content"):
                return _fault(
                    404,
                    f"Item with id '{item['id']}' not found. Items are not persisted when `store` is set to "
                    "false. Try again with `store` set to true, or remove this item from your input.",
                )
            following = items[n + 1] if n + 1 < len(items) else None
            if following is None or item_kind(following) == "reasoning" or not _is_output(following):
                return _fault(
                    400,
                    f"Item '{_identity(item)}' of type 'reasoning' was provided without its required "
                    "following item.",
                )
            run.add(_identity(item))
        elif what == "function_call":
            bound = _BOUND_CALL.match(str(item.get("id") or ""))
            if bound and f"rs_{bound[1]}" not in run:
                return _fault(
                    400,
                    f"Item '{item['id']}' of type 'function_call' was provided without its required "
                    f"'reasoning' item: 'rs_{bound[1]}'.",
                )
            call_id = str(item.get("call_id"))
            calls.add(call_id)
            open_calls.append(call_id)
        elif what == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                return _fault(400, f"No tool call found for function call output with call_id {call_id}.")
            if call_id in open_calls:
                open_calls.remove(call_id)
        elif what == "message" and item.get("role") == "user" and open_calls:
            return _fault(400, f"No tool output found for function call {open_calls[0]}.")
    if open_calls:
        return _fault(400, f"No tool output found for function call {open_calls[0]}.")
    return None


def _normalized(item: JSON) -> Any:
    """What of a non-reasoning item binds reasoning after it."""
    what = item_kind(item)
    if what == "message":
        texts = [str(part.get("text", "")) for part in blocks(item.get("content"))]
        return {"role": item.get("role"), "text": texts}
    if what == "function_call":
        raw = str(item.get("arguments") or "")
        try:
            arguments: Any = json.loads(raw)
        except json.JSONDecodeError:
            arguments = raw
        return {"call": item.get("call_id"), "name": item.get("name"), "arguments": arguments}
    if what == "function_call_output":
        return {"output_of": item.get("call_id"), "output": item.get("output")}
    return {k: v for k, v in item.items() if k not in ("id", "status")}


class _Prefixes:
    def __init__(self, body: JSON, items: Sequence[JSON]) -> None:
        self._head = [canonical(body.get("instructions") or ""), canonical(list(body.get("tools") or []))]
        self._items = [None if item_kind(i) == "reasoning" else canonical(_normalized(i)) for i in items]

    def at(self, index: int) -> list[str]:
        return [*self._head, *(text for text in self._items[:index] if text is not None)]


@dataclass(frozen=True)
class Replay:
    """What replaying a request's reasoning items comes to."""

    body: JSON  # the request as the model reads it: without the withheld items
    accepted: int = 0
    withheld: tuple[JSON, ...] = ()  # input_transformations entries, in input order


def replay(body: JSON, model: str, key: bytes) -> Replay:
    items = input_items(body)
    prefixes = _Prefixes(body, items)
    kept, accepted, withheld = [], 0, []
    for n, item in enumerate(items):
        if item_kind(item) != "reasoning":
            kept.append(item)
            continue
        found = unseal(str(item.get("encrypted_content") or ""))
        if found is not None and holds(key, found, model, prefixes.at(n)):
            kept.append(item)
            accepted += 1
            continue
        reason = "model_mismatch" if found is not None and not same_model(found, model) else "prefix_mismatch"
        withheld.append({"id": _identity(item), "action": "removed", "type": "reasoning", "reason": reason})
    if not withheld:
        return Replay(body, accepted)
    return Replay({**body, "input": kept}, accepted, tuple(withheld))


def seal_reasoning(body: JSON, model: str, key: bytes, item_id: str, tokens: int) -> str:
    """The encrypted_content of a reasoning item that opens the reply to `body` (as the model read it)."""
    items = input_items(body)
    return seal(key, model, item_id, _Prefixes(body, items).at(len(items)), tokens)

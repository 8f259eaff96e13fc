"""A request as its wire sends it, turned into the units the cache models bill.

The provider modules build the wire payload (`providers/anthropic_wire.to_wire`,
`chat_wire.to_wire`, `responses_wire`); these functions read that payload (plain JSON values) as
the API reads it, so a benchmark or the engine bills exactly what would be sent, breakpoints
included, without this folder knowing any provider's code. A unit's *key* is the hash of its JSON without
`cache_control`, so moving a mark does not change what an earlier prefix is; its tokens are the
caller's count (`count`, e.g. a `TokenCounter`'s) of the part that costs tokens: a text's text, a
tool result's content, a tool call's name and input, a thinking block's thinking, else its JSON.
Thinking blocks of turns before the newest user message that is not only tool results are left
out for a model that strips them (`anthropic.in_context`), as the API leaves them out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_cli.billing.anthropic import AnthropicRequest, Section, Unit, in_context
from agent_cli.billing.automatic import AutomaticRequest, Retention
from agent_cli.billing.prices import Ttl

__all__ = ["anthropic_request", "chat_request", "responses_request"]

_THOUGHTS = ("thinking", "redacted_thinking")


# Keys kept by what they hash (`_key`): a conversation's blocks come back every request. Bounded by
# the size of the JSON they stand for (the forms hold those strings), then forgotten all at once.
_KEPT_CHARS = 16_000_000
_keys: dict[object, str] = {}
_kept_chars = 0


def _strip(value: Any) -> Any:
    if type(value) is str:  # the common case first (a Mapping check is an ABC's)
        return value
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list | tuple):
        return [_strip(v) for v in value]
    return value


def _form(value: Any) -> object:
    """`value` without `cache_control`, as a hashable value: equal forms are equal JSON (strings
    as they are, the same objects from one request to the next, so their hashes are kept)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is dict:
        return ("{", tuple(sorted((k, _form(v)) for k, v in value.items() if k != "cache_control")))
    if kind is list or kind is tuple:
        return ("[", tuple(_form(v) for v in value))
    if kind is bool or kind is int or value is None:  # tagged: True == 1 in Python, not in JSON
        return (kind.__name__, value)
    return ("=", json.dumps(_strip(value), sort_keys=True))  # a float (-0.0 == 0.0), anything else


def _key(value: Any) -> str:
    """The hash of `value`'s JSON without `cache_control`; kept for the next request that sends it."""
    try:
        form = _form(value)
    except TypeError:  # keys that do not sort: as JSON would refuse them, said there
        form = None
    global _kept_chars
    got = _keys.get(form) if form is not None else None
    if got is None:
        dumped = json.dumps(_strip(value), sort_keys=True)
        got = hashlib.sha256(dumped.encode()).hexdigest()[:32]
        if form is not None:
            if _kept_chars + len(dumped) > _KEPT_CHARS:
                _keys.clear()
                _kept_chars = 0
            _keys[form] = got
            _kept_chars += len(dumped)
    return got


def _ttl(block: Mapping[str, Any]) -> Ttl | None:
    mark = block.get("cache_control")
    if not isinstance(mark, Mapping):
        return None
    return "1h" if mark.get("ttl") == "1h" else "5m"


def _text(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "tool_use":
        return str(block.get("name", "")) + json.dumps(block.get("input", {}), sort_keys=True)
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        return "".join(_text(b) for b in content or () if isinstance(b, Mapping))
    return json.dumps(_strip(block), sort_keys=True)


def _has_image(value: Any) -> bool:
    if type(value) is str:  # most of a request: answered before the ABC checks below
        return False
    if isinstance(value, Mapping):
        return value.get("type") in ("image", "image_url", "input_image") or any(
            _has_image(v) for v in value.values()
        )
    return isinstance(value, list | tuple) and any(_has_image(v) for v in value)


def _blocks(content: Any) -> Sequence[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, Mapping)]


def anthropic_request(
    wire: Mapping[str, Any],
    count: Callable[[str], int],
    at: float,
    keeps_thinking: Callable[[str], bool] | None = None,
) -> AnthropicRequest:
    """The Messages API payload `wire` (`messages.create`'s keyword arguments) as billing units;
    `keeps_thinking(model)`: whether the model keeps earlier turns' thinking blocks
    (`providers.model_names.keeps_prior_thinking`; None: it does, as the current models do)."""
    units: list[Unit] = []

    def add(section: Section, block: Mapping[str, Any], message: int = -1) -> None:
        thinking = block.get("type") in _THOUGHTS
        units.append(Unit(section, count(_text(block)), _key(block), _ttl(block), thinking, message))

    for tool in wire.get("tools") or ():
        units.append(Unit("tools", count(json.dumps(_strip(tool), sort_keys=True)), _key(tool), _ttl(tool)))
    for block in _blocks(wire.get("system")):
        add("system", block)
    turn = -1  # the newest user message that is not only tool results
    for index, message in enumerate(wire.get("messages") or ()):
        blocks = _blocks(message.get("content"))
        for block in blocks:
            add("messages", block, index)
        if message.get("role") == "user" and any(b.get("type") != "tool_result" for b in blocks):
            turn = index
    top = wire.get("cache_control")
    automatic: Ttl | None = None
    if isinstance(top, Mapping):
        automatic = "1h" if top.get("ttl") == "1h" else "5m"
    choice = wire.get("tool_choice")
    thinking = [wire.get("thinking"), wire.get("output_config")]
    model = str(wire.get("model", ""))
    return AnthropicRequest(
        model,
        # thinking of earlier turns, as the model keeps or strips it
        in_context(keeps_thinking is None or keeps_thinking(model), units, turn),
        at,
        tool_choice=json.dumps(choice, sort_keys=True) if choice else "auto",
        thinking=json.dumps(thinking, sort_keys=True),
        images=_has_image(wire.get("messages")),
        speed=str(wire.get("speed", "")),
        automatic=automatic,
    )


def chat_request(
    wire: Mapping[str, Any], count: Callable[[str], int], at: float, *, retention: Retention = "in_memory"
) -> AutomaticRequest:
    """A Chat Completions payload as units for the automatic cache: the tools, then one unit per message."""
    units = [Unit("tools", count(json.dumps(t, sort_keys=True)), _key(t)) for t in wire.get("tools") or ()]
    for message in wire.get("messages") or ():
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(message, sort_keys=True)
        units.append(Unit("messages", count(text), _key(message)))
    return AutomaticRequest(
        str(wire.get("model", "")),
        tuple(units),
        at,
        cache_key=str(wire.get("prompt_cache_key", "")),
        retention=retention,
    )


def _item_text(item: Mapping[str, Any]) -> str:
    """The part of a Responses input item that costs tokens: its text, a call's name and arguments,
    a call's output; else its JSON."""
    content, kind = item.get("content"), item.get("type")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
    if kind == "function_call":
        return str(item.get("name", "")) + str(item.get("arguments", ""))
    if kind == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else json.dumps(output, sort_keys=True)
    return json.dumps(_strip(item), sort_keys=True)


def responses_request(
    wire: Mapping[str, Any], count: Callable[[str], int], at: float, *, retention: Retention = "in_memory"
) -> AutomaticRequest:
    """A Responses payload as units for OpenAI's automatic cache: the instructions, each tool, each
    input item, in the order the API reads them."""
    units: list[Unit] = []
    instructions = wire.get("instructions")
    if instructions:
        units.append(Unit("system", count(str(instructions)), _key(instructions)))
    units += [Unit("tools", count(json.dumps(t, sort_keys=True)), _key(t)) for t in wire.get("tools") or ()]
    found = wire.get("input")
    for item in found if isinstance(found, list) else ():
        if isinstance(item, Mapping):
            units.append(Unit("messages", count(_item_text(item)), _key(item)))
    return AutomaticRequest(
        str(wire.get("model", "")),
        tuple(units),
        at,
        cache_key=str(wire.get("prompt_cache_key") or ""),
        retention=retention,
    )

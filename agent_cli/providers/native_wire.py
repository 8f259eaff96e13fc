"""The providers' own compaction on the wire: the request that asks for a record, and the record read
back from the reply (pure, over plain dicts). Where each record goes in later requests is the wire
module's business (`anthropic_wire`, `responses_wire`); this module only makes and reads the one call.

Anthropic, on-demand compaction (beta `compact-2026-09-04`; docs: platform.claude.com/docs/en/
build-with-claude/compaction, .../compaction-keep-recent-turns; SDK: `BetaCompactionConfigParam`,
`BetaCompactionBlock`). An ordinary Messages request over the messages to summarize, plus the
top-level `compaction: {"type": "summarize", "instructions": ...}` (instructions replace the server's
prompt; empty counts as absent). The reply holds one `compaction` block (`content`: the readable
summary, null when it failed; `signature`, `encrypted_content`, `tool_changes`: sent back verbatim)
and `stop_reason: "compaction"`. It cannot be combined with `context_management`, and the params that
only shape a reply (`stop_sequences`, a forced `tool_choice`) go (the SDK's tool runner drops them
too). Keep-tail: only the older turns go into the request; the kept turns follow the block unchanged.

OpenAI, standalone compaction (`POST /v1/responses/compact`, `client.responses.compact`; docs:
developers.openai.com/api/docs/guides/compaction): `model`, `input` (the items to compact),
`instructions`. The reply (`object: "response.compaction"`) has `output`: the user's messages
followed by one `compaction` item (`id`, `encrypted_content`), to be passed whole into the next
`/responses` call ("Do not prune the compact response"), and `usage`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_cli.core.errors import TransientError
from agent_cli.core.messages import NativeRecord
from agent_cli.providers.registry import ANTHROPIC, OPENAI

__all__ = [
    "anthropic_compaction_wire",
    "anthropic_record",
    "responses_compaction_wire",
    "responses_record",
]


def _with_beta(wire: dict[str, Any], beta: str) -> dict[str, Any]:
    headers = dict(wire.get("extra_headers") or {})
    names = [b for b in str(headers.get("anthropic-beta") or "").split(",") if b]
    headers["anthropic-beta"] = ",".join([*names, beta] if beta not in names else names)
    return {**wire, "extra_headers": headers}


def anthropic_compaction_wire(wire: Mapping[str, Any], instructions: str, beta: str) -> dict[str, Any]:
    """`messages.create` keyword arguments (`to_wire`'s, over the turns to summarize) made into a
    compaction request."""
    out = {k: v for k, v in wire.items() if k not in ("context_management", "stop_sequences")}
    choice = out.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        del out["tool_choice"]
    compaction: dict[str, Any] = {"type": "summarize"}
    if instructions.strip():
        compaction["instructions"] = instructions
    out["extra_body"] = {**dict(out.get("extra_body") or {}), "compaction": compaction}
    return _with_beta(out, beta)


def anthropic_record(body: Mapping[str, Any]) -> NativeRecord:
    """The record in a compaction reply. A reply without a block with content (the API's failed
    compaction: `content` null) is a transient failure: the engine's own summary stands in."""
    if body.get("stop_reason") != "compaction":
        raise TransientError(f"anthropic: the compaction request ended with {body.get('stop_reason')!r}")
    for block in body.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "compaction" and block.get("content"):
            wire = json.dumps(dict(block), ensure_ascii=False)
            return NativeRecord(ANTHROPIC.name, wire, str(block["content"]), keeps_tail=True)
    raise TransientError("anthropic: the compaction reply holds no summary")


def responses_compaction_wire(wire: Mapping[str, Any]) -> dict[str, Any]:
    """`responses.compact` keyword arguments from `responses.create`'s (`to_wire`'s)."""
    out: dict[str, Any] = {"model": wire["model"], "input": wire["input"]}
    if wire.get("instructions"):
        out["instructions"] = wire["instructions"]
    return out


def responses_record(body: Mapping[str, Any]) -> NativeRecord:
    """The record in a compacted response: its whole `output`, as it came."""
    output = [dict(item) for item in body.get("output") or [] if isinstance(item, Mapping)]
    if not any(item.get("type") == "compaction" and item.get("encrypted_content") for item in output):
        raise TransientError("openai: the compacted response holds no compaction item")
    kept = sum(1 for item in output if item.get("type") == "message")
    text = (
        f"[OpenAI compaction item: the earlier conversation, encrypted by the provider; "
        f"{kept} of the user's messages kept with it as the API returned them]"
    )
    wire = json.dumps(output, ensure_ascii=False)  # the user's messages, then the encrypted item
    return NativeRecord(OPENAI.name, wire, text, readable=False, keeps_user_messages=True)

"""The providers' own compaction, as the fake speaks it: the request that asks for a record, the record,
and the checks every later request that carries it passes (pure, over plain dicts).

Anthropic, on-demand compaction (beta `compact-2026-09-04`). Sources: platform.claude.com/docs/en/
build-with-claude/compaction (overview), .../compaction-keep-recent-turns, .../compaction-background
(read 2026-12-02), and the `anthropic` SDK 2.15 (`BetaCompactionConfigParam`, `BetaCompactionBlock`,
the `compaction_*` error classes). The rules:
- a request with the top-level `compaction: {"type": "summarize"}` is a compaction request: the reply
  is one `compaction` block (`content`: the summary; `signature`, `encrypted_content`, `tool_changes`)
  with `stop_reason: "compaction"`, and nothing is sampled after it. It cannot be combined with
  `context_management`; it is refused (`compaction_incomplete_turn`) when it ends on an assistant turn
  whose tool call has no result, and (`compaction_nothing_to_summarize`) when it has nothing to read;
- the block goes back first in `messages`, in place of the messages it summarizes
  (`compaction_block_misplaced` otherwise, and in `system`); one block with content per request
  (`compaction_block_ambiguous`); its `signature` must verify (`compaction_signature_invalid`) and
  its `content` and `tool_changes` must be what it recorded (`compaction_content_mismatch`,
  `compaction_tool_changes_mismatch`); a block with null content is a no-op;
- both requests carry the beta header (its absence is a 400 whose text is the fake's own, *invented*:
  the docs give none), and only the models the pages list take it (*invented* text too);
- keep-tail: thinking in the kept turns sent right after the block stays valid. The fake's block
  stands for the exact messages it summarized: `encrypted_content` holds them (canonical, compressed),
  and the thinking check reads them in its place (`expanded`). Its `encrypted_content` and `signature`
  cost no prompt tokens here (opaque metadata); its `content` does.

OpenAI, standalone compaction (`POST /v1/responses/compact`; developers.openai.com/api/docs/guides/
compaction, and the `openai` SDK 3.57 `CompactedResponse`, `ResponseCompactionItem`): the reply is
`{"object": "response.compaction", "output": [...user messages..., {"type": "compaction", "id",
"encrypted_content"}], "usage"}`; later `/responses` requests send that output back whole. The fake's
`encrypted_content` is sealed under the server's key: an altered one is a 400 (the docs give no text:
*invented*).

Seals here are HMACs under the server's key (`binding`), so a record made by one server is good on the
next, as a resumed session needs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
import uuid
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from .binding import canonical
from .script import Fault
from .wire import JSON, blocks

__all__ = [
    "COMPACTION_MODELS",
    "COMPACT_BETA",
    "anthropic_compaction_events",
    "anthropic_compaction_fault",
    "default_summary",
    "expanded",
    "is_compaction",
    "prefix_messages",
    "responses_compacted",
    "responses_compaction_fault",
]

COMPACT_BETA = "compact-2026-09-04"
# The models the on-demand compaction pages list under supportedModels (read 2026-12-02).
COMPACTION_MODELS = frozenset(
    {
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-fable-5",
        "claude-mythos-5",
        "claude-mythos-preview",
        "claude-opus-5-5",
        "claude-opus-5",
        "claude-opus-4-8",
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-sonnet-5-5",
        "claude-sonnet-5",
        "claude-sonnet-4-6",
        "claude-haiku-5-5",
    }
)
_SIGNATURE = re.compile(r"^cmp1\.([0-9a-f]{16})\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$")
_ITEM = re.compile(r"^cpi1\.([A-Za-z0-9_-]+={0,2})\.([A-Za-z0-9_-]{43})$")


def _mac(key: bytes, *parts: str) -> str:
    message = "\n".join(parts).encode()
    return base64.urlsafe_b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode().rstrip("=")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _has_beta(headers: Mapping[str, str]) -> bool:
    return COMPACT_BETA in [b.strip() for b in headers.get("anthropic-beta", "").split(",")]


def _error(code: str, message: str) -> Fault:
    return Fault(400, message, error_code=code)


# -- Anthropic ------------------------------------------------------------------


def is_compaction(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "compaction"


def _summarized(encrypted: str) -> list[str] | None:
    """The canonical messages a block's encrypted_content says it stands for, or None."""
    try:
        data = json.loads(zlib.decompress(base64.urlsafe_b64decode(encrypted.encode())))
    except (ValueError, zlib.error):
        return None
    return [str(x) for x in data] if isinstance(data, list) else None


def expanded(body: JSON) -> list[str] | None:
    """The canonical messages the request's compaction block stands for (the first block of its first
    message, when that is a block the fake wrote), else None."""
    messages = body.get("messages") or []
    first = blocks(messages[0].get("content")) if messages and isinstance(messages[0], dict) else []
    if not first or not is_compaction(first[0]) or not first[0].get("content"):
        return None
    return _summarized(str(first[0].get("encrypted_content") or ""))


def _thinking(block: JSON) -> bool:
    return block.get("type") in ("thinking", "redacted_thinking")


def prefix_messages(body: JSON) -> tuple[list[str], int]:
    """The request's messages as thinking prefixes read them (each canonical, without its thinking),
    with a compaction block first read as the messages it stands for; and how many more entries than
    messages come before message 1 (the block's message then counts as what it summarized, followed
    by whatever else that message holds: kept turns of the same role join it)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    out = [
        canonical(
            {"role": m.get("role"), "content": [b for b in blocks(m.get("content")) if not _thinking(b)]}
        )
        for m in messages
    ]
    summarized = expanded(body)
    if summarized is None:
        return out, 0
    rest = [b for b in blocks(messages[0].get("content"))[1:] if not _thinking(b)]
    lead = summarized + ([canonical({"role": messages[0].get("role"), "content": rest})] if rest else [])
    return lead + out[1:], len(lead) - 1


def _block_fault(block: JSON, key: bytes) -> Fault | None:
    found = _SIGNATURE.match(str(block.get("signature") or ""))
    encrypted = str(block.get("encrypted_content") or "")
    if found is None:
        return _error("compaction_signature_invalid", "The `compaction` block's `signature` does not verify.")
    content_digest, changes_digest, mac = found[1], found[2], found[3]
    if not hmac.compare_digest(mac, _mac(key, "compaction", content_digest, changes_digest, encrypted)):
        return _error("compaction_signature_invalid", "The `compaction` block's `signature` does not verify.")
    if _digest(str(block.get("content"))) != content_digest:
        return _error(
            "compaction_content_mismatch",
            "The `compaction` block's `content` differs from the text its `signature` recorded.",
        )
    if _digest(canonical(block.get("tool_changes") or [])) != changes_digest:
        return _error(
            "compaction_tool_changes_mismatch",
            "The `compaction` block's `tool_changes` differs from what was returned with the block.",
        )
    return None


def anthropic_compaction_fault(body: JSON, headers: Mapping[str, str], key: bytes) -> Fault | None:
    """The 400 a request gets for its compaction (a compaction request, or a block it carries), else None."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    placed = [
        (i, j, b)
        for i, m in enumerate(messages)
        for j, b in enumerate(blocks(m.get("content")))
        if is_compaction(b)
    ]
    asks = body.get("compaction") is not None
    if (placed or asks) and not _has_beta(headers):  # invented text: the docs give none
        return Fault(
            400,
            f"compaction: this feature requires the `{COMPACT_BETA}` value in the `anthropic-beta` header.",
        )
    if (placed or asks) and str(body.get("model", "")) not in COMPACTION_MODELS:  # invented text
        return Fault(400, f"compaction: not supported for the model {body.get('model')!r}.")
    if any(is_compaction(b) for b in blocks(body.get("system"))):
        return _error("compaction_block_misplaced", "The `compaction` block is in a `system` message.")
    live = [b for _, _, b in placed if b.get("content") is not None]
    if len(live) > 1:
        return _error(
            "compaction_block_ambiguous", "`messages` holds more than one `compaction` block with content."
        )
    for i, j, _ in placed:
        if (i, j) != (0, 0):
            return _error(
                "compaction_block_misplaced",
                f"messages.{i}.content.{j}: the `compaction` block is not the first block of the "
                "conversation.",
            )
    for block in live:
        fault = _block_fault(block, key)
        if fault is not None:
            return fault
    if asks:
        return _request_fault(body, messages)
    return None


def _request_fault(body: JSON, messages: Sequence[JSON]) -> Fault | None:
    compaction = body.get("compaction")
    if not isinstance(compaction, dict) or compaction.get("type") != "summarize":
        return Fault(400, "compaction.type: Input should be 'summarize'")
    if body.get("context_management") is not None:  # invented text
        return Fault(400, "compaction: cannot be combined with `context_management`.")
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant" and any(
        b.get("type") == "tool_use" for b in blocks(last.get("content"))
    ):
        return _error(
            "compaction_incomplete_turn",
            "The compaction request ends on an `assistant` turn that is not finished.",
        )
    readable = [
        b
        for m in messages
        for b in blocks(m.get("content"))
        if b.get("type") not in ("thinking", "redacted_thinking")
    ]
    if not readable:
        return _error(
            "compaction_nothing_to_summarize",
            "`messages` holds no `user` or `assistant` content to summarize or adopt.",
        )
    return None


def default_summary(texts: Sequence[str]) -> str:
    """The fake's summary of what it was given: how much, and the last thing the user said."""
    said = [t for t in texts if t.strip()]
    last = " ".join(said[-1].split())[:200] if said else ""
    return f"Summary (written by the fake's compaction) of {len(texts)} messages. Last user words: {last}"


def anthropic_compaction_events(body: JSON, key: bytes, summary: str, usage: Mapping[str, Any]) -> list[JSON]:
    """The stream events of a compaction reply: one signed block, stop_reason "compaction"."""
    summarized, _ = prefix_messages(body)  # an earlier block in it: what that one stood for
    encrypted = base64.urlsafe_b64encode(zlib.compress(json.dumps(summarized).encode(), 9)).decode()
    changes: list[JSON] = []
    content_digest, changes_digest = _digest(summary), _digest(canonical(changes))
    mac = _mac(key, "compaction", content_digest, changes_digest, encrypted)
    signature = f"cmp1.{content_digest}.{changes_digest}.{mac}"
    block = {
        "type": "compaction",
        "content": summary,
        "encrypted_content": encrypted,
        "signature": signature,
        "tool_changes": changes,
    }
    message: JSON = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": 1,
            "cache_read_input_tokens": usage.get("cache_read_tokens", 0),
            "cache_creation_input_tokens": usage.get("cache_write_tokens", 0),
        },
    }
    return [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "compaction", "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 1)},
        },
        {"type": "message_stop"},
    ]


# -- OpenAI -------------------------------------------------------------------


def _item_seal(key: bytes, summary: str) -> str:
    payload = base64.urlsafe_b64encode(zlib.compress(summary.encode(), 9)).decode()
    return f"cpi1.{payload}.{_mac(key, 'compaction-item', payload)}"


def responses_compaction_fault(items: Sequence[JSON], key: bytes) -> Fault | None:
    """The 400 for an input compaction item whose encrypted_content is not the fake's (invented text)."""
    for n, item in enumerate(items):
        if item.get("type") != "compaction":
            continue
        found = _ITEM.match(str(item.get("encrypted_content") or ""))
        if found is None or not hmac.compare_digest(found[2], _mac(key, "compaction-item", found[1])):
            return Fault(
                400,
                f"The encrypted content of the compaction item at input[{n}] could not be verified.",
                kind="invalid_encrypted_content",
                param=f"input[{n}].encrypted_content",
            )
    return None


def responses_compacted(body: JSON, key: bytes, summary: str, usage: Mapping[str, Any]) -> JSON:
    """The body of a `/responses/compact` reply: the user's messages as sent, then one compaction item."""
    items = body.get("input")
    items = (
        [{"type": "message", "role": "user", "content": items}]
        if isinstance(items, str)
        else list(items or [])
    )
    users = [
        i
        for i in items
        if isinstance(i, dict) and i.get("role") == "user" and i.get("type", "message") == "message"
    ]
    compaction = {
        "type": "compaction",
        "id": f"cmp_{uuid.uuid4().hex[:24]}",
        "encrypted_content": _item_seal(key, summary),
    }
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response.compaction",
        "created_at": int(time.time()),
        "output": [*users, compaction],
        "usage": {
            "input_tokens": usage.get("input_tokens", 0),
            "input_tokens_details": {"cached_tokens": usage.get("cache_read_tokens", 0)},
            "output_tokens": usage.get("output_tokens", 1),
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.get("input_tokens", 0) + usage.get("output_tokens", 1),
        },
    }

"""Seals: how the fake signs a piece of reasoning to the model and to the conversation before it.

Both APIs hand reasoning back to the client as an opaque string (Anthropic's thinking `signature`,
a redacted block's `data`, OpenAI's `encrypted_content`) and check it when the client replays it.
The fake's version of that string is a *seal*:

    <model tag>.<ref>.<mac>.<filler>

The *model tag* names the model that wrote it (another model drops the block, it does not fail).
The *ref* is what the checker needs besides the prefix: for a thinking block the digest of the
thinking block before it (or "-"), for a reasoning item its own id. The *mac* is an HMAC under the
server's key over the model, the ref and the *prefix*: the conversation before the reasoning, in
canonical JSON. The *filler* pads the seal to about five characters per token of reasoning, so a
replayed seal costs about what the reasoning cost (see `prompt_cache.unit_text`).

*Canonical* JSON ignores what the providers say does not count: key order, formatting,
`cache_control` marks, and fields whose value is null (an SDK that sends `"citations": null`
back has not changed the text block).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["CHARS_PER_TOKEN", "Seal", "canonical", "digest", "holds", "same_model", "seal", "unseal"]

CHARS_PER_TOKEN = 5  # of a seal, per token of the reasoning it stands for
_SEAL = re.compile(r"^([0-9a-f]{8})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})(?:\.[A-Za-z0-9_-]*)?$")


@dataclass(frozen=True)
class Seal:
    tag: str
    ref: str
    mac: str


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k != "cache_control" and v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def canonical(value: Any) -> str:
    return json.dumps(_clean(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(text: str) -> str:
    """A short digest of a seal, as the next thinking block records it."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _tag(model: str) -> str:
    return hashlib.sha256(model.encode()).hexdigest()[:8]


def _mac(key: bytes, model: str, ref: str, prefix: Any) -> str:
    message = f"{model}\n{ref}\n{canonical(prefix)}".encode()
    return base64.urlsafe_b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode().rstrip("=")


def seal(key: bytes, model: str, ref: str, prefix: Any, tokens: int) -> str:
    """A seal over `prefix` for `model`, padded to about CHARS_PER_TOKEN characters per token."""
    head = f"{_tag(model)}.{ref}.{_mac(key, model, ref, prefix)}"
    want = max(0, CHARS_PER_TOKEN * tokens - len(head) - 1)
    filler, block = "", head.encode()
    while len(filler) < want:  # deterministic, so the same reply always gets the same seal
        block = hashlib.sha256(block).digest()
        filler += base64.urlsafe_b64encode(block).decode().rstrip("=")
    return f"{head}.{filler[:want]}"


def unseal(text: str) -> Seal | None:
    """The seal's parts, or None when the string is not one of the fake's seals."""
    found = _SEAL.match(text or "")
    return Seal(found[1], found[2], found[3]) if found else None


def holds(key: bytes, found: Seal, model: str, prefix: Any) -> bool:
    """True when the seal was made by `model` over exactly this prefix (and its own ref)."""
    if found.tag != _tag(model):
        return False
    return hmac.compare_digest(found.mac, _mac(key, model, found.ref, prefix))


def same_model(found: Seal, model: str) -> bool:
    return found.tag == _tag(model)

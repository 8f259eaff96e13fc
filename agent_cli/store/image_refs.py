"""An image written to the session log once: a history checkpoint names the ones already there.

    digest(data) -> str                       the sha256 of an image's base64 text
    by_reference(messages, logged) -> list    checkpoint messages (JSON) with each image already in
                                              the log written as its digest and no data
    resolved(messages, known) -> list         those messages with each digest's data put back; an image
                                              whose data is nowhere in the log becomes a line naming it

A checkpoint (`SessionLog.log_history`, after every compaction) holds the whole working history; the
images still in it were each logged with their message already, so writing their base64 again at
every checkpoint would grow the log by megabytes a compaction. Pure: JSON values in and out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, MutableSet, Sequence
from typing import Any

__all__ = ["by_reference", "digest", "image_digests", "resolved"]

JSON = dict[str, Any]


def digest(data: str) -> str:
    return hashlib.sha256(data.encode("ascii", "replace")).hexdigest()


def _images(block: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if block.get("type") == "image":
        return [block]
    if block.get("type") == "tool_result":
        return [i for i in block.get("images") or () if isinstance(i, Mapping)]
    return []


def image_digests(message: Mapping[str, Any]) -> dict[str, str]:
    """digest -> base64 of every image a message's JSON holds with its data."""
    found: dict[str, str] = {}
    for block in message.get("content") or ():
        if isinstance(block, Mapping):
            for image in _images(block):
                data = image.get("data")
                if isinstance(data, str) and data:
                    found[digest(data)] = data
    return found


def _swap(image: Mapping[str, Any], logged: MutableSet[str]) -> JSON:
    data = str(image.get("data") or "")
    key = digest(data)
    if key in logged:
        return {**image, "data": "", "sha256": key}
    logged.add(key)
    return dict(image)


def by_reference(messages: Sequence[JSON], logged: MutableSet[str]) -> list[JSON]:
    out: list[JSON] = []
    for message in messages:
        content: list[Any] = []
        for block in message.get("content") or ():
            if isinstance(block, Mapping) and block.get("type") == "image":
                content.append(_swap(block, logged))
            elif isinstance(block, Mapping) and block.get("type") == "tool_result" and block.get("images"):
                content.append({**block, "images": [_swap(i, logged) for i in block["images"]]})
            else:
                content.append(block)
        out.append({**message, "content": content})
    return out


def _missing(image: Mapping[str, Any]) -> str:
    return f"[image {image.get('name', '')}: its data is not in the session log]"


def _filled(image: Mapping[str, Any], known: Mapping[str, str]) -> JSON:
    if image.get("sha256") and not image.get("data"):
        return {**image, "data": known.get(str(image["sha256"])) or ""}
    return dict(image)


def resolved(messages: Sequence[Any], known: Mapping[str, str]) -> list[Any]:
    out: list[Any] = []
    for message in messages:
        if not isinstance(message, Mapping):
            out.append(message)
            continue
        content: list[Any] = []
        for block in message.get("content") or ():
            if not isinstance(block, Mapping):
                content.append(block)
            elif block.get("type") == "image" and block.get("sha256") and not block.get("data"):
                data = known.get(str(block["sha256"]))
                content.append({**block, "data": data} if data else {"type": "text", "text": _missing(block)})
            elif block.get("type") == "tool_result" and block.get("images"):
                images = [_filled(i, known) for i in block["images"] if isinstance(i, Mapping)]
                kept = [i for i in images if i.get("data")]
                lost = "".join(f"\n{_missing(i)}" for i in images if not i.get("data"))
                content.append({**block, "images": kept, "content": f"{block.get('content', '')}{lost}"})
            else:
                content.append(block)
        out.append({**message, "content": content})
    return out

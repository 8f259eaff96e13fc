"""Images in a request, as the fake reads them in each API's shape: found, checked, counted.

    SeenImage                       one image a request carried: its API's shape, type, pixels, bytes
    seen_images(body) -> list       every image of a request body, in order, any of the three shapes:
                                    Anthropic `{"type": "image", "source": {"type": "base64", ...}}`
                                    (in a user turn or a tool_result's content), Responses
                                    `{"type": "input_image", "image_url": "data:..."}` (in a message or a
                                    function_call_output's output), Chat `{"type": "image_url",
                                    "image_url": {"url": "data:..."}}`
    image_fault(api, body)          the 400 the real API gives a bad image: data that is not base64, bytes
                                    that are not the type declared, one past the size or pixel limits
    counted(api, body)              the body with each image's data replaced by text as long as its tokens
                                    (four characters a token, the fake's count), so a screenshot costs
                                    what the provider charges, not its base64 length

The limits and rules (each provider's "Images and vision" page, read 2026-12-05): Anthropic, 5 MB
of base64 an image, 8000 px an edge (2000 px with more than 20 images), 600 images a request, about
width * height / 750 tokens; OpenAI, 20 MB an image, 500 images a request, 85 + 170 tokens per
512 px tile after fitting 2048 px and a 768 px short side.
"""

from __future__ import annotations

import base64
import binascii
import copy
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .script import Fault
from .wire import JSON

__all__ = ["SeenImage", "counted", "image_fault", "seen_images"]

_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


@dataclass(frozen=True, slots=True)
class SeenImage:
    shape: str  # "anthropic", "input_image", "image_url"
    media_type: str
    width: int
    height: int
    size: int  # bytes of the image
    base64_chars: int


def _slots(node: Any) -> Iterator[tuple[dict[str, Any], str, str, str]]:
    """(the dict holding the data, the key of the data, shape, declared media type) for each image."""
    if isinstance(node, list):
        for item in node:
            yield from _slots(item)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    source = node.get("source")
    if kind == "image" and isinstance(source, dict) and source.get("type") == "base64":
        yield source, "data", "anthropic", str(source.get("media_type") or "")
        return
    if kind == "input_image" and isinstance(node.get("image_url"), str):
        yield node, "image_url", "input_image", ""
        return
    if kind == "image_url" and isinstance(node.get("image_url"), dict):
        yield node["image_url"], "url", "image_url", ""
        return
    for value in node.values():
        yield from _slots(value)


def _split(shape: str, raw: str, declared: str) -> tuple[str, str]:
    """(media type, base64 text) of one image's payload."""
    if shape == "anthropic":
        return declared, raw
    head, _, data = raw.partition(",")
    media = head.removeprefix("data:").removesuffix(";base64") if head.startswith("data:") else ""
    return media, data


def _decode(media: str, data: str) -> tuple[bytes, int, int] | str:
    """(bytes, width, height), or what is wrong with them."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "Image data is not valid base64."
    if not any(raw.startswith(m) for m in _MAGIC.get(media, ())):
        return f"Image does not match the provided media type {media}"
    from PIL import Image

    try:
        with Image.open(io.BytesIO(raw)) as image:
            width, height = image.size
    except (OSError, ValueError, SyntaxError):
        return "Could not process image"
    return raw, width, height


def seen_images(body: JSON) -> list[SeenImage]:
    found: list[SeenImage] = []
    for holder, key, shape, declared in _slots(body):
        media, data = _split(shape, str(holder.get(key) or ""), declared)
        decoded = _decode(media, data)
        if isinstance(decoded, str):
            continue
        raw, width, height = decoded
        found.append(SeenImage(shape, media, width, height, len(raw), len(data)))
    return found


def image_fault(api: str, body: JSON) -> Fault | None:
    slots = list(_slots(body))
    if not slots:
        return None
    anthropic = api == "anthropic"
    most = 600 if anthropic else 500
    if len(slots) > most:
        return Fault(400, f"Too many images in the request: {len(slots)} > {most}.")
    edge = 8000 if not anthropic or len(slots) <= 20 else 2000
    for holder, key, shape, declared in slots:
        media, data = _split(shape, str(holder.get(key) or ""), declared)
        if anthropic and len(data) > 5 * 1024 * 1024:
            return Fault(400, f"image exceeds 5 MB maximum: {len(data)} bytes > 5242880 bytes")
        decoded = _decode(media, data)
        if isinstance(decoded, str):
            return Fault(400, decoded)
        raw, width, height = decoded
        if not anthropic and len(raw) > 20 * 1024 * 1024:
            return Fault(400, "Image too large: at most 20MB per image.")
        if max(width, height) > edge:
            many = " for many-image requests" if edge == 2000 else ""
            said = f"At least one of the image dimensions exceed max allowed size{many}: {edge} pixels"
            return Fault(400, said)
    return None


def _tokens(api: str, width: int, height: int) -> int:
    if api == "anthropic":
        return math.ceil(width * height / 750)
    scale = min(1.0, 2048 / max(width, height, 1))
    w, h = width * scale, height * scale
    if min(w, h) > 768:
        w, h = w * 768 / min(w, h), h * 768 / min(w, h)
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def counted(api: str, body: JSON) -> JSON:
    """`body` with each image's data as text of four characters a token (the body itself when it
    holds none)."""
    if not any(True for _ in _slots(body)):
        return body
    body = copy.deepcopy(body)
    for holder, key, shape, declared in _slots(body):
        media, data = _split(shape, str(holder.get(key) or ""), declared)
        decoded = _decode(media, data)
        tokens = _tokens(api, decoded[1], decoded[2]) if not isinstance(decoded, str) else len(data) // 4
        holder[key] = "i" * (tokens * 4)
    return body

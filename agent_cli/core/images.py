"""An image in the conversation: the value every layer passes around (`ImageBlock`), and its JSON.

The bytes are already within the providers' limits when a block is made (tools/images.py reads a
file into one); the wires send it in their own shapes (an Anthropic `image` block, OpenAI's
`input_image` or `image_url` part), the token counter counts it by its pixels (tokens/images.py),
and L1 clears an old one like an old tool result (context/clear.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ImageBlock", "data_url", "image_from_json", "image_note"]


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image in the conversation (PNG, JPEG, GIF or WebP), as the providers take it: `data` is the
    file's bytes in base64, in its own format (`media_type`), already within the providers' limits
    (tools/images.py); `name` is the file it came from (untrusted text: a label, never markup);
    `width` and `height` are its pixels as sent, which its tokens are counted from (tokens/images.py)."""

    media_type: str
    data: str
    name: str
    width: int
    height: int

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "image",
            "media_type": self.media_type,
            "data": self.data,
            "name": self.name,
            "width": self.width,
            "height": self.height,
        }


def image_from_json(data: Mapping[str, Any]) -> ImageBlock:
    return ImageBlock(
        str(data["media_type"]), str(data["data"]), str(data.get("name") or ""),
        int(data.get("width") or 0), int(data.get("height") or 0),
    )


def data_url(block: ImageBlock) -> str:
    """The image as a `data:` URL (OpenAI's `input_image` and `image_url` take one)."""
    return f"data:{block.media_type};base64,{block.data}"


def image_note(block: ImageBlock) -> str:
    """What stands in for an image a model does not take: one line naming it."""
    size = f"{block.width}x{block.height} px"
    return f"[image {block.name} ({size}) not shown: this model does not take images]"

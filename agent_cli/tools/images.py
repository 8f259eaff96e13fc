"""Image files as the providers take them: recognised, checked, sent as they are or downscaled.

    image_type(head) -> str | None          "image/png", "image/jpeg", "image/gif", "image/webp" by
                                            the file's first bytes (its name is not trusted), else None
    load_image(data, name) -> LoadedImage   the bytes as an `ImageBlock` within LIMITS; ToolError
                                            (one clear line) for a corrupt, truncated or huge one
    LoadedImage.line                        what a tool result says about it, in one line

The limits are the providers' own, the stricter of the two where they differ, because a session's
history may go to either after `/model`:

- Anthropic, "Images and vision" (https://platform.claude.com/docs/en/build-with-claude/vision,
  read 2026-12-05 in a stored copy of the page): JPEG, PNG, GIF, WebP; at most 5 MB an image on the
  API (the base64 text, as Claude Code reads the limit); at most 8000x8000 px, and 2000x2000 px in a
  request with more than 20 images; up to 600 images a request (100 for 200k-window models) within
  32 MB a request; an image costs about width * height / 750 tokens, and one whose long edge passes
  1568 px is scaled down by the API.
- OpenAI, "Images and vision" (https://platform.openai.com/docs/guides/images-vision, read
  2026-12-05 in a stored copy of the page): PNG, JPEG, WEBP, non-animated GIF; up to 20 MB an image
  (50 MB of images a request), up to 500 images a request; tokens by 512 px tiles or 32 px
  patches (tokens/images.py).

So an image is sent unchanged, in its own format, when its base64 is at most 5 MiB and neither edge
passes 2000 px (a session that reads 20 screenshots must not trip the many-images rule); otherwise
it is scaled down (pillow) to fit, in its own format where that fits, else as JPEG; an animated GIF
sends its first frame (as PNG). Pillow is imported only here, only when an image is read.
"""

from __future__ import annotations

import base64
import io
import warnings
from dataclasses import dataclass
from typing import Any

from agent_cli.core.images import ImageBlock
from agent_cli.core.text import one_line
from agent_cli.tools.base import ToolError

__all__ = [
    "MAX_EDGE",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_BYTES",
    "LoadedImage",
    "image_type",
    "load_image",
]

MAX_BASE64 = 5 * 1024 * 1024  # Anthropic: 5 MB an image, counted as the base64 sent
MAX_IMAGE_BYTES = MAX_BASE64 * 3 // 4  # the file bytes whose base64 fits
MAX_EDGE = 2000  # Anthropic's edge limit once a request holds more than 20 images
MAX_FILE_BYTES = 64 * 1024 * 1024  # past this a file is not read as an image at all
MAX_PIXELS = 100_000_000  # a bigger canvas is refused before it is decoded (a decompression bomb)
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_SHORT = {v: k for k, v in _FORMATS.items()}


def image_type(head: bytes) -> str | None:
    """The media type a file's first bytes say it has, among the four the providers take."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True, slots=True)
class LoadedImage:
    block: ImageBlock
    original: tuple[int, int, int]  # width, height, bytes of the file as read
    changed: bool = False  # scaled down (or re-encoded) to fit the limits

    @property
    def line(self) -> str:
        """`[image NAME: PNG, 1280x800 px, 245 KB]`, saying when and why it was scaled down."""
        b = self.block
        kind = _SHORT.get(b.media_type, b.media_type)
        w, h, size = self.original
        if not self.changed:
            return f"[image {b.name}: {kind}, {w}x{h} px, {_size(size)}]"
        sent = len(b.data) * 3 // 4
        return (
            f"[image {b.name}: {w}x{h} px, {_size(size)}, scaled down to {b.width}x{b.height} px "
            f"{kind} ({_size(sent)}) to fit the providers' image limits]"
        )


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    return f"{max(1, round(n / 1024))} KB"


def load_image(data: bytes, name: str) -> LoadedImage:
    """`data` (a file named `name`) as an image block within the limits above. The name is
    written out as one safe line (it may hold control characters)."""
    shown = one_line(name)
    media = image_type(data[:16])
    if media is None:
        raise ToolError(f"{shown} is not a PNG, JPEG, GIF or WebP image")
    if len(data) > MAX_FILE_BYTES:
        raise ToolError(
            f"{shown} is too large to read as an image ({_size(len(data))}; at most {_size(MAX_FILE_BYTES)})"
        )
    image = _open(data, shown)
    width, height = image.size
    animated = bool(getattr(image, "is_animated", False))
    fits = len(data) <= MAX_IMAGE_BYTES and max(width, height) <= MAX_EDGE and not animated
    if fits:
        body, sent, size = data, media, (width, height)
    else:
        body, sent, size = _downscaled(image, media, shown)
    block = ImageBlock(sent, base64.b64encode(body).decode("ascii"), shown, size[0], size[1])
    return LoadedImage(block, (width, height, len(data)), not fits)


def _open(data: bytes, shown: str) -> Any:
    """The decoded image (every pixel read, so a truncated or corrupt file fails here, not at the API)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            w, h = image.size
            if w * h > MAX_PIXELS:
                raise ToolError(f"{shown} is too large to read as an image ({w}x{h} px)")
            image.load()
    except ToolError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ToolError(f"{shown} is too large to read as an image (too many pixels)") from None
    except UnidentifiedImageError:
        raise ToolError(f"{shown} is not a readable image (corrupt: its data does not decode)") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        why = one_line(str(exc))[:120] or type(exc).__name__
        raise ToolError(f"{shown} is not a readable image (corrupt or truncated: {why})") from None
    return image


def _downscaled(image: Any, media: str, shown: str) -> tuple[bytes, str, tuple[int, int]]:
    """The image scaled to fit MAX_EDGE and MAX_IMAGE_BYTES: its own format first, then JPEG."""
    from PIL import Image

    image.seek(0)  # an animated GIF: its first frame
    frame = image.copy()
    fmt = _SHORT[media]
    if fmt == "GIF":
        fmt = "PNG"  # a frame re-encoded as GIF loses colours; PNG keeps them and every provider takes it
    scale = min(1.0, MAX_EDGE / max(frame.size))
    for attempt in range(8):
        size = (max(1, int(frame.width * scale)), max(1, int(frame.height * scale)))
        resized = frame.resize(size, Image.Resampling.LANCZOS) if size != frame.size else frame
        body = _encode(resized, fmt)
        if len(body) <= MAX_IMAGE_BYTES:
            return body, _FORMATS[fmt], size
        if attempt >= 1 and fmt != "JPEG":
            fmt = "JPEG"  # a photo or a noisy screenshot as PNG: JPEG is a fraction of the size
        else:
            scale *= 0.75
    raise ToolError(f"{shown} could not be made small enough to send as an image")


def _encode(image: Any, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        image.convert("RGB").save(out, "JPEG", quality=85)
    elif fmt == "WEBP":
        image.save(out, "WEBP", quality=85)
    else:
        if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
            image = image.convert("RGBA")
        image.save(out, fmt, optimize=True)
    return out.getvalue()

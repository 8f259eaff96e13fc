"""What an image costs in a request's tokens, by the provider's own rule (pure arithmetic).

    image_tokens(width, height, rule) -> int

- "pixels", Anthropic's: "Images and vision" (https://platform.claude.com/docs/en/build-with-claude/vision,
  read 2026-12-05 in a stored copy): an image uses about width * height / 750 tokens; one whose
  long edge passes 1568 px, or past about 1.15 megapixels, is first scaled down by the API, so it
  costs what its scaled size costs (about 1,600 tokens at most).
- "tiles", OpenAI's: "Images and vision" (https://platform.openai.com/docs/guides/images-vision, read
  2026-12-05 in a stored copy): tile models scale the image to fit 2048 x 2048, then its short side
  to 768, and count 85 + 170 per 512 px tile; patch models count 32 px patches, at most 1,536. The
  larger of the two is taken, so a count never falls short whichever a model uses.
- "any": a model of neither (a local server's): the larger of both rules.

A count here is an estimate the next usage report corrects (the counter anchors on reports).
"""

from __future__ import annotations

import math
from typing import Literal, TypeAlias

__all__ = ["ImageRule", "image_tokens"]

ImageRule: TypeAlias = Literal["pixels", "tiles", "any"]  # Anthropic's rule, OpenAI's, the larger

_CLAUDE_EDGE = 1568
_CLAUDE_PIXELS = 1_150_000
_PATCH = 32
_MAX_PATCHES = 1536


def _anthropic(width: int, height: int) -> int:
    scale = min(1.0, _CLAUDE_EDGE / max(width, height), math.sqrt(_CLAUDE_PIXELS / (width * height)))
    return math.ceil(width * scale * height * scale / 750)


def _tiles(width: int, height: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    short = min(w, h)
    if short > 768:
        w, h = w * 768 / short, h * 768 / short
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def _patches(width: int, height: int) -> int:
    return min(math.ceil(width / _PATCH) * math.ceil(height / _PATCH), _MAX_PATCHES)


def image_tokens(width: int, height: int, rule: ImageRule = "any") -> int:
    """Tokens of a `width` x `height` image under `rule` (an image of unknown size: the most any
    rule charges for one)."""
    width, height = max(width, 1), max(height, 1)
    if rule == "pixels":
        return _anthropic(width, height)
    openai = max(_tiles(width, height), _patches(width, height))
    return openai if rule == "tiles" else max(openai, _anthropic(width, height))

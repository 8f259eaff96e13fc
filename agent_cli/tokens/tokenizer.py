"""`Tokenizer`: how one model's tokens are counted here, as the model table says (pure data).

The counter does not read model names: the model table (`providers/models.py`) knows which of
OpenAI's vocabularies a model uses (its count is then *exact*) and, for every other model, the
ratio of its tokens to cl100k_base's that a count starts from before the provider's reports
teach it better (`ratio.py`). The composition root hands the choice to `TokenCounter`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.tokens.encodings import EncodingName
from agent_cli.tokens.images import ImageRule
from agent_cli.tokens.ratio import START_RATIO

__all__ = ["Tokenizer"]


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """`encoding` counts the text; `exact`: it is the model's own vocabulary (no ratio is applied
    or learned); `start_ratio`: the provider's tokens per local token before any report (not exact);
    `images`: the provider's rule for an image's tokens."""

    encoding: EncodingName = "cl100k_base"
    exact: bool = False
    start_ratio: float = START_RATIO
    images: ImageRule = "any"  # how its images are counted (tokens/images.py)

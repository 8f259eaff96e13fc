"""The learned ratio: how many of a provider's tokens one tiktoken token is, for models it cannot count.

A counter starts from its `Tokenizer.start_ratio` (conservative, so the first compaction is early
rather than late; the model table picks it from these constants) and moves towards each sample a
usage report gives (`learned`), smoothed and clamped to [RATIO_MIN, RATIO_MAX]. Samples from small
requests are not taken: below `MIN_LEARN_RAW_TOKENS` the providers' fixed overheads swamp them. Pure.
"""

from __future__ import annotations

__all__ = [
    "MIN_LEARN_RAW_TOKENS",
    "NEW_TOKENIZER_FACTOR",
    "RATIO_MAX",
    "RATIO_MIN",
    "RATIO_SMOOTHING",
    "START_RATIO",
    "clamp",
    "learned",
]

RATIO_MIN = 0.8
RATIO_MAX = 2.0
RATIO_SMOOTHING = 0.5  # weight of a new sample; the old ratio keeps the rest
MIN_LEARN_RAW_TOKENS = 512  # below this, fixed provider overheads swamp the sample

# Where the learned ratio starts, before the first usage report: conservative, so the first
# compaction is early rather than late. Claude 4.7 and later (and every 5.x, Fable, Mythos) use a
# newer tokenizer that counts about 30% more tokens for the same text ("roughly 1x to 1.35x",
# Anthropic's Opus 5.5 migration guide and pricing page); which models do is the model table's rule.
START_RATIO = 1.25
NEW_TOKENIZER_FACTOR = 1.3


def clamp(ratio: float) -> float:
    """`ratio` within [RATIO_MIN, RATIO_MAX]."""
    return min(RATIO_MAX, max(RATIO_MIN, ratio))


def learned(ratio: float, sample: float) -> float:
    """The ratio after one more sample (reported tokens / local raw tokens)."""
    return clamp(RATIO_SMOOTHING * clamp(sample) + (1.0 - RATIO_SMOOTHING) * ratio)

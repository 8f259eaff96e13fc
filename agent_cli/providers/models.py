"""What we know about each model: window, output limit and prices.

Figures are from the providers' model and pricing pages (USD per million
tokens; Anthropic cache writes at the 5-minute rate; OpenAI has no separate
cache-write charge, so writes cost the input price). `lookup` is tolerant of
the spellings people use: date-stamped snapshots, `-latest` / `-0` aliases,
dotted versions and `provider/` prefixes. Unknown models get `None`; callers
then use `UNKNOWN_WINDOW`, which is deliberately small so an unknown local
model is compacted early rather than overflowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli.core.messages import Usage

__all__ = ["MODELS", "UNKNOWN_WINDOW", "ModelInfo", "cost", "lookup", "normalize"]

UNKNOWN_WINDOW = 32_000


@dataclass(frozen=True, slots=True)
class ModelInfo:
    name: str
    provider: str
    context_window: int
    max_output: int
    input_price: float
    output_price: float
    cache_read_price: float
    cache_write_price: float


def _claude(
    name: str, window: int, output: int, price_in: float, price_out: float, read: float = 0.1
) -> ModelInfo:
    # Anthropic's cache multipliers: reads 0.1x input (0.05x on the 5.5 models), 5-minute writes 1.25x.
    return ModelInfo(name, "anthropic", window, output, price_in, price_out, price_in * read, price_in * 1.25)


def _gpt(name: str, window: int, output: int, price_in: float, price_out: float, cached: float) -> ModelInfo:
    return ModelInfo(name, "openai", window, output, price_in, price_out, cached, price_in)


MODELS: dict[str, ModelInfo] = {
    m.name: m
    for m in (
        _claude("claude-opus-5-5", 1_000_000, 128_000, 4.0, 20.0, read=0.05),
        _claude("claude-opus-5", 1_000_000, 128_000, 5.0, 25.0),
        _claude("claude-sonnet-5-5", 1_000_000, 128_000, 2.0, 10.0, read=0.05),
        _claude("claude-sonnet-5", 1_000_000, 128_000, 2.0, 10.0),
        _claude("claude-haiku-5-5", 1_000_000, 128_000, 0.1, 0.5),
        _claude("claude-opus-4-6", 1_000_000, 128_000, 5.0, 25.0),
        _claude("claude-sonnet-4-6", 1_000_000, 128_000, 3.0, 15.0),
        _claude("claude-opus-4-5", 200_000, 64_000, 5.0, 25.0),
        _claude("claude-opus-4-1", 200_000, 32_000, 15.0, 75.0),
        _claude("claude-opus-4", 200_000, 32_000, 15.0, 75.0),
        _claude("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0),
        _claude("claude-sonnet-4", 200_000, 64_000, 3.0, 15.0),
        _claude("claude-3-7-sonnet", 200_000, 64_000, 3.0, 15.0),
        _claude("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0),
        _claude("claude-3-5-haiku", 200_000, 8_192, 0.8, 4.0),
        _gpt("gpt-5", 400_000, 128_000, 1.25, 10.0, 0.125),
        _gpt("gpt-5-mini", 400_000, 128_000, 0.25, 2.0, 0.025),
        _gpt("gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.5),
        _gpt("gpt-4.1-mini", 1_047_576, 32_768, 0.4, 1.6, 0.1),
        _gpt("gpt-4.1-nano", 1_047_576, 32_768, 0.1, 0.4, 0.025),
        _gpt("gpt-4o", 128_000, 16_384, 2.5, 10.0, 1.25),
        _gpt("gpt-4o-mini", 128_000, 16_384, 0.15, 0.6, 0.075),
        _gpt("o3", 200_000, 100_000, 2.0, 8.0, 0.5),
        _gpt("o4-mini", 200_000, 100_000, 1.1, 4.4, 0.275),
    )
}

# Older names for the same models.
_ALIASES = {
    "claude-4-opus": "claude-opus-4",
    "claude-4-sonnet": "claude-sonnet-4",
    "claude-opus-4-0": "claude-opus-4",
    "claude-sonnet-4-0": "claude-sonnet-4",
    "claude-sonnet-3-7": "claude-3-7-sonnet",
    "claude-haiku-3-5": "claude-3-5-haiku",
}
_PREFIX = re.compile(r"^(?:[a-z0-9_.-]+/)+")  # "anthropic/", "openai/", "openrouter/openai/"
_BEDROCK = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")  # "us.anthropic.claude-..."
_SUFFIXES = (
    re.compile(r"-v\d+(?::\d+)?$"),  # Bedrock "-v1:0"
    re.compile(r"@\d{8}$"),  # Vertex "@20250929"
    re.compile(r"-\d{8}$"),  # "-20250929"
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # "-2025-04-14"
    re.compile(r"-latest$"),
)


def normalize(name: str) -> str:
    """The table key a model name most likely means (it may still be unknown)."""
    key = _BEDROCK.sub("", _PREFIX.sub("", name.strip().lower()))
    for _ in range(2):  # "claude-3-7-sonnet-20250219-v1:0" carries two suffixes
        for suffix in _SUFFIXES:
            key = suffix.sub("", key)
    if key.startswith("claude"):
        key = key.replace(".", "-")  # "claude-sonnet-4.5" -> "claude-sonnet-4-5"
    return _ALIASES.get(key, key)


def lookup(name: str) -> ModelInfo | None:
    """The ModelInfo for `name` (any common spelling), or None when unknown."""
    return MODELS.get(normalize(name))


def cost(model_info: ModelInfo, usage: Usage) -> float:
    """USD for one usage report at the model's prices."""
    return (
        usage.input_tokens * model_info.input_price
        + usage.output_tokens * model_info.output_price
        + usage.cache_read_tokens * model_info.cache_read_price
        + usage.cache_write_tokens * model_info.cache_write_price
    ) / 1_000_000

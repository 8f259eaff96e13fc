"""The model table: lookups by every common spelling, and cost arithmetic."""

from __future__ import annotations

import pytest

from agent_cli.core.messages import Usage
from agent_cli.providers.factory import DEFAULT_MODELS
from agent_cli.providers.models import MODELS, UNKNOWN_WINDOW, cost, lookup, normalize


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-sonnet-4-0", "claude-sonnet-4"),
        ("claude-opus-4-0", "claude-opus-4"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("gpt-4.1", "gpt-4.1"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-4.1-nano", "gpt-4.1-nano"),
        ("openai/gpt-4o-2024-08-06", "gpt-4o"),
        ("GPT-4o-mini", "gpt-4o-mini"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("gpt-5-mini", "gpt-5-mini"),
        ("o3-2025-04-16", "o3"),
        ("o4-mini", "o4-mini"),
    ],
)
def test_lookup_tolerates_spellings(name: str, key: str) -> None:
    info = lookup(name)
    assert info is not None, normalize(name)
    assert info.name == key


@pytest.mark.parametrize("name", ["llama3.1:8b", "qwen2.5-coder", "gpt-4.2", "claude-sonnet-9", ""])
def test_unknown_models_are_none(name: str) -> None:
    assert lookup(name) is None


def test_table_is_sane() -> None:
    assert UNKNOWN_WINDOW == 32_000
    for info in MODELS.values():
        assert info.provider in ("anthropic", "openai")
        assert info.context_window > info.max_output > 0
        assert info.output_price >= info.input_price > info.cache_read_price > 0
        assert info.cache_write_price >= info.input_price
    for provider, model in DEFAULT_MODELS.items():
        found = lookup(model)
        assert found is not None and found.provider == provider


def test_cost() -> None:
    sonnet = lookup("claude-sonnet-4-5")
    assert sonnet is not None
    usage = Usage(
        input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000, cache_write_tokens=400_000
    )
    assert cost(sonnet, usage) == pytest.approx(3.0 + 1.5 + 0.6 + 1.5)
    gpt = lookup("gpt-4.1")
    assert gpt is not None
    assert cost(gpt, Usage(input_tokens=500_000, cache_read_tokens=500_000)) == pytest.approx(1.0 + 0.25)
    assert cost(gpt, Usage()) == 0.0

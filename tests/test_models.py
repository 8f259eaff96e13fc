"""The model table: lookups by every common spelling, and cost arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.app import model_limits
from agent_cli.config.load import Flags, load_settings
from agent_cli.config.settings import ProviderSettings
from agent_cli.core.messages import Usage
from agent_cli.providers.model_names import family_limits, normalize, tokenizer_for
from agent_cli.providers.models import MODELS, UNKNOWN_WINDOW, cost, lookup
from agent_cli.providers.registry import PROVIDERS
from agent_cli.providers.resolve import resolve_model


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
        assert info.provider in PROVIDERS
        assert info.context_window > info.max_output > 0
        assert info.output_price >= info.input_price > info.cache_read_price > 0
        assert info.cache_write_price >= info.input_price
    for provider, entry in PROVIDERS.items():
        found = lookup(entry.default_model)
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


def test_every_entry_names_its_source_and_date() -> None:
    for info in MODELS.values():
        assert info.source.startswith("https://"), info.name
        assert info.checked == "2026-11-30", info.name
        assert info.lifecycle in ("active", "deprecated", "retired")
        if info.lifecycle != "active":
            assert info.shutdown and info.replacement and lookup(info.replacement) is not None


def test_defaults_are_current_and_the_5_5_family_binds_its_thinking() -> None:
    for entry in PROVIDERS.values():
        info = lookup(entry.default_model)
        assert info is not None and info.lifecycle == "active"
    sonnet = lookup("claude-sonnet-5-5")
    assert sonnet is not None and sonnet.accepts.binds_thinking and not sonnet.accepts.sampling
    assert not sonnet.accepts.prefill and not sonnet.accepts.forced_tools and not sonnet.accepts.thinking_off
    assert lookup("claude-haiku-5-5").accepts.forced_tools  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "limits"),
    [
        ("claude-opus-6", (1_000_000, 128_000)),
        ("claude-sonnet-5-7-20270101", (1_000_000, 128_000)),
        ("claude-haiku-4-9", (1_000_000, 128_000)),
        ("claude-sonnet-4-2", (200_000, 64_000)),
        ("gpt-6.3-nova", (1_050_000, 128_000)),
        ("llama3.1:8b", None),
    ],
)
def test_unknown_models_of_a_known_family_get_its_window(name: str, limits: tuple[int, int] | None) -> None:
    assert lookup(name) is None
    assert family_limits(name) == limits


def test_long_requests_cost_the_long_rate() -> None:
    sol = lookup("gpt-6.2-sol")
    assert sol is not None
    short = cost(sol, Usage(input_tokens=200_000, output_tokens=1_000))
    long = cost(sol, Usage(input_tokens=300_000, output_tokens=1_000))
    assert short == pytest.approx((200_000 * 2 + 1_000 * 10) / 1e6)
    assert long == pytest.approx((300_000 * 4 + 1_000 * 15) / 1e6)


def test_lifecycle_and_effort_warnings(tmp_path: Path) -> None:
    settings = load_settings(
        config_path=None, env={"HOME": str(tmp_path)}, flags=Flags(effort="none"), cwd=tmp_path
    )
    _, _, retired = model_limits(settings, resolve_model(settings.provider, "claude-opus-4-1"))
    assert (
        retired is not None
        and "retired on 2026-08-05" in retired.message
        and "claude-opus-5-5" in retired.message
    )
    _, _, effort = model_limits(settings, resolve_model(settings.provider, "gpt-6.2-sol"))
    assert effort is not None and "does not take effort 'none'" in effort.message
    window, _, unknown = model_limits(settings, resolve_model(settings.provider, "claude-opus-6"))
    assert window == 1_000_000 and unknown is None
    window, _, asked = model_limits(
        settings, resolve_model(settings.provider, "mystery"), asked=(64_000, 4_000)
    )
    assert window == 64_000 and asked is None


@pytest.mark.parametrize(
    ("model", "provider", "expected"),
    [
        ("gpt-4o", "openai", ("o200k_base", True)),
        ("gpt-4o-mini-2024-07-18", "openai", ("o200k_base", True)),
        ("gpt-4.1-nano", "openai", ("o200k_base", True)),
        ("gpt-5", "openai", ("o200k_base", True)),
        ("o1-preview", "openai", ("o200k_base", True)),
        ("o3", "openai", ("o200k_base", True)),
        ("o4-mini", "openai", ("o200k_base", True)),
        ("openai/gpt-4o", "openai", ("o200k_base", True)),
        ("ft:gpt-4o-mini:acme::abc123", "openai", ("o200k_base", True)),
        ("gpt-4", "openai", ("cl100k_base", True)),
        ("gpt-4-turbo", "openai", ("cl100k_base", True)),
        ("gpt-3.5-turbo", "openai", ("cl100k_base", True)),
        ("claude-sonnet-4-5", "anthropic", ("cl100k_base", False)),
        ("gpt-4o", "anthropic", ("cl100k_base", False)),
        ("llama3.1:8b", "openai", ("cl100k_base", False)),
        ("o10-custom", "openai", ("cl100k_base", False)),
    ],
)
def test_the_table_says_which_vocabulary_counts_a_model(
    model: str, provider: str, expected: tuple[str, bool]
) -> None:
    tokenizer = tokenizer_for(model, provider)
    assert (tokenizer.encoding, tokenizer.exact) == expected
    assert resolve_model(ProviderSettings(name=provider), model).tokenizer == tokenizer  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "start"),
    [
        ("claude-sonnet-5-5", 1.625),
        ("claude-opus-4-7", 1.625),
        ("claude-fable-5-2", 1.625),
        ("claude-opus-4-6", 1.25),
        ("claude-haiku-4-5", 1.25),
        ("my-local-model", 1.25),
    ],
)
def test_the_ratio_starts_higher_for_the_newer_claude_tokenizer(model: str, start: float) -> None:
    assert tokenizer_for(model, "anthropic").start_ratio == start
    info = lookup(model)
    assert info is None or info.tokenizer == tokenizer_for(model, "anthropic")


def test_an_entry_knows_its_tokenizer_whatever_the_spelling() -> None:
    # The table's entry decides, so a dotted or dated spelling counts as the model it names.
    assert resolve_model(ProviderSettings(), "claude-opus-4.7").tokenizer.start_ratio == 1.625
    assert resolve_model(ProviderSettings(), "claude-sonnet-5-5-20261001").tokenizer.start_ratio == 1.625
    # Another provider's model (a gpt name sent to Anthropic) is counted as that provider serves it.
    assert not resolve_model(ProviderSettings(name="anthropic"), "gpt-4o").tokenizer.exact
    assert resolve_model(ProviderSettings(name="openai"), "gpt-4o").tokenizer.exact


def test_the_model_is_resolved_once_with_the_providers_default() -> None:
    for name, entry in PROVIDERS.items():
        choice = resolve_model(ProviderSettings(name=name))  # type: ignore[arg-type]
        assert choice.name == entry.default_model and choice.info is lookup(entry.default_model)
    assert resolve_model(ProviderSettings(model="claude-opus-5-5")).name == "claude-opus-5-5"
    assert (
        resolve_model(ProviderSettings(model="claude-opus-5-5"), "claude-haiku-5-5").name
        == "claude-haiku-5-5"
    )


def test_the_effort_sent_is_one_the_model_takes() -> None:
    known = resolve_model(ProviderSettings(name="openai", effort="none"), "gpt-6.2-sol")
    assert known.effort is None  # gpt-6.2-sol refuses "none": its default is used
    assert resolve_model(ProviderSettings(name="openai", effort="high"), "gpt-6.2-sol").effort == "high"
    unknown = resolve_model(ProviderSettings(name="openai", effort="none"), "my-model")
    assert unknown.info is None and unknown.effort == "none"  # the table does not know: as set

"""What we know about each model: window, output limit, prices, what it accepts, and its lifecycle.

Each entry names the page its figures came from and the date they were read
there (`source`, `checked`); `note` says what that source leaves uncertain.
The entry's shape is `model_info.py`. Around the table:

- `lookup` is tolerant of the spellings people use: date-stamped snapshots,
  `-latest` / `-0` aliases, dotted versions, `provider/` and Bedrock prefixes
  (`model_names.normalize`).
- `cost` prices one usage report, with the long-context tier where a model
  has one (Haiku 5.5 above 100k input tokens, GPT-6.x above 272k).
- Each entry carries how its tokens are counted (`ModelInfo.tokenizer`), from
  `model_names.tokenizer_for`: a model the table does not know gets it from the
  same rules by name.
- The models that offer Anthropic's own compaction and web search, as its pages list them.

The rules that read a model's name (a family, a version, a spelling) are in
`model_names.py`, nowhere else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from agent_cli.core.messages import Usage
from agent_cli.providers.model_info import Accepts, Lifecycle, ModelInfo, Prices
from agent_cli.providers.model_names import image_family, normalize, tokenizer_for
from agent_cli.providers.registry import ANTHROPIC, OPENAI

__all__ = [
    "ANTHROPIC_COMPACTION_MODELS",
    "ANTHROPIC_SEARCH_MODELS",
    "MODELS",
    "UNKNOWN_WINDOW",
    "ModelInfo",
    "cost",
    "lookup",
]

UNKNOWN_WINDOW = 32_000

_ANTHROPIC = "https://platform.claude.com/docs/en"
_OPENAI = "https://developers.openai.com/api/docs"
_CHECKED = "2026-11-30"
_A = ANTHROPIC.name
_O = OPENAI.name
_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_GPT_EFFORTS = ("none", "low", "medium", "high", "xhigh", "max")


def _claude_5_5(default_effort: str, *, thinking_off: bool = False, forced_tools: bool = False) -> Accepts:
    """The 5.5 family and Fable: adaptive thinking on by default, bound to the conversation."""
    return Accepts(
        thinking="adaptive",
        thinks_by_default=True,
        thinking_off=thinking_off,
        display=True,
        efforts=_EFFORTS,
        default_effort=default_effort,
        sampling=False,
        prefill=False,
        forced_tools=forced_tools,
        binds_thinking=True,
    )


_ADAPTIVE = Accepts(thinking="adaptive", display=True, efforts=_EFFORTS, default_effort="high", prefill=False)
_EXTENDED = Accepts(thinking="extended")
_PLAIN = Accepts()


@dataclass(frozen=True, slots=True)
class _Life:
    lifecycle: Lifecycle
    shutdown: str
    replacement: str


_NOW = _Life("active", "", "")


def _deprecated(shutdown: str, replacement: str) -> _Life:
    return _Life("deprecated", shutdown, replacement)


def _retired(shutdown: str, replacement: str) -> _Life:
    return _Life("retired", shutdown, replacement)


def _entry(
    name: str,
    provider: str,
    limits: tuple[int, int, int | None],
    prices: tuple[float, float, float, float],
    accepts: Accepts,
    life: _Life,
    source: str,
    note: str = "",
    long: tuple[int, Prices] | None = None,
) -> ModelInfo:
    window, output, max_input = limits
    return ModelInfo(
        name,
        provider,
        window,
        output,
        Prices(*prices),
        dataclasses.replace(accepts, images=image_family(name)),
        max_input=max_input,
        long_context_from=long[0] if long else None,
        long_prices=long[1] if long else None,
        min_cacheable=_min_cacheable(name, provider),
        lifecycle=life.lifecycle,
        shutdown=life.shutdown or None,
        replacement=life.replacement or None,
        source=source,
        checked=_CHECKED,
        note=note,
        tokenizer=tokenizer_for(name, provider),
    )


# The shortest prefix each model caches, in tokens. Anthropic: the prompt-caching page's "Cache
# limitations" (platform.claude.com/docs/en/build-with-claude/prompt-caching, as stored in a copy of
# the page read 2026-12-05: Opus 4.6 / 4.5 and Haiku 4.5 4,096; Sonnet 4.6 2,048; Sonnet 4.5, Opus 4.1,
# Opus 4, Sonnet 4, Sonnet 3.7 1,024; Haiku 3.5 2,048); Opus 4.8 1,024, Opus 4.7 2,048, Opus 5 and
# Fable 5 512 from third-party copies of the current page (docs.litellm.ai, dev.to, read the same day).
# The 5.5 family, Fable 5.1/5.2 and Sonnet 5: not found stated; the default (1,024) applies.
# OpenAI: "Caching is enabled automatically for prompts that are 1024 tokens or longer"
# (developers.openai.com/api/docs/guides/prompt-caching, read 2026-12-05).
_MIN_CACHEABLE = {
    "claude-opus-4-6": 4096, "claude-opus-4-5": 4096, "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 2048, "claude-opus-4-7": 2048, "claude-3-5-haiku": 2048,
    "claude-sonnet-4-5": 1024, "claude-opus-4-1": 1024, "claude-opus-4": 1024, "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024, "claude-opus-4-8": 1024, "claude-sonnet-5": 1024,
    "claude-opus-5": 512, "claude-fable-5": 512,
}


def _min_cacheable(name: str, provider: str) -> int | None:
    return 1024 if provider == OPENAI.name else _MIN_CACHEABLE.get(name)


def _gpt_accepts(efforts: tuple[str, ...]) -> Accepts:
    return Accepts(efforts=efforts, default_effort="medium" if efforts else None)


def _gpt_long(prices: tuple[float, float, float, float]) -> tuple[int, Prices]:
    """GPT-6.x: "For requests with more than 272K input tokens, input and cache rates double and output
    costs 1.5 times the short-context rate for the full request" (the gpt-6.2-sol and gpt-6.1-terra pages)."""
    i, o, r, w = prices
    return 272_000, Prices(i * 2, o * 1.5, r * 2, w * 2)


_M = 1_000_000
_1M: tuple[int, int, int | None] = (_M, 128_000, None)
_200K: tuple[int, int, int | None] = (200_000, 64_000, None)
_GPT5_EFFORTS = ("minimal", "low", "medium", "high")
_O_EFFORTS = ("low", "medium", "high")
_GPT6 = (1_050_000, 128_000, 922_000)
_HAIKU_LONG = (100_000, Prices(0.50, 2.50, 0.05, 0.625))
_PRICING = f"{_ANTHROPIC}/about-claude/pricing"
_A_DEPR = f"{_ANTHROPIC}/about-claude/model-deprecations"
_O_DEPR = f"{_OPENAI}/deprecations"
_SOL = (2.0, 10.0, 0.10, 2.5)
_SOL_62 = _SOL
_TERRA_61 = (1.0, 5.0, 0.05, 1.25)
_ASTRA_62 = (8.0, 40.0, 0.40, 10.0)
_LUNA = (0.10, 0.50, 0.01, 0.125)
_3P = "from third-party copies of the page (the official page was not reachable)"

# fmt: off
_ENTRIES: tuple[ModelInfo, ...] = (
    # Anthropic: current
    _entry("claude-opus-5-5", _A, _1M, (4.0, 20.0, 0.20, 5.0),
           _claude_5_5("medium"), _NOW, f"{_ANTHROPIC}/models/opus-5-5/overview"),
    _entry("claude-sonnet-5-5", _A, _1M, (2.0, 10.0, 0.20, 2.5),
           _claude_5_5("high"), _NOW, f"{_ANTHROPIC}/models/sonnet-5-5/overview"),
    # Haiku 5.5 takes thinking off (at effort high or below) and forced tool use (then it does not think).
    _entry("claude-haiku-5-5", _A, _1M, (0.10, 0.50, 0.01, 0.125),
           _claude_5_5("medium", thinking_off=True, forced_tools=True), _NOW,
           f"{_ANTHROPIC}/models/haiku-5-5/overview", long=_HAIKU_LONG,
           note="whether cached tokens count toward the 100k price line is not stated"),
    _entry("claude-fable-5-2", _A, _1M, (8.0, 40.0, 0.20, 10.0),
           _claude_5_5("high"), _NOW, f"{_ANTHROPIC}/models/fable-5-2/whats-new-fable-5-2",
           note="cache prices from third-party release notes; request rules taken as Fable 5.1's"),
    _entry("claude-fable-5-1", _A, _1M, (10.0, 50.0, 0.25, 12.5),
           _claude_5_5("high"), _NOW, f"{_ANTHROPIC}/models/fable-5-1/whats-new-fable-5-1"),
    # Anthropic: legacy, still served
    _entry("claude-opus-5", _A, _1M, (5.0, 25.0, 0.50, 6.25), _ADAPTIVE, _NOW, _PRICING),
    _entry("claude-sonnet-5", _A, _1M, (2.0, 10.0, 0.20, 2.5), _ADAPTIVE, _NOW, _PRICING),
    _entry("claude-fable-5", _A, _1M, (10.0, 50.0, 1.0, 12.5), _ADAPTIVE, _NOW, _PRICING),
    _entry("claude-opus-4-8", _A, _1M, (5.0, 25.0, 0.50, 6.25), _ADAPTIVE, _NOW, _PRICING),
    _entry("claude-opus-4-7", _A, _1M, (5.0, 25.0, 0.50, 6.25), _ADAPTIVE, _NOW, _PRICING),
    _entry("claude-opus-4-6", _A, _1M, (5.0, 25.0, 0.50, 6.25), _ADAPTIVE, _NOW, _PRICING),
    _entry("claude-sonnet-4-6", _A, _1M, (3.0, 15.0, 0.30, 3.75), _ADAPTIVE, _NOW,
           _PRICING),
    _entry("claude-haiku-4-5", _A, _200K, (1.0, 5.0, 0.10, 1.25), _EXTENDED, _NOW,
           _PRICING),
    _entry("claude-opus-4-5", _A, _200K, (5.0, 25.0, 0.50, 6.25), _EXTENDED,
           _deprecated("2027-01-22", "claude-opus-5-5"), _A_DEPR, note="date as listed by the anthropic SDK"),
    # Anthropic: retired (requests fail; kept so the name gets a clear warning)
    _entry("claude-sonnet-4-5", _A, _200K, (3.0, 15.0, 0.30, 3.75), _EXTENDED,
           _retired("2026-11-30", "claude-sonnet-5-5"), _A_DEPR, note="date as listed by the anthropic SDK"),
    _entry("claude-opus-4-1", _A, (200_000, 32_000, None), (15.0, 75.0, 1.5, 18.75), _EXTENDED,
           _retired("2026-08-05", "claude-opus-5-5"), _A_DEPR),
    _entry("claude-opus-4", _A, (200_000, 32_000, None), (15.0, 75.0, 1.5, 18.75), _EXTENDED,
           _retired("2026-06-15", "claude-opus-5-5"), _A_DEPR),
    _entry("claude-sonnet-4", _A, _200K, (3.0, 15.0, 0.30, 3.75), _EXTENDED,
           _retired("2026-06-15", "claude-sonnet-5-5"), _A_DEPR),
    _entry("claude-3-7-sonnet", _A, _200K, (3.0, 15.0, 0.30, 3.75), _EXTENDED,
           _retired("2026-02-19", "claude-sonnet-5-5"), _A_DEPR),
    _entry("claude-3-5-haiku", _A, (200_000, 8_192, None), (0.8, 4.0, 0.08, 1.0), _PLAIN,
           _retired("2026-02-19", "claude-haiku-5-5"), _A_DEPR),
    # OpenAI: current
    _entry("gpt-6.2-sol", _O, _GPT6, _SOL_62, _gpt_accepts(_GPT_EFFORTS[1:]), _NOW,
           f"{_OPENAI}/models/gpt-6.2-sol", long=_gpt_long(_SOL_62),
           note="the API rejects effort none (third parties say minimal too)"),
    _entry("gpt-6.2-astra", _O, _GPT6, _ASTRA_62, _gpt_accepts(_GPT_EFFORTS[1:]), _NOW,
           f"{_OPENAI}/models/gpt-6.2-astra", long=_gpt_long(_ASTRA_62),
           note=_3P + "; cached input inferred"),
    _entry("gpt-6.1-sol", _O, _GPT6, _SOL, _gpt_accepts(_GPT_EFFORTS[1:]), _NOW,
           f"{_OPENAI}/models/gpt-6.1-sol", long=_gpt_long(_SOL), note=_3P),
    _entry("gpt-6.1-terra", _O, _GPT6, _TERRA_61, _gpt_accepts(_GPT_EFFORTS), _NOW,
           f"{_OPENAI}/models/gpt-6.1-terra", long=_gpt_long(_TERRA_61)),
    _entry("gpt-6-sol", _O, _GPT6, (2.0, 10.0, 0.20, 2.5), _gpt_accepts(_GPT_EFFORTS), _NOW,
           f"{_OPENAI}/models/gpt-6-sol"),
    _entry("gpt-6-astra", _O, _GPT6, (10.0, 50.0, 1.0, 12.5), _gpt_accepts(_GPT_EFFORTS[1:]), _NOW,
           f"{_OPENAI}/models/gpt-6-astra", note=_3P),
    _entry("gpt-6-luna", _O, _GPT6, _LUNA, _gpt_accepts(_GPT_EFFORTS), _NOW,
           f"{_OPENAI}/models/gpt-6-luna", long=_gpt_long(_LUNA),
           note="read on the page's Japanese edition (ja-JP): the same figures, the 272K rule included"),
    _entry("gpt-5.6-sol", _O, (1_050_000, 128_000, None), (4.0, 20.0, 0.40, 4.0),
           _gpt_accepts(_GPT_EFFORTS), _NOW, f"{_OPENAI}/models/gpt-5.6-sol",
           note=_3P + "; their prices conflict ($4/$20 and $5/$30)"),
    _entry("gpt-5.6-terra", _O, (1_050_000, 128_000, None), (2.0, 12.0, 0.20, 2.0),
           _gpt_accepts(_GPT_EFFORTS), _NOW, f"{_OPENAI}/models/gpt-5.6-terra", note=_3P),
    _entry("gpt-5.6-luna", _O, (1_050_000, 128_000, None), (0.20, 1.20, 0.02, 0.20),
           _gpt_accepts(_GPT_EFFORTS), _NOW, f"{_OPENAI}/models/gpt-5.6-luna", note=_3P),
    # OpenAI: deprecated (they answer until their shutdown date)
    _entry("gpt-5", _O, (400_000, 128_000, None), (1.25, 10.0, 0.125, 1.25),
           _gpt_accepts(_GPT5_EFFORTS), _deprecated("2026-12-11", "gpt-6.1-sol"), _O_DEPR),
    _entry("gpt-5-mini", _O, (400_000, 128_000, None), (0.25, 2.0, 0.025, 0.25),
           _gpt_accepts(_GPT5_EFFORTS), _deprecated("2026-12-11", "gpt-6.1-terra"),
           _O_DEPR),
    _entry("o3", _O, (200_000, 100_000, None), (2.0, 8.0, 0.5, 2.0), _gpt_accepts(_O_EFFORTS),
           _deprecated("2026-12-11", "gpt-6.1-sol"), _O_DEPR),
    _entry("gpt-4.1", _O, (1_047_576, 32_768, None), (2.0, 8.0, 0.5, 2.0), _PLAIN,
           _deprecated("2027-01-14", "gpt-6-luna"), _O_DEPR),
    _entry("gpt-4.1-mini", _O, (1_047_576, 32_768, None), (0.4, 1.6, 0.1, 0.4), _PLAIN,
           _deprecated("2027-01-14", "gpt-6-luna"), _O_DEPR),
    _entry("gpt-4o", _O, (128_000, 16_384, None), (2.5, 10.0, 1.25, 2.5), _PLAIN,
           _deprecated("2027-01-14", "gpt-6-luna"), _O_DEPR),
    _entry("gpt-4o-mini", _O, (128_000, 16_384, None), (0.15, 0.6, 0.075, 0.15), _PLAIN,
           _deprecated("2027-01-14", "gpt-6-luna"), _O_DEPR),
    # OpenAI: retired
    _entry("gpt-4.1-nano", _O, (1_047_576, 32_768, None), (0.1, 0.4, 0.025, 0.1), _PLAIN,
           _retired("2026-10-23", "gpt-6-luna"), _O_DEPR),
    _entry("o4-mini", _O, (200_000, 100_000, None), (1.1, 4.4, 0.275, 1.1),
           _gpt_accepts(_O_EFFORTS), _retired("2026-10-23", "gpt-6.1-terra"), _O_DEPR),
)
# fmt: on

MODELS: dict[str, ModelInfo] = {m.name: m for m in _ENTRIES}


def lookup(name: str) -> ModelInfo | None:
    """The ModelInfo for `name` (any common spelling), or None when unknown."""
    return MODELS.get(normalize(name))


def cost(model_info: ModelInfo, usage: Usage) -> float:
    """USD for one usage report at the model's prices (its long-context tier when the request was long)."""
    prices = model_info.prices
    long_from = model_info.long_context_from
    if model_info.long_prices and long_from is not None and usage.prompt_tokens > long_from:
        prices = model_info.long_prices
    return (
        usage.input_tokens * prices.input
        + usage.output_tokens * prices.output
        + usage.cache_read_tokens * prices.cache_read
        + usage.cache_write_tokens * prices.cache_write
    ) / 1_000_000


# The models Anthropic's on-demand compaction pages list under `supportedModels` (beta
# `compact-2026-09-04`; platform.claude.com/docs/en/build-with-claude/compaction-keep-recent-turns,
# read 2026-12-02), for `context.summarizer = "native"` (providers/native_support.py).
ANTHROPIC_COMPACTION_MODELS = frozenset(
    {
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-fable-5",
        "claude-mythos-5",
        "claude-mythos-preview",
        "claude-opus-5-5",
        "claude-opus-5",
        "claude-opus-4-8",
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-sonnet-5-5",
        "claude-sonnet-5",
        "claude-sonnet-4-6",
        "claude-haiku-5-5",
    }
)

# The models Anthropic's web search tool page lists under `supportedModels`
# (platform.claude.com/docs/en/build-with-claude/tool-use/web-search-tool, read 2026-12-05), with
# the aliases of its dated snapshots; for the provider's own search (providers/server_search.py).
ANTHROPIC_SEARCH_MODELS = frozenset(
    {
        *("claude-fable-5-2", "claude-mythos-5-2", "claude-fable-5-1", "claude-mythos-5-1"),
        *("claude-fable-5", "claude-mythos-5", "claude-mythos-preview", "claude-opus-5-5"),
        *("claude-opus-5", "claude-sonnet-5-5", "claude-sonnet-5", "claude-haiku-5-5"),
        *("claude-haiku-4-5-20251001", "claude-haiku-4-5", "claude-opus-4-8", "claude-opus-4-7"),
        *("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-5-20251101", "claude-opus-4-5"),
        *("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    }
)

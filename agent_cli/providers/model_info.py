"""The shape of a model table entry: limits, prices, what the model accepts, its lifecycle, its source.

`Accepts` says what a model takes in a request, so no request sends what a
model rejects: the thinking modes, effort levels, whether sampling
parameters, a prefilled assistant turn or forced tool use are allowed, and
whether its thinking blocks are bound to the conversation (the prefix check), and whether it
takes images.
`tokenizer` says how the model's tokens are counted here (`tokens.Tokenizer`).
The entries themselves are in `models.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from agent_cli.billing.automatic import IN_MEMORY_SECONDS, WRITTEN_SECONDS
from agent_cli.billing.prices import CachePrice, CachePrices, CacheTerms
from agent_cli.tokens.tokenizer import Tokenizer

__all__ = ["Accepts", "Lifecycle", "ModelInfo", "Prices", "Thinking", "cache_price", "cache_terms"]

Thinking: TypeAlias = Literal["none", "extended", "adaptive"]
Lifecycle: TypeAlias = Literal["active", "deprecated", "retired"]


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens. `cache_write` is the 5-minute (Anthropic) or 30-minute (OpenAI) rate."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True, slots=True)
class Accepts:
    """What a model takes in a request (the rest is rejected with a 400)."""

    thinking: Thinking = "none"  # "adaptive": thinking.type adaptive; "extended": budget_tokens only
    thinks_by_default: bool = False  # replies begin with thinking blocks unless turned off
    thinking_off: bool = True  # thinking.type "disabled" is accepted
    display: bool = False  # thinking.display (summarized / omitted) is accepted
    efforts: tuple[str, ...] = ()  # accepted effort levels; () = no effort setting
    default_effort: str | None = None
    sampling: bool = True  # non-default temperature / top_p / top_k
    prefill: bool = True  # a final assistant turn
    forced_tools: bool = True  # tool_choice any / a named tool
    binds_thinking: bool = False  # thinking blocks are bound to the prefix before them
    images: bool = False  # image input (PNG, JPEG, GIF, WebP); without it an image is sent as a line


@dataclass(frozen=True, slots=True)
class ModelInfo:
    name: str
    provider: str  # a name in the provider registry (`registry.py`)
    context_window: int
    max_output: int
    prices: Prices
    accepts: Accepts = field(default_factory=Accepts)
    max_input: int | None = None  # where the provider caps input below the window (OpenAI)
    long_context_from: int | None = None  # input tokens above which `long_prices` apply to the request
    long_prices: Prices | None = None
    min_cacheable: int | None = None  # the shortest prefix the provider caches (tokens); None: not stated
    lifecycle: Lifecycle = "active"
    shutdown: str | None = None  # ISO date the model stops (or stopped) answering
    replacement: str | None = None
    source: str = ""  # the page the figures came from
    checked: str = ""  # the date they were read there
    note: str = ""  # what the source leaves uncertain
    tokenizer: Tokenizer = field(default_factory=Tokenizer)  # how its tokens are counted here

    @property
    def input_limit(self) -> int:
        return self.max_input or self.context_window

    # Flat price accessors: the figures /cost and the benchmarks read most.
    @property
    def input_price(self) -> float:
        return self.prices.input

    @property
    def output_price(self) -> float:
        return self.prices.output

    @property
    def cache_read_price(self) -> float:
        return self.prices.cache_read

    @property
    def cache_write_price(self) -> float:
        return self.prices.cache_write


DEFAULT_MIN_CACHEABLE = 1024  # where the table states none: the common minimum


def _cache_prices(p: Prices) -> CachePrices:
    return CachePrices.from_rates(p.input, p.cache_read, p.cache_write)


def cache_terms(info: ModelInfo) -> CacheTerms:
    """The model's cache terms for `agent_cli.billing`: its prices (the long tier included) and minimum."""
    prices = _cache_prices(info.prices)
    if info.long_prices is not None and info.long_context_from is not None:
        prices = CachePrices(
            prices.input, prices.cache_read, prices.write_5m, prices.write_1h,
            long_from=info.long_context_from, long=_cache_prices(info.long_prices),
        )
    return CacheTerms(prices, info.min_cacheable or DEFAULT_MIN_CACHEABLE)


def cache_price(wire: str, info: ModelInfo | None) -> CachePrice:
    """What the session's prompt cache charges, for the engine's priced choices, by the wire it
    speaks (`registry.wire_for`) and its model: Anthropic's explicit breakpoints on the Messages
    wire; OpenAI's automatic prefix cache on its own endpoint (Responses, Chat), at the model's
    cached-input and cache-write prices; a compatible server's own cache, which costs nothing."""
    prices = cache_terms(info).prices if info is not None else None
    if wire == "messages":
        return CachePrice.anthropic(prices)
    if wire == "chat-compatible":
        return CachePrice.server()
    writes = prices is not None and prices.write_5m > prices.input
    # In memory 5 minutes (the short end of "5 to 10"), 30 where a write is priced: as billing keeps it.
    return CachePrice.automatic(prices, WRITTEN_SECONDS if writes else IN_MEMORY_SECONDS)

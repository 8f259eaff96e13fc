"""What a cached prompt costs: the prices a caller hands in, and one request's bill.

A *bill* splits a request's input tokens four ways: uncached input, cache read, cache write at
the 5-minute TTL, cache write at the 1-hour TTL (their sum is the prompt). Its cost is given in
USD at the model's prices and in *token-equivalents*: input 1, read 0.1, 5-minute write 1.25,
1-hour write 2 (Anthropic's multipliers, the unit the benchmarks compare in whatever the model).
The prices come in as a value (`CachePrices`), built by the caller from the model table, so this
folder knows no model. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "TE_READ",
    "TE_WRITE_1H",
    "TE_WRITE_5M",
    "Bill",
    "CachePrice",
    "CachePrices",
    "CacheTerms",
    "Ttl",
    "ttl_seconds",
]

Ttl: TypeAlias = Literal["5m", "1h"]

TE_READ = 0.1
TE_WRITE_5M = 1.25
TE_WRITE_1H = 2.0


def ttl_seconds(ttl: Ttl) -> float:
    return 3600.0 if ttl == "1h" else 300.0


@dataclass(frozen=True, slots=True)
class CachePrices:
    """USD per million tokens. `long_from`: a request whose prompt is longer than this many
    tokens is billed at `long` instead (the long-context tier), where the model has one."""

    input: float
    cache_read: float
    write_5m: float
    write_1h: float
    long_from: int | None = None
    long: CachePrices | None = None

    @classmethod
    def from_rates(
        cls, input: float, cache_read: float, cache_write: float, *, write_1h: float | None = None
    ) -> CachePrices:
        """Anthropic's 1-hour write is 2x the input price where the table gives none."""
        return cls(input, cache_read, cache_write, 2.0 * input if write_1h is None else write_1h)

    def for_prompt(self, prompt_tokens: int) -> CachePrices:
        """The prices a request of `prompt_tokens` input tokens is billed at."""
        if self.long is not None and self.long_from is not None and prompt_tokens > self.long_from:
            return self.long
        return self


FREE = CachePrices(0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class CachePrice:
    """What a session's prompt cache charges, as the engine weighs it: a token read back and a token
    written, as multiples of the uncached input price, how long an entry lives unused (seconds),
    whether writes happen only at marked breakpoints (`marks`: Anthropic) or every prefix sent is
    kept by itself (OpenAI, a compatible server), and whether anything is priced at all (`free`: a
    server's own prefix cache saves time, not money; decisions then go by tokens). The default is
    Anthropic's 5-minute rule. docs/cost-model.md gives each provider's source."""

    read: float = TE_READ
    write: float = TE_WRITE_5M
    ttl: float = 300.0
    marks: bool = True
    free: bool = False
    write_hour: float = 2.0  # a 1-hour write (Anthropic's `ttl: "1h"`), where there is one

    @staticmethod
    def anthropic(prices: CachePrices | None = None) -> CachePrice:
        """Explicit breakpoints at the model's read and 5-minute write prices (0.1x and 1.25x where
        the table has no model)."""
        if prices is None or prices.input <= 0:
            return CachePrice()
        return CachePrice(
            prices.cache_read / prices.input, prices.write_5m / prices.input, ttl_seconds("5m"),
            write_hour=prices.write_1h / prices.input,
        )  # fmt: skip

    @staticmethod
    def automatic(prices: CachePrices | None, ttl: float) -> CachePrice:
        """OpenAI's automatic prefix cache: any earlier prefix read back at the model's cached-input
        ratio; what is sent new costs the input price, or the model's cache-write price where the
        table lists one above it (then every prefix sent is written at that price)."""
        if prices is None or prices.input <= 0:
            return CachePrice(read=0.1, write=1.0, ttl=ttl, marks=False)
        write = max(prices.write_5m, prices.input) / prices.input
        return CachePrice(prices.cache_read / prices.input, write, ttl, marks=False)

    @staticmethod
    def server() -> CachePrice:
        """A compatible server's own prefix cache: kept while it runs, no price."""
        return CachePrice(0.0, 0.0, float("inf"), marks=False, free=True)


@dataclass(frozen=True, slots=True)
class CacheTerms:
    """One model's cache terms: its prices and the shortest prefix it caches (tokens)."""

    prices: CachePrices
    minimum: int = 1024


@dataclass(frozen=True, slots=True)
class Bill:
    """One request's input side as the provider bills it."""

    input: int = 0
    read: int = 0
    write_5m: int = 0
    write_1h: int = 0
    usd: float = 0.0

    @property
    def write(self) -> int:
        return self.write_5m + self.write_1h

    @property
    def prompt(self) -> int:
        return self.input + self.read + self.write

    @property
    def token_equivalents(self) -> float:
        return self.input + TE_READ * self.read + TE_WRITE_5M * self.write_5m + TE_WRITE_1H * self.write_1h

    def __add__(self, other: Bill) -> Bill:
        return Bill(
            self.input + other.input,
            self.read + other.read,
            self.write_5m + other.write_5m,
            self.write_1h + other.write_1h,
            self.usd + other.usd,
        )


def priced(input: int, read: int, write_5m: int, write_1h: int, prices: CachePrices) -> Bill:
    """The bill for these counts at `prices` (its long tier when the prompt is long)."""
    p = prices.for_prompt(input + read + write_5m + write_1h)
    usd = (input * p.input + read * p.cache_read + write_5m * p.write_5m + write_1h * p.write_1h) / 1e6
    return Bill(input, read, write_5m, write_1h, usd)

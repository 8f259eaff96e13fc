"""Automatic prefix caches: OpenAI's, and a compatible server's own (vLLM, llama.cpp).

OpenAI caches by itself: every request's prefixes are kept, and a later request reads the
longest one it starts with, counted from `OPENAI_MINIMUM` (1,024) tokens on in `OPENAI_STEP`
(128-token) steps (`cached_length`). Requests are routed by a hash of the prompt's start and
the `prompt_cache_key`: requests with different keys do not share entries here. An entry is
kept `in_memory` 5 to 10 minutes of inactivity (at most an hour; we take 5, the short end) or,
with extended retention, 24 hours; on a model that charges for cache writes (GPT-5.6 and later)
the write buys 30 minutes ("The cache write price is for 30 minutes of retention", the gpt-6.2-sol
page). Cached input is billed at the model's cached-input price; there is no write premium: what
is not read is billed as input, unless the model's table gives a cache-write price above its input
price (then it is billed as a 5-minute write).
A compatible server (vLLM's automatic prefix caching, llama.cpp's slot cache) keeps prefixes
the same way, at its own granularity, for free: its bill costs nothing but still says what it
read. Prefixes are known by unit boundaries (`anthropic.Unit`, breakpoints ignored). Pure rules;
`AutomaticCache` holds the entries.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from agent_cli.billing.anthropic import Unit
from agent_cli.billing.prices import FREE, Bill, CacheTerms, priced

__all__ = [
    "IN_MEMORY_SECONDS",
    "OPENAI_MINIMUM",
    "OPENAI_STEP",
    "RETENTION_24H_SECONDS",
    "WRITTEN_SECONDS",
    "AutomaticCache",
    "AutomaticRequest",
    "Retention",
    "cached_length",
    "compatible_server",
]

OPENAI_MINIMUM = 1024
OPENAI_STEP = 128
IN_MEMORY_SECONDS = 300.0
RETENTION_24H_SECONDS = 86_400.0
WRITTEN_SECONDS = 1800.0  # in memory, on a model whose cache writes are priced

Retention: TypeAlias = Literal["in_memory", "24h", "server"]


@dataclass(frozen=True, slots=True)
class AutomaticRequest:
    model: str
    units: tuple[Unit, ...]
    at: float
    cache_key: str = ""  # OpenAI's prompt_cache_key
    retention: Retention = "in_memory"


def cached_length(prefix_tokens: int, minimum: int = OPENAI_MINIMUM, step: int = OPENAI_STEP) -> int:
    """How many tokens of a matching `prefix_tokens`-token prefix are billed as cached."""
    if prefix_tokens < max(minimum, 1):
        return 0
    return minimum + (prefix_tokens - minimum) // step * step


def _retention_seconds(retention: Retention, written: bool = False) -> float:
    if retention == "24h":
        return RETENTION_24H_SECONDS
    if retention == "server":
        return math.inf
    return WRITTEN_SECONDS if written else IN_MEMORY_SECONDS


def _prefix_ids(request: AutomaticRequest) -> list[str]:
    running = hashlib.sha256(f"{request.model}\0{request.cache_key}".encode())
    ids = []
    for unit in request.units:
        running.update(f"\0{unit.key}".encode())
        ids.append(running.copy().hexdigest())
    return ids


class AutomaticCache:
    """The prefixes kept so far (id -> expiry); `minimum` and `step` are the provider's granularity."""

    def __init__(
        self,
        terms: Mapping[str, CacheTerms] | Callable[[str], CacheTerms],
        *,
        step: int = OPENAI_STEP,
        retention: Retention | None = None,
    ) -> None:
        self._terms = terms
        self._step = step
        self._retention = retention  # the server's own, whatever a request asks
        self._entries: dict[str, float] = {}

    def bill(self, request: AutomaticRequest) -> Bill:
        terms = self._terms(request.model) if callable(self._terms) else self._terms[request.model]
        ids = _prefix_ids(request)
        cum, total = [], 0
        for unit in request.units:
            total += max(0, unit.tokens)
            cum.append(total)
        hit = max((i for i, p in enumerate(ids) if self._entries.get(p, -math.inf) > request.at), default=-1)
        read = cached_length(cum[hit], terms.minimum, self._step) if hit >= 0 else 0
        prices = terms.prices
        written = prices.write_5m > prices.input  # a model that charges for writing the cache
        keep = request.at + _retention_seconds(self._retention or request.retention, written)
        for i, prefix in enumerate(ids):
            if cum[i] >= terms.minimum:
                self._entries[prefix] = keep
        rest = total - read
        if written:
            return priced(0, read, rest, 0, prices)
        return priced(rest, read, 0, 0, prices)


def compatible_server(block: int = 16) -> AutomaticCache:
    """A vLLM / llama.cpp server's own prefix cache: any earlier prefix, `block`-token granularity,
    kept while the server runs, at no price."""
    return AutomaticCache(lambda _model: CacheTerms(FREE, minimum=block), step=block, retention="server")

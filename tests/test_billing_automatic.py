"""OpenAI's automatic prefix cache and a compatible server's own (agent_cli/billing/automatic.py)."""

from __future__ import annotations

import pytest

from agent_cli.billing import AutomaticCache, AutomaticRequest, CachePrices, CacheTerms, Unit, cached_length
from agent_cli.billing.automatic import compatible_server

NO_PREMIUM = CacheTerms(CachePrices(1.25, 0.125, 1.25, 1.25), minimum=1024)  # gpt-5: write = input
PREMIUM = CacheTerms(CachePrices(2.0, 0.10, 2.5, 4.0), minimum=1024)  # gpt-6.2-sol's table entry


@pytest.mark.parametrize(
    ("prefix", "cached"),
    [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (1279, 1152), (5000, 4992)],
)
def test_cached_tokens_from_1024_in_128_token_steps(prefix: int, cached: int) -> None:
    assert cached_length(prefix) == cached


def _units(*sizes: int, tag: str = "u") -> tuple[Unit, ...]:
    return tuple(Unit("messages", n, f"{tag}{i}") for i, n in enumerate(sizes))


def _bill(cache: AutomaticCache, units: tuple[Unit, ...], at: float, **kw: object) -> tuple[int, int, int]:
    bill = cache.bill(AutomaticRequest("gpt", units, at, **kw))  # type: ignore[arg-type]
    return bill.input, bill.read, bill.write


def test_the_longest_earlier_prefix_is_read_without_a_write_premium() -> None:
    cache = AutomaticCache({"gpt": NO_PREMIUM})
    assert _bill(cache, _units(1500, 300), 0) == (1800, 0, 0)
    assert _bill(cache, _units(1500, 300, 200), 10) == (1800 - 1792 + 200, 1792, 0)
    assert _bill(cache, _units(1500, 999, 200, tag="v"), 20) == (2699, 0, 0)  # another start: nothing


def test_a_model_that_charges_for_writes() -> None:
    cache = AutomaticCache({"gpt": PREMIUM})
    assert _bill(cache, _units(2000), 0) == (0, 0, 2000)


@pytest.mark.parametrize(
    ("retention", "gap_s", "hit"),
    [("in_memory", 299, True), ("in_memory", 301, False), ("24h", 86_000, True), ("24h", 86_401, False)],
)
def test_retention(retention: str, gap_s: float, hit: bool) -> None:
    cache = AutomaticCache({"gpt": NO_PREMIUM})
    _bill(cache, _units(2048), 0, retention=retention)
    assert (_bill(cache, _units(2048), gap_s, retention=retention)[1] == 2048) is hit


def test_a_priced_write_buys_thirty_minutes_in_memory() -> None:
    """gpt-6.2-sol's page: "The cache write price is for 30 minutes of retention" (the engine's
    CachePrice.ttl for such a model is the same 1,800 s)."""
    for gap_s, hit in ((1_000, True), (1_799, True), (1_801, False)):
        cache = AutomaticCache({"gpt": PREMIUM})
        _bill(cache, _units(2048), 0)
        assert (_bill(cache, _units(2048), gap_s)[1] == 2048) is hit, gap_s


def test_prompt_cache_key_routes_apart() -> None:
    cache = AutomaticCache({"gpt": NO_PREMIUM})
    _bill(cache, _units(2048), 0, cache_key="a")
    assert _bill(cache, _units(2048), 1, cache_key="b")[1] == 0
    assert _bill(cache, _units(2048), 2, cache_key="a")[1] == 2048


def test_a_compatible_server_reads_for_free() -> None:
    cache = compatible_server(block=16)
    cache.bill(AutomaticRequest("local", _units(100, 37), 0))
    bill = cache.bill(AutomaticRequest("local", _units(100, 37, 5), 10_000))
    assert (bill.read, bill.usd) == (128, 0.0)  # 137 tokens matched, in whole 16-token blocks

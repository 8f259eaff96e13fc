"""Anthropic's cache rules, one table per rule (billing/anthropic.py; sources in docs/cost-model.md)."""

from __future__ import annotations

import pytest

from agent_cli.billing import (
    AnthropicCache,
    AnthropicRequest,
    Bill,
    BreakpointError,
    CachePrices,
    CacheTerms,
    Unit,
    breakpoints,
    prefix_ids,
)
from agent_cli.billing.anthropic import in_context, without_thinking_before
from agent_cli.billing.prices import Ttl
from agent_cli.providers.model_info import cache_terms
from agent_cli.providers.model_names import keeps_prior_thinking
from agent_cli.providers.models import lookup

PRICES = CachePrices.from_rates(5.0, 0.5, 6.25)  # Opus 4.6's: input, read 0.1x, 5m write 1.25x (1h: 2x)
TERMS = CacheTerms(PRICES, minimum=1024)
M = "claude-test"


def _units(
    n: int, *, tokens: int = 100, marks: dict[int, Ttl] | None = None, tag: str = "b"
) -> tuple[Unit, ...]:
    """`n` message blocks of `tokens` each, after a 2,000-token system block with a breakpoint."""
    marks = marks or {}
    system = Unit("system", 2000, "system", "5m")
    return (system, *(Unit("messages", tokens, f"{tag}{i}", marks.get(i + 1)) for i in range(n)))


def _request(units: tuple[Unit, ...], at: float = 0.0, **kw: object) -> AnthropicRequest:
    return AnthropicRequest(M, units, at, **kw)  # type: ignore[arg-type]


def _cache() -> AnthropicCache:
    return AnthropicCache({M: TERMS})


def test_the_lookback_finds_an_earlier_write_within_20_blocks_and_not_beyond() -> None:
    """The docs' example: turn 1 writes at block 10, turn 2 (block 15) reads it, turn 3 (block 35)
    checks 35..16 and misses the write at 15; a second breakpoint at 15 finds it."""
    cache = _cache()
    first = cache.bill(_request(_units(10, marks={10: "5m"})))
    assert (first.read, first.write) == (0, 3000)  # the system block and the messages, written
    second = cache.bill(_request(_units(15, marks={15: "5m"}), at=10))
    assert (second.read, second.write) == (3000, 500)
    third = cache.bill(_request(_units(35, marks={35: "5m"}), at=20))
    assert (third.read, third.write) == (2000, 3500)  # only the system breakpoint's entry
    cache = _cache()
    cache.bill(_request(_units(10, marks={10: "5m"})))
    cache.bill(_request(_units(15, marks={15: "5m"}), at=10))
    both = cache.bill(_request(_units(35, marks={15: "5m", 35: "5m"}), at=20))
    assert (both.read, both.write) == (3500, 2000)


def test_a_read_needs_a_write_at_that_position() -> None:
    """Stable content behind a breakpoint on a changing block is never read: nothing was written there."""
    cache = _cache()
    for t, stamp in enumerate(("09:00", "09:01", "09:02")):
        units = (*_units(5)[:-1], Unit("messages", 100, f"time {stamp}", "5m"))
        bill = cache.bill(_request(units, at=t))
    assert (bill.read, bill.write) == (2000, 500)


@pytest.mark.parametrize(
    ("marks", "automatic", "error"),
    [
        ({1: "5m", 2: "5m", 3: "5m", 4: "5m"}, None, "at most 4"),  # with the system block's: 5
        ({1: "5m", 2: "5m", 3: "5m"}, "5m", "no breakpoint slot left"),
        ({5: "5m"}, "1h", "another TTL"),
        ({2: "5m", 4: "1h"}, None, "1-hour breakpoint must come before"),
    ],
)
def test_breakpoints_the_api_rejects(marks: dict[int, Ttl], automatic: Ttl | None, error: str) -> None:
    with pytest.raises(BreakpointError, match=error):
        breakpoints(_request(_units(5, marks=marks), automatic=automatic))


def test_a_thinking_block_cannot_carry_a_breakpoint() -> None:
    units = (*_units(2), Unit("messages", 50, "t", "5m", thinking=True))
    with pytest.raises(BreakpointError, match="thinking"):
        breakpoints(_request(units))


@pytest.mark.parametrize(
    ("marks", "automatic", "expected"),
    [
        ({}, "5m", ((0, "5m"), (5, "5m"))),  # automatic: the last block
        ({5: "5m"}, "5m", ((0, "5m"), (5, "5m"))),  # the same TTL already there: a no-op
        ({2: "1h"}, None, ((0, "5m"), (2, "1h"))),
    ],
)
def test_where_the_breakpoints_are(
    marks: dict[int, Ttl], automatic: Ttl | None, expected: tuple[object, ...]
) -> None:
    units = _units(5, marks=marks)
    if marks.get(2) == "1h":
        units = (Unit("system", 2000, "system", "1h"), *units[1:])
        expected = ((0, "1h"), (2, "1h"))
    assert breakpoints(_request(units, automatic=automatic)) == expected


def test_automatic_caching_skips_a_trailing_thinking_block() -> None:
    units = (*_units(3), Unit("messages", 40, "t", thinking=True))
    assert breakpoints(_request(units, automatic="5m"))[-1] == (3, "5m")


@pytest.mark.parametrize(
    ("gap_s", "ttl", "hit"),
    [(200, "5m", True), (299, "5m", True), (301, "5m", False), (3500, "1h", True), (3700, "1h", False)],
)
def test_an_entry_lives_its_ttl_from_its_last_use(gap_s: float, ttl: Ttl, hit: bool) -> None:
    cache = _cache()
    system = Unit("system", 3000, "system", ttl)
    cache.bill(_request((system,)))
    bill = cache.bill(_request((system,), at=gap_s))
    assert (bill.read == 3000) is hit


def test_a_read_refreshes_the_entry() -> None:
    """Read at 4 minutes, again at 8: alive, since the first read moved its expiry to 9 minutes."""
    cache = _cache()
    system = Unit("system", 3000, "system", "5m")
    for at in (0, 240, 480):
        bill = cache.bill(_request((system,), at=at))
    assert bill.read == 3000
    assert cache.bill(_request((system,), at=481 + 300)).read == 0


@pytest.mark.parametrize(
    ("change", "read"),
    [
        ({}, 4000),  # nothing changed: the whole prefix up to the message breakpoint
        ({"tool_choice": "none"}, 3500),  # the messages part only: tools and system still read
        ({"thinking": "adaptive"}, 3500),
        ({"images": True}, 3500),
        ({"speed": "fast"}, 1500),  # the system prompt changes: only the tools are read
    ],
)
def test_what_invalidates_which_part(change: dict[str, object], read: int) -> None:
    units = (
        Unit("tools", 1500, "tools", "5m"),
        Unit("system", 2000, "system", "5m"),
        *(Unit("messages", 100, f"m{i}", "5m" if i == 4 else None) for i in range(5)),
    )
    cache = _cache()
    cache.bill(_request(units))
    assert cache.bill(_request(units, at=5, **change)).read == read


def test_a_tools_change_invalidates_everything() -> None:
    def units(tool: str) -> tuple[Unit, ...]:
        return (Unit("tools", 1500, tool, "5m"), Unit("system", 2000, "system", "5m"))

    cache = _cache()
    cache.bill(_request(units("read_file v1")))
    assert cache.bill(_request(units("read_file v2"), at=5)).read == 0
    assert prefix_ids(_request(units("a")))[1] != prefix_ids(_request(units("b")))[1]


@pytest.mark.parametrize(
    ("model", "tokens", "written"),
    [("claude-opus-4-6", 4095, 0), ("claude-opus-4-6", 4096, 4096), ("claude-sonnet-4-5", 1024, 1024)],
)
def test_a_prefix_below_the_models_minimum_is_not_written(model: str, tokens: int, written: int) -> None:
    info = lookup(model)
    assert info is not None
    cache = AnthropicCache({model: cache_terms(info)})
    bill = cache.bill(AnthropicRequest(model, (Unit("system", tokens, "s", "5m"),), 0))
    assert bill.write == written
    assert bill.input == tokens - written


def test_the_bill_in_usd_and_token_equivalents() -> None:
    cache = _cache()
    units = (Unit("system", 2000, "s", "1h"), Unit("messages", 1000, "m", "5m"), Unit("messages", 10, "tail"))
    bill = cache.bill(_request(units))
    assert bill == Bill(10, 0, 1000, 2000, (10 * 5 + 1000 * 6.25 + 2000 * 10.0) / 1e6)
    assert bill.token_equivalents == 10 + 1.25 * 1000 + 2 * 2000
    again = cache.bill(_request(units, at=60))
    assert (again.read, again.write, again.token_equivalents) == (3000, 0, 10 + 0.1 * 3000)


def test_the_long_context_tier() -> None:
    """Haiku 5.5 above 100k input tokens: the long prices for the whole request."""
    info = lookup("claude-haiku-5-5")
    assert info is not None
    terms = cache_terms(info)
    cache = AnthropicCache({"claude-haiku-5-5": terms})
    short = cache.bill(AnthropicRequest("claude-haiku-5-5", (Unit("system", 100_000, "a"),), 0))
    long = cache.bill(AnthropicRequest("claude-haiku-5-5", (Unit("system", 100_001, "b"),), 0))
    assert short.usd == pytest.approx(100_000 * 0.10 / 1e6)
    assert long.usd == pytest.approx(100_001 * 0.50 / 1e6)


def test_a_new_user_turn_drops_earlier_thinking() -> None:
    units = (
        Unit("messages", 10, "u0", message=0),
        Unit("messages", 50, "think", thinking=True, message=1),
        Unit("messages", 20, "answer", message=1),
        Unit("messages", 10, "u2", message=2),
    )
    assert [u.key for u in without_thinking_before(units, 2)] == ["u0", "answer", "u2"]
    assert without_thinking_before(units, 1) == units  # thinking of the current turn stays


def test_automatic_caching_in_an_agent_whose_history_changes() -> None:
    """It follows a growing conversation (each request reads the last one's write), but an agent
    that rewrites an old block more than 20 blocks back reads nothing of its history again."""
    cache = _cache()
    grown = cache.bill(_request(_units(10), automatic="5m"))
    grown = cache.bill(_request(_units(12), at=5, automatic="5m"))
    assert (grown.read, grown.write) == (3000, 200)
    edited = (*_units(30)[:2], Unit("messages", 100, "b1 cleared"), *_units(30)[3:])
    bill = cache.bill(_request(edited, at=10, automatic="5m"))
    assert (bill.read, bill.write) == (2000, 3000)  # the system block's entry only


@pytest.mark.parametrize(
    ("model", "keeps"),
    [
        ("claude-opus-4-6", True),
        ("claude-opus-4-5-20251101", True),
        ("us.anthropic.claude-opus-4-5-20251101-v1:0", True),
        ("claude-sonnet-4-6", True),
        ("claude-sonnet-5-5", True),
        ("claude-haiku-5-5", True),  # "models numbered 4.6 and higher"
        ("claude-fable-5-1", True),
        ("claude-mythos-preview", True),
        ("claude-opus-4-1", False),
        ("claude-opus-4-20250514", False),  # the date is not a minor version
        ("claude-sonnet-4-5-20250929", False),
        ("claude-haiku-4-5-20251001", False),
        ("claude-3-7-sonnet-20250219", False),
    ],
)
def test_which_models_keep_earlier_thinking(model: str, keeps: bool) -> None:
    """The thinking page's "Thinking block preservation by model" (read 2026-12-05)."""
    assert keeps_prior_thinking(model) is keeps
    units = (
        Unit("messages", 10, "u0", message=0),
        Unit("messages", 50, "think", thinking=True, message=1),
        Unit("messages", 10, "u2", message=2),
    )
    assert len(in_context(keeps_prior_thinking(model), units, 2)) == (3 if keeps else 2)

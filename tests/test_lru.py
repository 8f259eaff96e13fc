"""The counter's bounded caches: the least recently used goes first; a peek does not make it recent."""

from __future__ import annotations

from agent_cli.tokens.lru import Lru


def test_the_least_recently_used_is_dropped_and_a_peek_leaves_the_order() -> None:
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)  # so "b" goes
    assert (cache.peek("a"), cache.peek("b"), cache.peek("c")) == (1, None, 3)
    cache.put("d", 4)  # the peek did not make "c" recent, but "a" was used before it
    assert (cache.peek("a"), cache.peek("c"), cache.peek("d")) == (None, 3, 4)
    one: Lru[str, int] = Lru(0)  # (a bound under one keeps one)
    one.put("x", 1)
    assert one.peek("x") == 1

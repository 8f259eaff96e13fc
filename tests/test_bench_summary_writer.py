"""The summary writer's benchmark: only the billing of summary calls changes, and honestly.

`benchmarks/summary_writer.py` replays ours twice: the session's model writing (every figure as the
report's), and another model writing through caches of its own. Checked here on a short session:
the session model's requests are the same bytes, the other model reads nothing but what it cached
itself (never the session model's prefix), and its calls are priced at its own rates.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_billing import Wire  # noqa: E402
from bench_policies import Ours  # noqa: E402
from bench_replay import CACHES, CLAUDE_RATIO, Run, reference_count, replay  # noqa: E402
from bench_sessions import Session, make_session  # noqa: E402
from bench_setup import frame, frame_tokens, writer  # noqa: E402
from summary_writer import OwnCaches, Pair, run_pair, section  # noqa: E402

from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.core.messages import Usage  # noqa: E402
from agent_cli.providers.models import cost, lookup  # noqa: E402

WINDOW = 32_000


def _session() -> Session:
    s = make_session("long", seed=1, outputs="typical")
    return Session(s.name, s.steps[:120])


def _ours(s: Session) -> Ours:
    return Ours(WINDOW, frame(), reference_count, writer("faithful", s), ContextSettings())


def _pair() -> tuple[Pair, OwnCaches]:
    s = _session()
    same = replay(s, _ours(s), frame_tokens(), seed=1)
    made: list[OwnCaches] = []

    def own(run: Run, wire, clocks):  # type: ignore[no-untyped-def]
        made.append(OwnCaches(run, wire, clocks))
        return made[-1]

    other = replay(s, _ours(s), frame_tokens(), seed=1, writer=own)
    return Pair(same, other, made[0].calls), made[0]


def test_only_the_summary_calls_change_hands() -> None:
    pair, caches = _pair()
    assert pair.same.summary_calls >= 3
    # The session model's turns are the same requests; the summary requests are the same too.
    assert pair.own.fingerprint == pair.same.fingerprint and pair.own.probes == pair.same.probes
    assert pair.same.parts["summaries"].output > 0 and pair.own.parts["summaries"].output == 0
    assert pair.own.parts["turns"].output == pair.same.parts["turns"].output
    assert all(len(calls) == pair.same.summary_calls for calls in caches.calls.values())


def test_the_other_model_reads_only_what_it_cached_itself() -> None:
    pair, caches = _pair()
    frame_claude = round(frame_tokens() * CLAUDE_RATIO)
    frame_chat = sum(u.tokens for u in Wire(frame()).send([]).openai.units)  # the chat wire's frame
    for cache in CACHES:
        first, *rest = caches.calls[cache]
        assert first.cache_read_tokens == 0, cache  # nothing of the session model's prefix
        # Later calls read back at most the frame: each span starts with a new record.
        limit = frame_claude if cache.startswith("claude") else frame_chat
        assert all(u.cache_read_tokens <= limit for u in rest), (cache, [u.cache_read_tokens for u in rest])
        assert any(u.cache_read_tokens > 0 for u in rest), cache  # within the TTL, the frame is read
        assert all(u.input_tokens == 0 and u.cache_write_tokens > 0 for u in caches.calls[cache])
    # The session model writing them read far more from the cache its turns had filled.
    assert (
        pair.same.parts["summaries"].read
        > sum(u.cache_read_tokens for u in caches.calls["claude"]) / CLAUDE_RATIO
    )


def test_the_writer_is_priced_at_its_own_rates_and_the_lost_cache_shows() -> None:
    pair, caches = _pair()
    haiku = lookup("claude-haiku-5-5")
    assert haiku is not None
    billed = pair.own_dollars("claude", "claude-haiku-5-5") - pair.own.dollars(
        "claude", Pair.session_model("claude")
    )
    assert billed == pytest.approx(sum(cost(haiku, u) for u in caches.calls["claude"]))
    # The same model through a cache of its own costs more than through the shared one ...
    assert pair.own_dollars("claude", "claude-sonnet-5-5") > pair.same_dollars("claude")
    assert pair.own_dollars("openai", "gpt-6.2-sol") > pair.same_dollars("openai")
    # ... and a model twenty times cheaper still comes out ahead.
    assert pair.own_dollars("claude", "claude-haiku-5-5") < pair.same_dollars("claude")
    assert pair.own_dollars("openai", "gpt-6-luna") < pair.same_dollars("openai")
    # Each call is priced on its own, so Haiku 5.5's long-context tier applies to a long one only.
    assert cost(haiku, Usage(cache_write_tokens=50_000)) == pytest.approx(50_000 * 0.125 / 1e6)
    assert cost(haiku, Usage(cache_write_tokens=150_000)) == pytest.approx(150_000 * 0.625 / 1e6)


def test_the_section_says_the_default_the_product_has() -> None:
    from summary_writer import Cell

    pair, _ = _pair()
    cells = [Cell("long", "typical", WINDOW, stand_in, [pair]) for stand_in in ("faithful", "lossy")]
    text = "\n".join(section(cells))
    assert '**Default: `summary_model = ""`: the session\'s own model writes.**' in text
    assert "| long | typical | 32k |" in text
    assert '**Default: `summary_model = "claude-haiku-5-5"`.**' in "\n".join(
        section(cells, "claude-haiku-5-5")
    )


def test_both_writers_are_billed_at_the_paused_pace_by_runs_that_saw_the_paused_clock() -> None:
    """Before, the other writer's run decided by the steady clock and was billed at both paces, while
    the session model's (the replay's run of ours) had a run of its own at the paused pace."""
    pair = run_pair(("chat", "typical", 1, 32_000, "faithful"))
    assert pair.same.paused is not None and pair.own.paused is not None
    assert pair.own.paused.fingerprint == pair.same.paused.fingerprint  # the same requests, paused
    assert pair.own.bills["claude-paused"] is pair.own.paused.bills["claude-paused"]
    assert pair.writer_calls["claude-paused"] and pair.writer_calls["claude"]

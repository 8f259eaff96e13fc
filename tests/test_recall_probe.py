"""The fair recall probe (benchmarks/recall_probe.py) judges recall by its answers, and asks
with the questions only.

A small run (one seed, 20 look-alikes) of both fact sets through the real session log and archive.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from recall_probe import FACT_SETS, KINDS, probe  # noqa: E402


def test_every_fact_is_asked_three_ways_and_ranked_recall_finds_what_a_literal_search_cannot() -> None:
    for facts in FACT_SETS.values():
        score = probe(facts, [1], 20)
        for kind in KINDS:
            assert score.asked["ranked", kind] == score.asked["literal", kind] == len(facts.FACTS)
        assert score.share("literal") < 0.05  # a question is not the output's words
        assert score.share("ranked", "direct") >= 0.9
        assert score.share("ranked") > score.share("literal") + 0.6


def test_a_fact_counts_as_found_only_when_its_answer_is_returned() -> None:
    facts = FACT_SETS["held-out"]
    score = probe(facts, [1], 20)
    found = sum(score.found["ranked", k] for k in KINDS)
    assert found == round(score.share("ranked") * 3 * len(facts.FACTS))
    assert len(score.misses) == 3 * len(facts.FACTS) - found  # every miss is named

"""The outside recall probe end to end (benchmarks/recall_outside.py, issue 37 item 6).

`agent -p` at a 32k window plants eight facts in ordinary work (command output, file reads, a
user message) among a hundred look-alike outputs, the engine clears and summarizes them away, and
in a `--continue` run the user asks about each fact, two in the words it was planted in and six in
other words. The fake model calls `recall` with the question as typed; the result must hold the
fact, and its first passage must not be the question itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from recall_outside import fact_set, probe  # noqa: E402

pytestmark = pytest.mark.e2e


def test_facts_asked_in_other_words_are_recalled_after_they_left_the_context() -> None:
    outcomes, player = probe(fact_set("development"))
    assert len(outcomes) == 8 and player.summaries >= 1
    # The premise: what a tool printed is gone from the request that asks for it (the record keeps
    # the user's own words, so a decision said in a user message may still be there).
    assert [o.question.fact for o in outcomes if o.visible and o.question.fact != "decision"] == []
    assert [o.question.text for o in outcomes if o.echoed] == []
    assert [o.question.text for o in outcomes if not o.answered] == []

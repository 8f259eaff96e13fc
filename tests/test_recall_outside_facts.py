"""The outside recall probe's fact sets are sound (benchmarks/recall_outside_facts.py, _sealed.py):
eight facts each, two asked in their planted words and six in other words, every answer verbatim
in one place of the work and in no question. Only the sets' shape is read here, never a result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from recall_outside import SETS, fact_set  # noqa: E402


@pytest.mark.parametrize("name", sorted(SETS))
def test_eight_facts_two_in_planted_words_six_in_other_words(name: str) -> None:
    facts = fact_set(name)
    worded = [q.worded for q in facts.QUESTIONS]
    assert len(worded) == 8 and worded.count("planted") == 2 and worded.count("other") == 6
    assert len({q.fact for q in facts.QUESTIONS}) == 8


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_answer_is_said_once_and_asked_for_in_no_question(name: str) -> None:
    facts = fact_set(name)
    places = [run.user for run in facts.RUNS] + [step.output for run in facts.RUNS for step in run.steps]
    for question in facts.QUESTIONS:
        assert question.answer.lower() not in question.text.lower()
        assert sum(question.answer in place for place in places) == 1, question.answer


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_work_is_distinct_calls(name: str) -> None:
    calls = [(step.tool, step.arg) for run in fact_set(name).RUNS for step in run.steps]
    assert len(calls) == len(set(calls)) >= 70

"""The held-out planted facts for the recall probe are well formed (benchmarks/recall_facts_heldout.py,
recall_facts_heldout2.py, recall_facts_heldout3.py and recall_facts_heldout4.py, one project each):
the same checks for every set."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

import pytest

from benchmarks import (
    recall_facts_heldout,
    recall_facts_heldout2,
    recall_facts_heldout3,
    recall_facts_heldout4,
)

SETS = {
    "held-out": recall_facts_heldout,
    "held-out 2": recall_facts_heldout2,
    "held-out 3": recall_facts_heldout3,
    "held-out 4": recall_facts_heldout4,
}
_MIN_FACTS = {recall_facts_heldout4: 20}  # written in one sitting; the others hold 36 or more
_SHAPES = {"read_file": {"path"}, "bash": {"command"}, "grep": {"pattern", "path"}}
_NUMBERED = re.compile(r" {0,5}\d{1,6}\t")
_EXIT = re.compile(r"\[exit code (\d+)\]")

each_set = pytest.mark.parametrize("facts", SETS.values(), ids=SETS.keys())
each_fact = pytest.mark.parametrize(
    ("facts", "fact"),
    [(module, fact) for module in SETS.values() for fact in module.FACTS],
    ids=[f"{name}:{fact.answer}" for name, module in SETS.items() for fact in module.FACTS],
)


def _scenes(facts: ModuleType) -> list[Any]:
    return [fact.scene for fact in facts.FACTS]


def _check_shape(scene: recall_facts_heldout.Scene | recall_facts_heldout2.Scene) -> None:
    assert scene.tool in _SHAPES
    assert set(scene.args) == _SHAPES[scene.tool]
    assert all(isinstance(value, str) and value for value in scene.args.values())
    lines = scene.output.split("\n")
    assert 20 <= len(lines) <= 200, (scene.args, len(lines))
    if scene.tool == "read_file":
        for n, line in enumerate(lines, 1):
            assert line.startswith(f"{n:6d}\t"), line
            assert _NUMBERED.match(line)
        assert not scene.is_error
    elif scene.tool == "bash":
        match = _EXIT.fullmatch(lines[-1])
        assert match, lines[-1]
        assert scene.is_error == (int(match.group(1)) != 0)
    else:
        path = str(scene.args["path"])
        for line in lines:
            assert line.startswith(path + "/") or line.startswith(path + ":"), line
            assert re.match(r"[^:]+:\d+:", line), line
        assert not scene.is_error


@each_set
def test_there_are_enough_facts_with_three_questions_each(facts: ModuleType) -> None:
    assert len(facts.FACTS) >= _MIN_FACTS.get(facts, 36)
    for fact in facts.FACTS:
        assert isinstance(fact, facts.PlantedFact)
        assert len(fact.questions) == 3
        assert all(q.strip() for q in fact.questions)
        assert len(set(fact.questions)) == 3
        assert len(fact.questions[2].split()) <= 12, fact.questions[2]


@each_set
def test_the_facts_come_from_every_tool_and_some_commands_fail(facts: ModuleType) -> None:
    assert {fact.scene.tool for fact in facts.FACTS} == set(_SHAPES)
    assert any(fact.scene.is_error for fact in facts.FACTS)


@each_set
def test_answers_and_scenes_are_distinct(facts: ModuleType) -> None:
    answers = [fact.answer for fact in facts.FACTS]
    assert len(set(answers)) == len(answers)
    assert len({id(scene) for scene in _scenes(facts)}) == len(answers)
    assert len({fact.scene.output for fact in facts.FACTS}) == len(answers)


@each_set
def test_fact_scenes_are_shaped_like_the_tools_output(facts: ModuleType) -> None:
    for fact in facts.FACTS:
        _check_shape(fact.scene)


@each_fact
def test_each_answer_is_in_exactly_one_scene_away_from_its_edges(facts: ModuleType, fact: Any) -> None:
    answer, scene = fact.answer, fact.scene
    holders = [s for s in _scenes(facts) if answer in s.output]
    assert holders == [scene]
    lines = scene.output.split("\n")
    assert answer not in lines[0]
    assert answer not in lines[-1]
    assert any(answer in line for line in lines[1:-1])
    for other in facts.FACTS:
        assert all(answer not in str(value) for value in other.scene.args.values())


@each_fact
def test_no_question_holds_its_answer(facts: ModuleType, fact: Any) -> None:
    for question in fact.questions:
        assert fact.answer.casefold() not in question.casefold(), question


@each_set
def test_distractors_are_deterministic_per_seed(facts: ModuleType) -> None:
    first = facts.distractors(7, 40)
    assert len(first) == 40
    assert facts.distractors(7, 40) == first
    assert facts.distractors(8, 40) != first
    assert facts.distractors(7, 10) == first[:10]
    assert facts.distractors(3, 0) == []


@each_set
def test_distractors_can_fill_a_long_session(facts: ModuleType) -> None:
    scenes = facts.distractors(5, 1000)
    assert len({(repr(sorted(s.args.items())), s.output) for s in scenes}) == 1000
    assert {s.tool for s in scenes} == set(_SHAPES)


@each_set
@pytest.mark.parametrize("seed", [0, 1, 2, 99])
def test_distractors_hold_no_answer_and_no_fact_path_or_command(facts: ModuleType, seed: int) -> None:
    fact_values = {str(value) for fact in facts.FACTS for value in fact.scene.args.values()}
    named = [str(f.scene.args["path"]) for f in facts.FACTS if f.scene.tool == "read_file"]
    named += [str(f.scene.args["command"]) for f in facts.FACTS if f.scene.tool == "bash"]
    scenes = facts.distractors(seed, 60)
    assert len({(repr(sorted(s.args.items())), s.output) for s in scenes}) == len(scenes)
    for scene in scenes:
        _check_shape(scene)
        for fact in facts.FACTS:
            assert fact.answer not in scene.output
            assert all(fact.answer not in str(value) for value in scene.args.values())
        assert not any(str(value) in fact_values for value in scene.args.values())
        assert not any(name in scene.output for name in named)

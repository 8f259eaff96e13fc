"""The second set of held-out planted facts is well formed (benchmarks/recall_facts_heldout2.py)."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.recall_facts_heldout2 import FACTS, PlantedFact, Scene, distractors  # noqa: E402

_SHAPES = {"read_file": {"path"}, "bash": {"command"}, "grep": {"pattern", "path"}}
_NUMBERED = re.compile(r" {0,5}\d{1,6}\t")
_EXIT = re.compile(r"\[exit code (\d+)\]")


def _scenes() -> list[Scene]:
    return [fact.scene for fact in FACTS]


def _check_shape(scene: Scene) -> None:
    assert scene.tool in _SHAPES
    assert set(scene.args) == _SHAPES[scene.tool]
    assert all(isinstance(value, str) and value for value in scene.args.values())
    lines = scene.output.split("\n")
    assert 20 <= len(lines) <= 80, (scene.args, len(lines))
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


def test_there_are_enough_facts_with_three_questions_each() -> None:
    assert len(FACTS) >= 36
    for fact in FACTS:
        assert isinstance(fact, PlantedFact)
        assert len(fact.questions) == 3
        assert all(q.strip() for q in fact.questions)
        assert len(set(fact.questions)) == 3
        assert len(fact.questions[2].split()) <= 12, fact.questions[2]


def test_answers_and_scenes_are_distinct() -> None:
    answers = [fact.answer for fact in FACTS]
    assert len(set(answers)) == len(answers)
    assert len({id(scene) for scene in _scenes()}) == len(FACTS)
    assert len({scene.output for scene in _scenes()}) == len(FACTS)


def test_fact_scenes_are_shaped_like_the_tools_output() -> None:
    for scene in _scenes():
        _check_shape(scene)


@pytest.mark.parametrize("fact", FACTS, ids=lambda fact: fact.answer)
def test_each_answer_is_in_exactly_one_scene_away_from_its_edges(fact: PlantedFact) -> None:
    holders = [scene for scene in _scenes() if fact.answer in scene.output]
    assert holders == [fact.scene]
    lines = fact.scene.output.split("\n")
    assert fact.answer not in lines[0]
    assert fact.answer not in lines[-1]
    assert any(fact.answer in line for line in lines[1:-1])
    for scene in _scenes():
        assert all(fact.answer not in str(value) for value in scene.args.values())


@pytest.mark.parametrize("fact", FACTS, ids=lambda fact: fact.answer)
def test_no_question_holds_its_answer(fact: PlantedFact) -> None:
    for question in fact.questions:
        assert fact.answer.casefold() not in question.casefold(), question


def test_distractors_are_deterministic_per_seed() -> None:
    first = distractors(7, 40)
    assert len(first) == 40
    assert distractors(7, 40) == first
    assert distractors(8, 40) != first
    assert distractors(7, 10) == first[:10]
    assert distractors(3, 0) == []


@pytest.mark.parametrize("seed", [0, 1, 2, 99])
def test_distractors_hold_no_answer_and_no_fact_path_or_command(seed: int) -> None:
    fact_values = {str(value) for fact in FACTS for value in fact.scene.args.values()}
    named = [str(f.scene.args["path"]) for f in FACTS if f.scene.tool == "read_file"]
    named += [str(f.scene.args["command"]) for f in FACTS if f.scene.tool == "bash"]
    scenes = distractors(seed, 60)
    assert len({(repr(sorted(s.args.items())), s.output) for s in scenes}) == len(scenes)
    for scene in scenes:
        _check_shape(scene)
        for fact in FACTS:
            assert fact.answer not in scene.output
            assert all(fact.answer not in str(value) for value in scene.args.values())
        assert not any(str(value) in fact_values for value in scene.args.values())
        assert not any(name in scene.output for name in named)


def test_the_facts_cover_reads_commands_and_greps() -> None:
    kinds = Counter(fact.scene.tool for fact in FACTS)
    assert kinds["read_file"] >= 12
    assert kinds["bash"] >= 12
    assert kinds["grep"] >= 8
    assert any(fact.scene.is_error for fact in FACTS)


def test_distractors_can_fill_a_long_session() -> None:
    scenes = distractors(5, 1000)
    assert len({(repr(sorted(s.args.items())), s.output) for s in scenes}) == 1000
    assert {s.tool for s in scenes} == set(_SHAPES)

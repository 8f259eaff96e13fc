"""The recall probe's data keeps its own rules: answers verbatim and findable, questions that never give
them away, distractors that hold none of them.

A question that quoted its answer, an answer that also sat in another scene, or a distractor that held
a planted value would let a search score without recalling anything; each rule here can fail on
such data.
"""

from __future__ import annotations

import re

import pytest

from benchmarks.recall_facts import FACTS, PlantedFact, Scene, distractors

TOOLS = {"read_file", "bash", "grep"}
_WORD = re.compile(r"[a-z]{4,}")
_VALUE = re.compile(r"[A-Za-z0-9_.\-/]+")


def _lines(scene: Scene) -> int:
    return len(scene.output.splitlines())


def _values(answer: str) -> set[str]:
    """The answer's specific parts: tokens of 3+ characters holding a digit ("48213", "E0502")."""
    return {token for token in _VALUE.findall(answer) if len(token) >= 3 and any(c.isdigit() for c in token)}


def _id(fact: PlantedFact) -> str:
    return fact.answer


def test_enough_facts() -> None:
    assert len(FACTS) >= 40


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_three_distinct_questions(fact: PlantedFact) -> None:
    assert len(fact.questions) == 3
    assert all(question.strip() for question in fact.questions)
    assert len({question.lower() for question in fact.questions}) == 3


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_answer_is_verbatim_in_its_scene(fact: PlantedFact) -> None:
    assert len(fact.answer) >= 5
    assert fact.answer in fact.scene.output


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_answer_sits_inside_the_output(fact: PlantedFact) -> None:
    lines = fact.scene.output.splitlines()
    holding = [i for i, line in enumerate(lines) if fact.answer in line]
    assert holding, "the answer must fit on one line"
    assert 0 < holding[0] < len(lines) - 1, "neither the first nor the last line"


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_no_question_gives_the_answer_away(fact: PlantedFact) -> None:
    for question in fact.questions:
        assert fact.answer.lower() not in question.lower()
        for value in _values(fact.answer):
            assert value.lower() not in question.lower(), (value, question)


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_paraphrase_uses_its_own_words(fact: PlantedFact) -> None:
    output = fact.scene.output.lower()
    new = {word for word in _WORD.findall(fact.questions[1].lower()) if word not in output}
    assert len(new) >= 2, new


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_vague_question_is_short(fact: PlantedFact) -> None:
    assert len(fact.questions[2].split()) <= 12
    assert len(fact.questions[2]) < len(fact.questions[1])


def test_each_answer_is_in_one_scene_only() -> None:
    for fact in FACTS:
        holders = [other for other in FACTS if fact.answer.lower() in other.scene.output.lower()]
        assert holders == [fact], fact.answer


def test_scenes_are_distinct_tool_calls() -> None:
    calls = [(fact.scene.tool, sorted(fact.scene.args.items())) for fact in FACTS]
    assert len(calls) == len({repr(call) for call in calls})


@pytest.mark.parametrize("scene", [fact.scene for fact in FACTS] + distractors(0, 120), ids=lambda s: s.tool)
def test_scene_shape(scene: Scene) -> None:
    assert scene.tool in TOOLS
    assert 20 <= _lines(scene) <= 400
    if scene.tool == "bash":
        assert set(scene.args) == {"command"}
        assert scene.is_error == (not scene.output.endswith("[exit code 0]"))
    elif scene.tool == "read_file":
        assert set(scene.args) == {"path"}
    else:
        assert set(scene.args) == {"pattern", "path"}


def test_the_session_uses_every_category() -> None:
    commands = " ".join(str(fact.scene.args.get("command", "")) for fact in FACTS)
    paths = " ".join(str(fact.scene.args.get("path", "")) for fact in FACTS)
    for command in ("pytest", "jest", "go test", "mypy", "tsc", "cargo", "make", "git log", "pip list"):
        assert command in commands, command
    for command in ("npm ls", "curl", "kubectl", "gh run", "journalctl", "tail"):
        assert command in commands, command
    for ending in (".toml", ".yaml", ".ini", ".env.", ".json", ".py", ".ts", ".go", ".sql", "go.mod"):
        assert ending in paths, ending
    assert any(fact.scene.tool == "grep" for fact in FACTS)


def test_distractors_are_deterministic() -> None:
    assert distractors(7, 40) == distractors(7, 40)
    assert distractors(7, 40) != distractors(8, 40)
    assert distractors(7, 10) == distractors(7, 40)[:10]


@pytest.mark.parametrize("seed", range(6))
def test_distractors_hold_no_answer(seed: int) -> None:
    fact_calls = [fact.scene.args for fact in FACTS]
    for scene in distractors(seed, 80):
        assert scene.args not in fact_calls
        for fact in FACTS:
            assert fact.answer not in scene.output, (fact.answer, scene.args)


def test_distractors_vary() -> None:
    scenes = distractors(3, 120)
    assert len({scene.tool for scene in scenes}) == 3
    assert len({repr(sorted(scene.args.items())) for scene in scenes}) >= 100

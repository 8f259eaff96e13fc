"""Recall keeps each document's reading between questions (store/ranking.py `_read`: its chunks,
their terms and meanings, its text lowercased) and each span's parsed messages (store/
session_search.py `_span_messages`, while the file is unchanged): a saved output is read once, not
on every recall, and an answer is the same whether the readings are new or kept.

Through the real `Archive` over recall_probe's session (the held-out facts among look-alikes, in
the session log and in spans), asked every question three ways, and the questions that take the
ranking's other paths: a path as typed (the whole output), a quoted phrase, a question about the
session's start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import recall_facts_heldout  # noqa: E402
from recall_probe import BUDGET, session  # noqa: E402

from agent_cli.core.messages import Message, ToolResult, ToolUse  # noqa: E402
from agent_cli.store import ranking, session_search  # noqa: E402
from agent_cli.store.archive import Archive  # noqa: E402

_FACTS = recall_facts_heldout.FACTS[:12]  # each asked three ways


def _questions() -> list[str]:
    asked = [q for fact in _FACTS for q in fact.questions]
    scenes = [fact.scene for fact in recall_facts_heldout.FACTS]
    paths = [s.args["path"] for s in scenes if "path" in s.args][:3]
    commands = [s.args["command"] for s in scenes if "command" in s.args][:3]
    return [
        *asked,
        *paths,  # a title holds it as typed: the whole output
        *(f"what did `{c}` print?" for c in commands),  # a quoted phrase
        *(f"what did {p} say early on?" for p in paths),  # the start of the session first
    ]


def _answers(archive: Archive, questions: list[str], *, drop: bool) -> list[str]:
    out = []
    for question in questions:
        if drop:
            ranking._read.cache_clear()
        out.append(archive.search(question, BUDGET))
        out.append(archive.search_project(question, BUDGET))
    return out


def test_an_answer_is_the_same_with_the_readings_new_or_kept(tmp_path: Path) -> None:
    archive = session(tmp_path, recall_facts_heldout, 1, 60)
    words = Archive(archive.session_dir, searcher="recall", by_meaning=False)
    questions = _questions()
    cold = _answers(archive, questions, drop=True)
    cold_words = _answers(words, questions, drop=True)
    warm = _answers(archive, questions, drop=False)
    again = _answers(Archive(archive.session_dir, searcher="recall"), questions, drop=False)
    assert warm == cold
    assert again == cold
    assert _answers(words, questions, drop=False) == cold_words
    found = [fact.answer in a for fact, a in zip(_FACTS, cold[::6], strict=False)]
    assert sum(found) >= len(found) // 2  # these are real answers, not "nothing found" alike


def test_a_saved_document_is_read_once_across_recalls(tmp_path: Path) -> None:
    archive = session(tmp_path, recall_facts_heldout, 1, 30)
    ranking._read.cache_clear()
    archive.search("which port does the server listen on?", BUDGET)
    read = ranking._read.cache_info().misses
    assert read > 30
    archive.search("what failed in the last test run?", BUDGET)
    info = ranking._read.cache_info()
    assert info.misses == read  # nothing read again
    assert info.hits >= read


def test_a_span_is_parsed_once_and_again_when_its_file_changes(tmp_path: Path) -> None:
    archive = session(tmp_path, recall_facts_heldout, 1, 100)  # spans of 80 messages
    spans = sorted(archive.session_dir.glob("span-*.jsonl"))
    assert spans
    session_search._span_messages.cache_clear()
    archive.search("which port does the server listen on?", BUDGET)
    parsed = session_search._span_messages.cache_info().misses
    assert parsed == len(spans)
    archive.search("what failed in the last test run?", BUDGET)
    assert session_search._span_messages.cache_info().misses == parsed  # nothing parsed again
    use = ToolUse("toolu_rewritten", "read_file", {"path": "notes/zebra.txt"})
    written = archive.write_span(
        [Message("assistant", (use,)), Message("user", (ToolResult(use.id, "okapi quagga"),))], "x"
    )
    os.replace(written, spans[0])  # a span's file replaced: read again, not its old messages
    found = archive.search("okapi quagga", BUDGET)
    assert "okapi quagga" in found
    assert session_search._span_messages.cache_info().misses == parsed + 1

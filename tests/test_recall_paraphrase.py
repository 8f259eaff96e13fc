"""Recall finds a passage asked for in other words than its own (store/terms.py).

A question says what it asks about and how it asks ("how long", "what's", "the service's"): the
frame matches every output alike and is left out; "how long" and "how often" say what kind of value
is wanted, which brings in the words such a value is written beside (timeout, interval); and the
words developers use for one thing (phone and android, upgrade and bump) find each other. Through
the real `Archive`, each passage planted among look-alikes that hold the question's own words.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_cli.store.archive import MAX_PASSAGES, Archive
from agent_cli.store.terms import ANSWER_KIND_WEIGHT, RELATED_WEIGHT, question_terms


def _first(found: str) -> str:
    """The first passage of a recall answer (each starts with its source: `[file · ref]`)."""
    return re.split(r"\n\n(?=\[(?:output|span|session)\S* · )", found)[0]


def _read(archive: Archive, path: str, text: str, n: int) -> None:
    archive.write_output(
        f"toolu_{n}", text, header=f'[full output of read_file {{"path": "{path}"}} · id toolu_{n}]'
    )


def test_the_frame_of_a_question_is_left_out() -> None:
    weights = question_terms("What's the worker's memory limit, exactly? How much do we actually use?")
    assert "s" not in weights  # "what's", "worker's": no term of their own
    assert {"exact", "exactli", "actual", "actually", "much", "use"}.isdisjoint(weights)
    assert weights["worker"] == weights["memori"] == weights["limit"] == 1.0
    assert "c" in question_terms("where was the C build breaking?")  # a letter said alone is a word


def test_how_long_and_how_often_ask_for_a_kind_of_value() -> None:
    weights = question_terms("How long does the gateway wait before giving up?")
    assert weights["timeout"] == weights["second"] == ANSWER_KIND_WEIGHT
    assert "long" not in weights and "give" not in weights
    often = question_terms("how often does the sync run?")
    assert often["interval"] == often["cron"] == ANSWER_KIND_WEIGHT
    assert "timeout" not in often


def test_developers_words_for_one_thing_find_each_other() -> None:
    assert question_terms("which commit upgraded the client?")["bump"] == RELATED_WEIGHT
    assert question_terms("the phone app's sync")["android"] == RELATED_WEIGHT
    assert question_terms("which migration is still pending?")["unappli"] == RELATED_WEIGHT


def _padding(archive: Archive, count: int) -> None:
    for n in range(count):
        code = "\n".join(f"def handler_{n}_{i}(value):\n    return value * {i + 2}" for i in range(40))
        _read(archive, f"src/module_{n}.py", code, 100 + n)


def test_a_paraphrase_finds_the_setting_not_the_prose_that_shares_its_frame(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    _padding(archive, 20)
    _read(archive, "deploy/worker.toml", "[worker]\nreplicas = 3\nmemory_limit = 768Mi\ncpu = 2", 1)
    _padding(archive, 20)
    archive.write_output(
        "toolu_notes",
        "Planning notes\nThe worker can use much more than the scheduler does.\nHow we use it is up to you.",
        header="[full output of bash cat NOTES.md · id toolu_notes]",
    )
    found = archive.search("How much memory can the worker use?", 12_000)
    assert "memory_limit = 768Mi" in _first(found)


def test_an_answer_ranked_below_the_first_eight_is_returned_while_the_budget_holds_it(
    tmp_path: Path,
) -> None:
    archive = Archive(tmp_path / "s")
    _padding(archive, 10)
    # Twelve short look-alikes that share more of the question's words than the answer does.
    for n in range(12):
        archive.write_output(
            f"toolu_l{n}",
            f"billing service notes {n}: the invoices api is listening again after deploy {n}",
            header=f"[full output of bash cat notes-{n}.txt · id toolu_l{n}]",
        )
    _read(archive, "billing/settings.toml", "[invoices]\nport = 48213\nworkers = 4", 1)
    found = archive.search("Which port is the billing service's invoices api listening on?", 12_000)
    assert MAX_PASSAGES > 12
    assert "port = 48213" in found

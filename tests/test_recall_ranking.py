"""Recall ranks saved passages by the words of a question (store/terms.py, store/ranking.py).

Through the real `Archive` over a session folder: outputs saved as L0 saves them, spans as the
layers write them. Each test plants what must be found among look-alikes that must not win.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_context_fakes import tool_round, user

from agent_cli.core.messages import Message, SummaryBlock, ToolResult, ToolUse
from agent_cli.store.archive import Archive
from agent_cli.store.ranking import PER_DOCUMENT, rank
from agent_cli.store.session_search import session_documents
from agent_cli.store.terms import PREFIX_WEIGHT, RELATED_WEIGHT, question_terms, terms

SERVER_TOML = """# server settings
[metrics]
port = 9102
path = "/metrics"

[admin]
port = 8081
bind = "127.0.0.1"

[listener]
port = 48213
backlog = 512
tls = true

[storage]
root = "/var/lib/app"
"""


def _first(found: str) -> str:
    """The first passage of a recall answer (each starts with its source: `[file · ref]`)."""
    return re.split(r"\n\n(?=\[(?:output|span|session)\S* · )", found)[0]


def _read(archive: Archive, path: str, text: str, n: int) -> None:
    archive.write_output(
        f"toolu_{n}", text, header=f'[full output of read_file {{"path": "{path}"}} · id toolu_{n}]'
    )


def _padding(archive: Archive, count: int) -> None:
    """Outputs like a session's: source files and test runs, none about the planted facts."""
    for n in range(count):
        code = "\n".join(f"def handler_{n}_{i}(value):\n    return value * {i + 2}" for i in range(60))
        _read(archive, f"src/module_{n}.py", code, 100 + n)


def test_terms_split_code_words_and_stem_them() -> None:
    assert terms("tenant_id") == ["tenant_id", "tenant", "id"]
    assert terms("RetryTimeout") == ["retrytimeout", "retri", "timeout"]
    assert terms("HTTP2Server") == ["http2server", "http", "server"]  # one digit is no word
    assert terms("api-7c9f6d5b8") == ["api", "7c9f6d5b8"]
    assert terms("src/upload/config.py") == ["src", "upload", "config", "py"]
    assert terms("the listener accepts connections") == ["the", "listen", "accept", "connect"]
    assert terms("__init__ 48213") == ["init", "48213"]
    assert terms("连接端口") == ["连接", "接端", "端口"]


def test_a_question_keeps_its_words_and_gains_related_ones_at_a_lower_weight() -> None:
    weights = question_terms("Which TCP port does the server accept connections on?")
    assert {t for t, w in weights.items() if w == 1.0} == {"tcp", "port", "server", "accept", "connect"}
    assert weights["listen"] == weights["bind"] == RELATED_WEIGHT
    assert "which" not in weights and "the" not in weights
    assert question_terms("how is it?") == {"how": 1.0, "is": 1.0, "it": 1.0}  # nothing else to go by


def test_a_question_in_the_users_words_finds_the_value_in_the_files_words(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    _padding(archive, 30)
    _read(archive, "config/server.toml", SERVER_TOML, 1)
    _padding(archive, 30)
    for question in (
        "which TCP port does the server accept connections on?",
        "what port is the listener on",
        "where do clients connect to the service",
    ):
        first = _first(archive.search(question, 4_000))
        assert "config/server.toml" in first and "port = 48213" in first, question


def test_the_best_passage_comes_first_with_its_source(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    _padding(archive, 5)
    log = "\n".join(f"2026-11-30 12:{i:02d}:00 INFO request served in {i} ms" for i in range(60))
    log += "\n2026-11-30 13:00:00 ERROR upload worker crashed: disk quota exceeded on /data\n"
    log += "\n".join(f"2026-11-30 13:{i:02d}:30 INFO request served in {i} ms" for i in range(60))
    archive.write_output("toolu_log", log, header="[full output of bash · id toolu_log]")
    _padding(archive, 5)
    found = archive.search("why did the upload worker fail?", 3_000)
    first = _first(found)
    assert first.startswith("[output-") and "toolu_log" in first
    assert "disk quota exceeded" in first
    assert "(lines " in first and " of 121)" in first  # where in the output it is


def test_what_holds_the_question_as_typed_comes_first(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    archive.write_output(
        "toolu_1", "retry budget is fine\nretry the upload\nretry again", header="[a · id toolu_1]"
    )
    archive.write_output("toolu_2", "the upload retry budget was exceeded", header="[b · id toolu_2]")
    found = archive.search("retry budget was exceeded", 4_000)
    assert found.index("toolu_2") < found.index("toolu_1")
    # A call's path or command in its title returns the whole output.
    _read(archive, "src/a.py", "\n".join(f"line {i}" for i in range(40)), 3)
    whole = archive.search("src/a.py", 10_000)
    assert "line 0" in whole and "line 39" in whole


def test_a_long_output_gives_at_most_a_few_passages(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    noisy = "\n".join(f"timeout waiting for worker {i}" for i in range(400))
    archive.write_output("toolu_noisy", noisy, header="[noisy · id toolu_noisy]")
    archive.write_output("toolu_x", "config: request timeout = 37 s", header="[cfg · id toolu_x]")
    docs, _ = session_documents(archive.session_dir)
    passages = rank(docs, "what is the request timeout?")
    assert sum(p.doc.ref == "toolu_noisy" for p in passages) <= PER_DOCUMENT
    assert passages[0].doc.title == "[cfg · id toolu_x]"
    assert "timeout = 37" in archive.search("what is the request timeout?", 12_000)


def test_never_no_match_while_anything_is_saved(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    assert archive.search("anything at all", 1_000).startswith("Nothing is saved")
    archive.write_span([user("hello"), *tool_round("bash", {"command": "make"}, "built 3 targets")], "clear")
    found = archive.search("qqqzzz xyzzy", 2_000)
    assert "Nothing saved in this session shares a word with 'qqqzzz xyzzy'" in found
    assert "built 3 targets" in found  # the newest saved passages, said so


def test_a_question_gains_joined_words_and_abbreviations_at_lower_weights() -> None:
    weights = question_terms("how long should we back off on coverage?")
    assert weights["back"] == 1.0 and weights["backoff"] == RELATED_WEIGHT  # "back off" -> backoff
    assert weights["cov"] == PREFIX_WEIGHT  # coverage -> cov, as `--cov-fail-under`
    assert "co" not in weights  # two letters are no abbreviation


def test_recall_returns_the_output_not_its_stub_nor_a_record(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    original = "F.F\nE   KeyError: 'tenant_id' in handlers/auth.py:142\n[exit code 1]"
    cleared = "[cleared to save context: bash pytest failed with 3 lines (error: KeyError); call recall(...)]"
    use = ToolUse("toolu_1", "bash", {"command": "pytest -q tests/test_auth.py"})
    asked = Message("assistant", (use,))
    archive.write_span([asked, Message("user", (ToolResult("toolu_1", original, True),))], "clear")
    record = Message("user", (SummaryBlock("Latest error: KeyError in the auth tests (auth tests failing)"),))
    archive.write_span([asked, Message("user", (ToolResult("toolu_1", cleared, True),)), record], "compact")
    found = archive.search("why were the auth tests failing?", 12_000)
    assert "'tenant_id' in handlers/auth.py:142" in found
    assert "[cleared to save context" not in found and "Latest error" not in found


def test_a_long_line_is_ranked_in_pieces(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    filler = " ".join(f"word{i}" for i in range(600))
    archive.write_output(
        "toolu_a", f"{filler} the cache eviction policy is LRU {filler}", header="[a · id toolu_a]"
    )
    archive.write_output("toolu_b", "cache warmed\n" * 3, header="[b · id toolu_b]")
    docs, _ = session_documents(archive.session_dir)
    top = rank(docs, "which cache eviction policy?")[0]
    assert top.doc.title == "[a · id toolu_a]"  # not drowned by the 1,200 other words of its line


def test_a_word_the_question_says_finds_longer_words_it_begins(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "s")
    archive.write_output(
        "toolu_ci", "jobs:\n  e2e:\n    timeout-minutes: 25\n    steps: []", header="[ci · id toolu_ci]"
    )
    archive.write_output("toolu_x", "the e2e job:\n  retries: 2", header="[other · id toolu_x]")
    docs, _ = session_documents(archive.session_dir)
    assert rank(docs, "what's the time limit on the e2e job?")[0].doc.title == "[ci · id toolu_ci]"

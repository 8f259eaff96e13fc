"""Recall hears what a question quotes or names: a phrase in backticks or double quotes is looked
for as typed (store/terms.py `quoted`, ranking.py), in a call's title (its command, its
description, its path) and in the text, as the whole question already was; a path or a file name
the question says (`subagent.jsonl`, `named_files`) is looked for as typed in the calls' titles.

"How many files did the `Check test output` command report?" names one call among many outputs
that share more of the question's words (test files full of `check` and `command`): the call the
user names comes before them. Through a real session log, as the recorded sessions' probes ask
(benchmarks/real_replay.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.store.archive import Archive
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.terms import named_files, quoted

_LOOK_ALIKE = "\n".join(
    f'  test "check command {n} output" do\n    assert check_command(:test, {n}) == :ok\n  end'
    for n in range(6)
)


def _first(found: str) -> str:
    """The first passage of a recall answer (each starts with its source: `[file · ref]`)."""
    return re.split(r"\n\n(?=\[\S+ · )", found)[0]


def _session(root: Path, calls: list[tuple[str, dict[str, object], str]], failed: int = -1) -> Archive:
    """A session log of `calls` (tool, input, output); the `failed`-th call's tool failed."""
    log = SessionLog.create(root, redactor=Redactor([]), meta={"model": "test"})
    log.log_message(Message.user("Fix the renderer."))
    for n, (tool, args, output) in enumerate(calls):
        use = ToolUse(f"toolu_{n:03d}", tool, args)
        log.log_message(Message("assistant", (TextBlock("Next step."), use)))
        log.log_message(Message("user", (ToolResult(use.id, output, n == failed),)))
    log.close()
    return Archive(log.dir, searcher="recall")


def test_a_question_quotes_phrases_in_backticks_or_double_quotes() -> None:
    assert quoted("How many files did the `Check test output` command report?") == ["Check test output"]
    assert quoted('Why did "mix test" fail, and what did `bd ready` say?') == ["mix test", "bd ready"]
    assert quoted("Which file was read first?") == []
    assert quoted("the `` empty and the \u201cmix credo\u201d run") == ["mix credo"]


def test_the_call_a_question_quotes_comes_first(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, object], str]] = [
        ("Bash", {"command": "tail -30 /tmp/be613ab.output", "description": "Check test output"},
         "==> spotter\nCompiling 8 files (.ex)\nGenerated spotter app\n"),
    ]  # fmt: skip
    calls += [
        ("Read", {"file_path": f"test/spotter/check_command_{n}_test.exs"}, _LOOK_ALIKE) for n in range(8)
    ]
    calls += [("Bash", {"command": "mix test", "description": "Run tests"}, "12 tests, 0 failures")]
    archive = _session(tmp_path, calls)
    for question in (
        "How many files did the `Check test output` command report?",
        'How many files did the "check test output" command report?',
    ):
        first = _first(archive.search(question, 12_000))
        assert "Compiling 8 files" in first, question
        assert '"description": "Check test output"' in first  # the call's title says which it was
    # Unquoted, the same words are words: the look-alikes that say them more often come first.
    assert "Compiling 8 files" not in _first(
        archive.search("How many files did the check test output command report?", 12_000)
    )


def test_a_quoted_phrase_in_the_text_is_found_as_typed(tmp_path: Path) -> None:
    refused = "POST /v1/sync -> connection refused by upstream (after 3 tries)"
    calls: list[tuple[str, dict[str, object], str]] = [("Bash", {"command": "make sync"}, refused)]
    calls += [
        ("Bash", {"command": f"make sync-{n}"}, "upstream connection ok\nupstream refused nothing\n" * 3)
        for n in range(10)
    ]
    archive = _session(tmp_path, calls)
    assert refused in _first(archive.search('Where did we see "connection refused by upstream"?', 12_000))


def test_a_question_names_paths_and_dotted_names() -> None:
    assert named_files("What error did the Read call on subagent.jsonl give early on?") == ["subagent.jsonl"]
    assert named_files("In services/api/config/default.json, what is the timeout?") == [
        "services/api/config/default.json"
    ]
    assert named_files("Where did the grep for os.Getenv find the DSN?") == ["os.Getenv"]
    assert named_files("Which Python, 3.11 or 3.12, does the image use?") == []  # numbers name no file
    assert named_files("Which file was read first?") == []


def test_the_call_on_the_file_a_question_names_comes_first(tmp_path: Path) -> None:
    too_big = "File content (85812 tokens) exceeds maximum allowed tokens (25000). Use offset and limit."
    path = "test/fixtures/transcripts/subagent.jsonl"
    calls: list[tuple[str, dict[str, object], str]] = [("Read", {"file_path": path}, too_big)]
    calls += [
        ("Bash", {"command": f"bd show spotter-fum.{n}", "description": "Show the task"},
         "Render subagent transcripts: each Task call links its subagent jsonl file.\n"
         "A subagent call whose jsonl file is missing shows an error; every call of a subagent "
         "is read from its own jsonl file, and a failed call keeps its error.\n" * 2)
        for n in range(6)
    ]  # fmt: skip
    archive = _session(tmp_path, calls, failed=0)
    for question in (
        "What error did the Read call on subagent.jsonl give?",
        "Which failure came out of the Read call on subagent.jsonl?",
    ):
        first = _first(archive.search(question, 12_000))
        assert too_big in first, question
        assert "· error · id toolu_000]" in first


def test_a_named_file_is_a_whole_name(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, object], str]] = [("Read", {"file_path": "src/a.py"}, "LIMIT = 3")]
    calls += [
        ("Read", {"file_path": f"src/{name}.py"}, "def show(call):\n    return read(call)  # show the call\n")
        for name in ("data", "schema", "media", "extra")
    ]
    archive = _session(tmp_path, calls)
    # `a.py` is no name in `data.py`: only the call on a.py is the one named.
    assert "LIMIT = 3" in _first(archive.search("What did the Read call on a.py show?", 12_000))

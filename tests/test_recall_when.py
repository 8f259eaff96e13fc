"""Recall hears *when* and *whether it failed* in a question (store/terms.py, ranking.py,
session_search.py).

"What did the build report early on?" asks for the session's start: among outputs alike, the
oldest ranks first (ties otherwise go to the newest). "What error did the read give?" asks for a
failure: a failed tool's result is titled as one, though its own text may not say "error" (Claude
Code's "File content (85812 tokens) exceeds maximum allowed tokens"). Through a real session log,
as the recorded sessions' probes ask (benchmarks/real_replay.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.store.archive import Archive
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.terms import asks_for_early, question_terms


def _first(found: str) -> str:
    """The first passage of a recall answer (each starts with its source: `[file · ref]`)."""
    return re.split(r"\n\n(?=\[\S+ · )", found)[0]


def _session(root: Path, calls: list[tuple[str, dict[str, object], str, bool]]) -> Archive:
    log = SessionLog.create(root, redactor=Redactor([]), meta={"model": "test"})
    log.log_message(Message.user("Get the project building again."))
    for n, (tool, args, output, failed) in enumerate(calls):
        use = ToolUse(f"toolu_{n:03d}", tool, args)
        log.log_message(Message("assistant", (TextBlock("Next step."), use)))
        log.log_message(Message("user", (ToolResult(use.id, output, failed),)))
    log.close()
    return Archive(log.dir, searcher="recall")


def _build(files: int) -> str:
    return f"==> mix compile\nCompiling {files} files (.ex)\nGenerated spotter app\n"


def test_a_question_about_the_start_ranks_the_oldest_output_first(tmp_path: Path) -> None:
    runs = [_build(69)] + [_build(n) for n in range(2, 14)]
    archive = _session(tmp_path, [("bash", {"command": "mix compile"}, out, False) for out in runs])
    assert asks_for_early("How many files did the compile report early on?")
    assert asks_for_early("When we started, how many files did mix compile?")
    assert not asks_for_early("where's the first-fix metric computed?")  # "first" names a thing
    assert "earli" not in question_terms("what did the compile report early on?")
    for question in (
        "How many files did the compile report early on?",
        "When we started, how many files did mix compile?",
    ):
        assert "Compiling 69 files" in _first(archive.search(question, 12_000)), question
    # Without a word of time, the newest of outputs alike comes first, as before.
    assert "Compiling 13 files" in _first(archive.search("How many files did the compile report?", 12_000))


def test_a_failed_tool_result_is_found_as_an_error(tmp_path: Path) -> None:
    too_big = "File content (85812 tokens) exceeds maximum allowed tokens (25000). Use offset and limit."
    calls: list[tuple[str, dict[str, object], str, bool]] = [
        ("read_file", {"path": "test/fixtures/subagent.jsonl"}, too_big, True)
    ]
    calls += [
        ("read_file", {"path": f"test/fixtures/session_{n}.jsonl"}, f'{{"type": "user", "n": {n}}}', False)
        for n in range(12)
    ]
    archive = _session(tmp_path, calls)
    found = archive.search("What error did reading the fixture give?", 12_000)
    assert too_big in _first(found)
    assert "· error · id toolu_000]" in _first(found)  # the title says the call failed

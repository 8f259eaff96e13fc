"""A cleared result's stub says what the output held, and the record built later keeps its error.

L1 replaces old results with stubs. The stub names, in a few identifiers, what was there (a
failure's status and error line, a file's top-level names or sections, a search's files), so a
model asked about it knows what to recall; the digest and the fidelity check read a cleared
failure's error line back from its stub instead of quoting the stub as the error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.context.clear import held, is_stub, stub_failure, stub_for
from agent_cli.context.fidelity import span_facts
from agent_cli.context.record_parts import build_digest
from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.store.archive import Archive

PYTEST = (
    "collected 3 items\n\nE   AssertionError: expected 3 got 4\nFAILED tests/test_a.py::test_x\n[exit code 1]"
)
SOURCE = (
    "     1\timport os\n     2\t\n     3\tdef load(path):\n     4\t    return path\n     5\tclass Server:\n"
)
CONFIG = "     1\t[listener]\n     2\tport = 48213\n     3\t\n     4\t[log]\n     5\tlevel = 'info'\n"
GREP = (
    "src/net/server.py:12:    port = settings.port\nsrc/cli.py:40:port = 1\nsrc/net/server.py:30:bind(port)\n"
)


@pytest.mark.parametrize(
    ("content", "is_error", "expected"),
    [
        (PYTEST, True, "exit code 1; error: E AssertionError: expected 3 got 4"),
        ("Traceback...\nPermissionError: denied", True, "error: Traceback..."),
        (SOURCE, False, "defines load, Server"),
        (CONFIG, False, "defines listener, log"),
        (GREP, False, "matches in src/net/server.py, src/cli.py"),
        ("hello\nworld\n", False, ""),
    ],
)
def test_what_a_result_held(content: str, is_error: bool, expected: str) -> None:
    assert held(ToolResult("t1", content, is_error)) == expected


def test_many_names_are_listed_with_how_many_more() -> None:
    source = "".join(f"{n:6d}\tdef f{n}():\n{n:6d}\t    pass\n" for n in range(1, 13))
    assert held(ToolResult("t1", source)) == "defines f1, f2, f3, f4, f5, f6, f7, f8, +4 more"


def test_a_failing_commands_stub_names_its_status_and_error_and_reads_back() -> None:
    use = ToolUse("t1", "bash", {"command": "pytest -q"})
    stub = stub_for(use, ToolResult("t1", PYTEST, True))
    assert is_stub(ToolResult("t1", stub, True))
    assert "(exit code 1; error: E AssertionError: expected 3 got 4)" in stub and 'recall("t1")' in stub
    failed = stub_failure(stub)
    assert failed is not None
    assert (failed.status, failed.line) == ("exit code 1", "E AssertionError: expected 3 got 4")
    # A stub that records no failure reads back as none.
    assert (
        stub_failure(stub_for(ToolUse("t2", "read_file", {"path": "a.py"}), ToolResult("t2", SOURCE))) is None
    )


def _cleared_failure_span() -> list[Message]:
    use = ToolUse("t1", "bash", {"command": "pytest -q"})
    stub = stub_for(use, ToolResult("t1", PYTEST, True))
    return [
        Message.user("make the tests pass"),
        Message("assistant", (use,)),
        Message("user", (ToolResult("t1", stub, True),)),
    ]


def test_the_digest_quotes_a_cleared_failures_error_line_not_its_stub() -> None:
    digest = build_digest(_cleared_failure_span())
    errors = digest.split("## Latest errors\n", 1)[1].split("\n\n", 1)[0]
    assert errors == "- `pytest -q` (exit code 1): E AssertionError: expected 3 got 4"
    assert "cleared to save context" not in errors


def test_the_fidelity_check_asks_a_record_to_keep_a_cleared_failures_error() -> None:
    facts = span_facts(_cleared_failure_span())
    assert facts.last_error == "E AssertionError: expected 3 got 4"
    assert facts.error_call.endswith("(exit code 1)")


def test_the_archive_names_its_files_relative_to_the_project(tmp_path: Path) -> None:
    session = tmp_path / "proj" / ".transcripts" / "20261201-000000-abcdef"
    archive = Archive(session)
    path = archive.write_span([Message.user("x")], "summarize")
    assert archive.shown(path) == f".transcripts/20261201-000000-abcdef/{path.name}"
    assert (tmp_path / "proj" / archive.shown(path)).read_text()  # true from the project's root
    elsewhere = Archive(tmp_path / "loose")
    assert elsewhere.shown(tmp_path / "loose" / "a.jsonl") == str(tmp_path / "loose" / "a.jsonl")

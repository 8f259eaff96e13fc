"""Paths and failures read from tool calls, and what the fidelity check and the digest make of them.

The bash tool reports a failing command as ordinary output closed by `[exit code N]` (not as a tool
error), and a command touches files it names on its command line: both must reach a record.
"""

from __future__ import annotations

import pytest
from test_context_fakes import assistant, tool_round, user

from agent_cli.context.fidelity import check, repair, span_facts
from agent_cli.context.record_parts import build_digest
from agent_cli.context.signals import Failure, call_paths, command_paths, failure
from agent_cli.core.messages import Message, ToolResult, ToolUse


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat src/app.py | wc -l", ["src/app.py"]),
        ("pytest -q tests/test_api.py::test_x", ["tests/test_api.py::test_x"]),
        ("python -m pkg.main --config=conf/dev.toml", ["conf/dev.toml"]),
        ("sed -i 's/a/b/' README.md && git diff", ["README.md"]),
        ("ls 2>/dev/null; echo $HOME", []),
        ("curl https://example.com/x.json -o out.json", ["out.json"]),
        ("rm -rf build/ 'my dir/file.txt'", ["build/", "my dir/file.txt"]),
        ("pip install numpy==1.26 && python3.11 -V", []),
        ("echo 'unbalanced", []),
    ],
)
def test_command_paths(command: str, expected: list[str]) -> None:
    assert command_paths(command) == expected


def test_call_paths_joins_inputs_and_command_lines() -> None:
    assert call_paths(ToolUse("t1", "edit_file", {"path": "src/a.py", "old_string": "x"})) == ["src/a.py"]
    assert call_paths(ToolUse("t2", "grep", {"pattern": "foo", "path": "."})) == []
    assert call_paths(ToolUse("t3", "bash", {"command": "mypy agent_cli/x.py"})) == ["agent_cli/x.py"]


@pytest.mark.parametrize(
    ("content", "is_error", "expected"),
    [
        ("all good\n[exit code 0]\n", False, None),
        (
            "collected 3\nE   AssertionError: 1 != 2\n1 failed\n[exit code 1]",
            False,
            Failure("E   AssertionError: 1 != 2", "exit code 1"),
        ),
        ("collected 3\n1 failed\n[exit code 1]", False, Failure("1 failed", "exit code 1")),
        (  # an error stated tells more than a later line that only mentions one
            "F\nE   KeyError: 'id'\nsee the traceback above for the cause\n[exit code 1]",
            False,
            Failure("E   KeyError: 'id'", "exit code 1"),
        ),
        (
            "src/a.rs:3: error[E0502]: cannot borrow\nwarning: unused\nfailed to compile\n[exit code 101]",
            False,
            Failure("src/a.rs:3: error[E0502]: cannot borrow", "exit code 101"),
        ),
        ("building\nlinking\n[exit code 2]", False, Failure("linking", "exit code 2")),
        ("(no output)\n[killed by signal 9]", False, Failure("(no output)", "killed by signal 9")),
        (
            "step 1\n[timed out after 30s; the command and its child processes were killed]",
            True,
            Failure("step 1", "timed out after 30s; the command and its child processes were killed"),
        ),
        ("Error: no such file: a.txt\nmore", True, Failure("Error: no such file: a.txt")),
        ("plain output", False, None),
        ("", True, None),
    ],
)
def test_failure(content: str, is_error: bool, expected: Failure | None) -> None:
    assert failure(ToolResult("t", content, is_error)) == expected


def bash_session() -> list[Message]:
    history = [user("make the tests pass")]
    history += tool_round(
        "write_file", {"path": "src/new_mod.py", "content": "x = 1"}, "Created src/new_mod.py"
    )
    history += tool_round("bash", {"command": "cat docs/spec.md"}, "# Spec\n[exit code 0]")
    history += tool_round(
        "bash",
        {"command": "pytest -q tests/test_mod.py"},
        "F\nE   ImportError: cannot import name 'y' from 'new_mod'\n1 failed in 0.1s\n[exit code 1]",
    )
    history.append(assistant("The import fails."))
    return history


def test_fidelity_sees_command_paths_and_non_zero_exits() -> None:
    facts = span_facts(bash_session())
    assert facts.paths == ("src/new_mod.py", "docs/spec.md", "tests/test_mod.py")
    assert facts.last_error == "E   ImportError: cannot import name 'y' from 'new_mod'"
    assert "exit code 1" in facts.error_call and "pytest" in facts.error_call
    missing = check(facts, "## Work state\nSome progress.", [])
    fixed = repair("## Work state\nSome progress.", missing)
    for fact in ("src/new_mod.py", "docs/spec.md", "tests/test_mod.py", "ImportError: cannot import name"):
        assert fact in fixed
    # A record that mentions them needs no repair; the error found by its distinctive words.
    told = (
        "Asked to make the tests pass. Wrote src/new_mod.py, read docs/spec.md; tests/test_mod.py "
        "fails: ImportError: cannot import name 'y' from 'new_mod'"
    )
    assert not check(facts, told, [])


def test_digest_lists_non_zero_exits_as_errors_with_the_last_exit_code() -> None:
    history = bash_session()
    history += tool_round(
        "bash", {"command": "echo 'exit 0 is fine'; false"}, "exit 0 is fine\n[exit code 1]"
    )
    digest = build_digest(history)
    assert "`pytest -q tests/test_mod.py` -> exit 1" in digest
    assert "`cat docs/spec.md` -> exit 0" in digest
    assert "-> exit 1" in digest.split("echo 'exit 0 is fine'; false`")[1].splitlines()[0]
    errors = digest.split("## Latest errors")[1]
    assert "ImportError: cannot import name 'y'" in errors and "(exit code 1)" in errors
    files = digest.split("## Files touched")[1].split("##")[0]
    assert "docs/spec.md (bash)" in files and "src/new_mod.py (write_file)" in files


def test_a_cleared_error_is_not_an_error_a_record_must_quote() -> None:
    """L1's stub of a failed result holds no error text: a record cannot be asked to keep it (before,
    the check demanded the stub's own words, so every model's record "missed the latest error")."""
    from agent_cli.context.clear import STUB_PREFIX

    failed = ToolUse("t1", "bash", {"command": "pytest -q tests/test_a.py"})
    cleared = ToolUse("t2", "bash", {"command": "pytest -q tests/test_b.py"})
    span = [
        user("fix the tests"),
        Message("assistant", (failed,)),
        Message("user", (ToolResult("t1", "E   KeyError: 'x'\n[exit code 1]"),)),
        Message("assistant", (cleared,)),
        Message("user", (ToolResult("t2", STUB_PREFIX + "bash ... failed with 3 lines]", True),)),
    ]
    assert span_facts(span).last_error == "E   KeyError: 'x'"

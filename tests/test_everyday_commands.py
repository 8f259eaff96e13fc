"""The pure parts of /diff, /copy, /export and /status, and git diff run on real repositories.

/diff's text: one path's diff (created, deleted, binary, line endings), the session's first state of
each path from its touches, the session's diff read from a real snapshot store and the disk, and
`git diff` refused where the repository's config names a program. /export's Markdown from typed
records; /copy's escape and the last answer; /status's address, which never shows a key."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.agent.file_changes import FILES_TOPIC, Change, Lost, Touch
from agent_cli.agent.session_diff import file_diff, git_diff, session_diff, session_plan
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.store.log_records import EventRecord, LogRecord, MessageRecord, StateRecord
from agent_cli.store.snapshots import SnapshotStore
from agent_cli.ui.everyday_commands import _served_at, osc52
from agent_cli.ui.markdown_export import export_markdown, last_answer


def touch_record(*changes: Change | Lost) -> StateRecord:
    touch = Touch(
        "write_file",
        tuple(c for c in changes if isinstance(c, Change)),
        tuple(c for c in changes if isinstance(c, Lost)),
    )
    return StateRecord("r", "2026-12-05T08:00:00Z", FILES_TOPIC, touch.to_json())


# ---- one path's diff ---------------------------------------------------------------------------


def test_a_file_diff_is_unified_and_none_when_nothing_differs() -> None:
    assert file_diff("a.txt", b"same\n", b"same\n") is None
    changed = file_diff("a.txt", b"one\ntwo\n", b"one\nthree\n")
    assert changed is not None
    assert changed.lines[:2] == ("--- a/a.txt", "+++ b/a.txt") and "-two" in changed.lines
    assert "+three" in changed.lines
    created = file_diff("new.txt", None, b"hello\n")
    assert created is not None and created.lines[0] == "--- /dev/null" and "+hello" in created.lines
    deleted = file_diff("old.txt", b"bye\n", None)
    assert deleted is not None and deleted.lines[1] == "+++ /dev/null" and "-bye" in deleted.lines


def test_binary_and_line_ending_changes_are_named_not_diffed() -> None:
    binary = file_diff("img.bin", b"\x00\x01", b"\x00\x02")
    assert binary is not None and binary.note == "binary file changed" and not binary.lines
    endings = file_diff("a.txt", b"x\n", b"x\r\n")
    assert endings is not None and endings.note == "only line endings changed"


def test_the_first_touch_of_a_path_says_how_the_session_found_it() -> None:
    records: list[LogRecord] = [
        touch_record(Change("a.txt", "file", "d1"), Lost("/etc/x", "outside the project")),
        touch_record(Change("a.txt", "file", "d2"), Change("b.txt", "absent")),
    ]
    changes, lost = session_plan(records)
    assert changes == (Change("a.txt", "file", "d1"), Change("b.txt", "absent"))
    assert lost == (Lost("/etc/x", "outside the project"),)


def test_the_session_diff_reads_the_snapshots_and_the_disk(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    store = SnapshotStore(tmp_path / "session")
    digest = store.put(b"before\n")
    (root / "a.txt").write_text("after\n")
    (root / "made.txt").write_text("new\n")
    (root / "same.txt").write_text("kept\n")
    same = store.put(b"kept\n")
    os.symlink("/etc/passwd", root / "link.txt")
    records: list[LogRecord] = [
        touch_record(
            Change("a.txt", "file", digest),
            Change("made.txt", "absent"),
            Change("same.txt", "file", same),
            Change("link.txt", "absent"),
            Change("gone.txt", "file", "0" * 64),  # a snapshot that is not there
            Change("../out.txt", "absent"),
        )
    ]
    found = {d.path: d for d in session_diff(root, store, records).files}
    assert "-before" in found["a.txt"].lines and "+after" in found["a.txt"].lines
    assert found["made.txt"].lines[0] == "--- /dev/null"
    assert "same.txt" not in found, "a file back as it was is no change"
    assert found["link.txt"].note == "now a symbolic link: not followed"
    assert found["gone.txt"].note == "its content before the session was not kept"
    assert found["../out.txt"].note == "not a path inside the project"


# ---- git diff ----------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e")
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "start")
    (root / "a.txt").write_text("two\n")
    return root


def test_git_diff_outside_a_repository_says_so(tmp_path: Path) -> None:
    assert git_diff(tmp_path).repository is False


def test_git_diff_of_a_plain_repository(repo: Path) -> None:
    found = git_diff(repo)
    assert found.repository and not found.refused
    assert "-one" in found.text and "+two" in found.text


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("diff.external", "touch {pwned}"),
        ("core.fsmonitor", "touch {pwned}"),
        ("diff.txt.textconv", "touch {pwned}"),
    ],
)
def test_git_diff_is_not_run_where_the_config_names_a_program(
    repo: Path, tmp_path: Path, key: str, value: str
) -> None:
    pwned = tmp_path / "PWNED"
    _git(repo, "config", key, value.format(pwned=pwned))
    if key.endswith("textconv"):
        (repo / ".gitattributes").write_text("*.txt diff=txt\n")
    found = git_diff(repo)
    assert found.repository and found.refused and not found.text
    assert not pwned.exists()


# ---- /export, /copy, /status -------------------------------------------------------------------


def test_export_markdown_has_the_prompts_answers_calls_and_compactions() -> None:
    use = ToolUse("c1", "bash", {"command": "ls\x1b[2J"})
    records: list[LogRecord] = [
        MessageRecord("1", "t", Message.user("what is here?")),
        MessageRecord("2", "t", Message("assistant", (TextBlock("Looking."), use))),
        MessageRecord("3", "t", Message("user", (ToolResult("c1", "a.py\nb.py"),))),
        MessageRecord("4", "t", Message.assistant("Two files: `a.py` and b.py.\x1b]52;c;aGk=\x07")),
        EventRecord(
            "5",
            "t",
            CompactEvent(
                layer="summarize",
                trigger="auto",
                messages_before=10,
                messages_after=3,
                tokens_before=9000,
                tokens_after=1200,
                summary="The user asked.",
            ),
        ),
    ]
    text = export_markdown("S1", records)
    assert text.startswith("# Session S1\n")
    assert "## User\n\nwhat is here?" in text
    assert "## Assistant\n\nLooking.\n- called `bash`" in text
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]52;c;aGk=\\x07" in text
    assert "- result of `bash`: `a.py b.py` (2 lines, 9 characters)" in text
    assert "Two files: `a.py` and b.py." in text
    assert "*Compacted (summarize, auto): 10 → 3 messages, 9,000 → 1,200 tokens*" in text
    assert "> The user asked." in text


def test_the_last_answer_is_the_last_assistant_text() -> None:
    history = [Message.user("q"), Message.assistant("first"), Message.user("q2")]
    assert last_answer(history) == "first"
    assert last_answer([Message.user("q")]) is None


def test_osc52_carries_the_text_base64() -> None:
    escape = osc52("héllo")
    assert escape.startswith("\x1b]52;c;") and escape.endswith("\x07")
    assert base64.b64decode(escape[7:-1]).decode() == "héllo"


def test_status_names_the_host_never_a_key_or_path() -> None:
    assert _served_at("https://user:sk-secret@api.example.com:8443/v1?key=x") == "api.example.com:8443"
    assert _served_at(None) == "the provider's own API"

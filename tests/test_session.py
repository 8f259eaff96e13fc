"""SessionLog on disk: durability, permissions, redaction, resume; listing and id resolution."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.core.events import AssistantTextDelta, CompactEvent, ToolCallEvent
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.pairing import INTERRUPTED_RESULT, pairing_errors
from agent_cli.store.layout import SESSION_FILE, new_session_id, transcripts_dir
from agent_cli.store.redact import REDACTED, Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import latest_session_id, list_sessions, load_session, resolve_session_id
from agent_cli.ui import transcript_views as view

API_KEY = "sk-ant-api03-" + "Zq7xW2" * 15
META = {"provider": "anthropic", "model": "claude-test", "cwd": "/p", "version": "0.1.0"}


class Clock:
    """A fake clock that advances one second per reading."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 11, 30, 14, 25, 0, tzinfo=UTC))


@pytest.fixture
def log(tmp_path: Path, clock: Clock) -> Iterator[SessionLog]:
    with SessionLog.create(tmp_path, redactor=Redactor([API_KEY]), meta=META, clock=clock) as session:
        yield session


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def tool_round(i: int) -> list[Message]:
    use = ToolUse(f"t{i}", "read_file", {"path": f"f{i}.py"})
    return [Message.of("assistant", [use]), Message.of("user", [ToolResult(f"t{i}", f"contents {i}")])]


def test_session_id_is_sortable_and_unique() -> None:
    t = datetime(2026, 11, 30, 14, 25, 1, tzinfo=UTC)
    sid = new_session_id(t)
    assert re.fullmatch(r"20261130-142501-[0-9a-f]{6}", sid)
    assert new_session_id(t) != sid
    assert new_session_id(t + timedelta(seconds=1)) > sid


def test_records_are_json_lines_with_rid_ts_kind(log: SessionLog) -> None:
    msg = Message.user("hello")
    log.log_message(msg)
    log.log_event(ToolCallEvent(id="t1", name="bash", input={"command": "ls"}))
    log.log_history([msg], "clear")
    records = lines(log.path)
    assert [r["kind"] for r in records] == ["meta", "message", "event", "history"]
    assert all({"rid", "ts", "kind"} <= set(r) for r in records)
    assert records[0]["meta"] == META
    assert records[1]["rid"] == msg.id and records[1]["message"] == msg.to_json()
    assert records[2]["event"] == ToolCallEvent(id="t1", name="bash", input={"command": "ls"}).to_json()
    assert records[3]["reason"] == "clear" and records[3]["messages"] == [msg.to_json()]
    assert datetime.fromisoformat(str(records[0]["ts"])).tzinfo is not None


def test_stream_deltas_are_not_logged(log: SessionLog) -> None:
    log.log_event(AssistantTextDelta(text="tok"))
    assert [r["kind"] for r in lines(log.path)] == ["meta"]


def test_each_record_is_on_disk_when_the_call_returns(log: SessionLog) -> None:
    # Read through a separate descriptor while the log stays open.
    log.log_message(Message.user("one"))
    assert len(lines(log.path)) == 2
    log.log_message(Message.user("two"))
    assert len(lines(log.path)) == 3


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_permissions_are_private_under_any_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        log = SessionLog.create(tmp_path, redactor=Redactor(), meta=META)
        log.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(transcripts_dir(tmp_path).stat().st_mode) == 0o700
    assert stat.S_IMODE(log.dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600


def test_open_tightens_permissions_of_an_existing_session(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, redactor=Redactor(), meta=META)
    log.close()
    os.chmod(transcripts_dir(tmp_path), 0o755)
    os.chmod(log.dir, 0o755)
    os.chmod(log.path, 0o644)
    SessionLog.open(tmp_path, log.id, redactor=Redactor()).close()
    assert stat.S_IMODE(transcripts_dir(tmp_path).stat().st_mode) == 0o700
    assert stat.S_IMODE(log.dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600


def test_api_key_never_reaches_any_file(tmp_path: Path, log: SessionLog) -> None:
    key_cmd = f"curl -H 'x-api-key: {API_KEY}' https://api.example"
    log.log_meta({"api_key": API_KEY, "key_file": Path(f"/keys/{API_KEY}"), **META})  # non-JSON value too
    log.log_message(Message.user(f"my key is {API_KEY}"))
    log.log_message(Message.of("assistant", [ToolUse("t1", "bash", {"command": key_cmd})]))
    log.log_message(Message.of("user", [ToolResult("t1", f"echo {API_KEY}")]))
    log.log_event(ToolCallEvent(id="t1", name="bash", input={"command": key_cmd}))
    log.log_history([Message.user(API_KEY)], "compaction")
    log.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for f in files:
        assert API_KEY not in f.read_text()
    assert REDACTED in log.path.read_text()
    assert all(isinstance(r, dict) for r in lines(log.path))  # redaction kept every line valid JSON


def test_torn_last_line_is_skipped_and_earlier_records_survive(tmp_path: Path, log: SessionLog) -> None:
    first, second = Message.user("first"), Message.assistant("second")
    log.log_message(first)
    log.log_message(second)
    log.close()
    with log.path.open("ab") as f:  # a crash in the middle of writing a record
        f.write(b'{"rid":"m_x","ts":"2026-11-30T14:26:00","kind":"message","message":{"role":"us')
    loaded = load_session(tmp_path, log.id)
    assert [m.id for m in loaded.messages] == [first.id, second.id]
    assert loaded.skipped_lines == 1
    assert loaded.meta == META


def test_undecodable_lines_anywhere_are_skipped_and_counted(tmp_path: Path, log: SessionLog) -> None:
    log.log_message(Message.user("a"))
    with log.path.open("ab") as f:
        f.write(b"\xff\xfe not json\n[1, 2]\n")
        f.write(b'{"rid":"r","ts":"x","kind":"message","message":{"role":"robot","content":[]}}\n')
    log.log_message(Message.assistant("b"))
    loaded = load_session(tmp_path, log.id)
    assert [m.text for m in loaded.messages] == ["a", "b"]
    assert loaded.skipped_lines == 3


def test_reopening_after_a_torn_line_does_not_glue_the_next_record(tmp_path: Path, log: SessionLog) -> None:
    log.log_message(Message.user("before crash"))
    log.close()
    with log.path.open("ab") as f:
        f.write(b'{"rid":"m_torn","ts":"2026-')
    later = Message.assistant("after resume")
    with SessionLog.open(tmp_path, log.id, redactor=Redactor()) as again:
        again.log_message(later)
    loaded = load_session(tmp_path, log.id)
    assert [m.text for m in loaded.messages] == ["before crash", "after resume"]
    assert loaded.skipped_lines == 1


def test_resume_starts_from_the_last_checkpoint_plus_later_messages(tmp_path: Path, log: SessionLog) -> None:
    old = [Message.user(f"old {i}") for i in range(4)]
    for m in old:
        log.log_message(m)
    summary = Message.user("summary of old 0-2")
    log.log_history([summary, old[3]], "compaction")
    later = [Message.assistant("reply"), Message.user("next question")]
    for m in later:
        log.log_message(m)
    log.close()
    with SessionLog.open(tmp_path, log.id, redactor=Redactor()) as resumed:
        tail = Message.assistant("answer after resume")
        resumed.log_message(tail)
    loaded = load_session(tmp_path, log.id)
    assert [m.id for m in loaded.messages] == [summary.id, old[3].id, *(m.id for m in later), tail.id]
    assert loaded.skipped_lines == 0


def test_clear_checkpoint_empties_the_history(tmp_path: Path, log: SessionLog) -> None:
    log.log_message(Message.user("before"))
    log.log_history([], "clear")
    after = Message.user("after")
    log.log_message(after)
    assert [m.id for m in load_session(tmp_path, log.id).messages] == [after.id]


def test_history_ending_in_a_tool_use_gets_interrupted_results(tmp_path: Path, log: SessionLog) -> None:
    log.log_message(Message.user("read both"))
    call = Message.of("assistant", [ToolUse("t1", "read_file", {"path": "a"}), ToolUse("t2", "bash", {})])
    log.log_message(call)
    loaded = load_session(tmp_path, log.id)
    assert pairing_errors(loaded.messages) == []
    assert loaded.messages[-2].id == call.id
    results = loaded.messages[-1].tool_results
    assert [(r.tool_use_id, r.content, r.is_error) for r in results] == [
        ("t1", INTERRUPTED_RESULT, True),
        ("t2", INTERRUPTED_RESULT, True),
    ]


def test_writing_after_close_raises(log: SessionLog) -> None:
    log.close()
    log.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        log.log_message(Message.user("late"))


def test_open_and_load_reject_unknown_or_unsafe_ids(tmp_path: Path) -> None:
    for bad in ("nope", "../etc", ".hidden", "a/b", ""):
        with pytest.raises(ConfigError):
            SessionLog.open(tmp_path, bad, redactor=Redactor())
        with pytest.raises(ConfigError):
            load_session(tmp_path, bad)


def _make(tmp_path: Path, start: datetime, prompts: list[str], model: str = "m1") -> SessionLog:
    log = SessionLog.create(tmp_path, redactor=Redactor(), meta={**META, "model": model}, clock=Clock(start))
    for p in prompts:
        log.log_message(Message.user(p))
        log.log_message(Message.assistant("ok"))
    log.close()
    return log


def test_list_latest_and_prefix_resolution(tmp_path: Path) -> None:
    assert latest_session_id(tmp_path) is None
    assert list_sessions(tmp_path) == []
    day = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)
    a = _make(tmp_path, day, ["fix  the\nbug", "more"], model="claude-a")
    b = _make(tmp_path, day + timedelta(hours=1), ["add tests"], model="gpt-b")
    c = _make(tmp_path, day + timedelta(days=1), [], model="claude-c")
    # Make `a` the most recently updated, although it started first.
    future = datetime.now().timestamp() + 60
    os.utime(a.path, (future, future))
    (transcripts_dir(tmp_path) / "not-a-session").mkdir()  # no log: ignored

    assert latest_session_id(tmp_path) == a.id
    infos = list_sessions(tmp_path)
    assert infos[0].id == a.id
    by_id = {i.id: i for i in infos}
    assert set(by_id) == {a.id, b.id}  # `c`, in which nothing was said, is not listed
    assert by_id[a.id].message_count == 4 and by_id[a.id].first_prompt == "fix the bug"
    assert by_id[a.id].model == "claude-a" and by_id[b.id].model == "gpt-b"
    assert by_id[b.id].started == day + timedelta(hours=1, seconds=2)

    assert resolve_session_id(tmp_path, a.id) == a.id
    assert resolve_session_id(tmp_path, "20261201") == c.id
    assert resolve_session_id(tmp_path, b.id[:-2]) == b.id
    with pytest.raises(ConfigError, match="ambiguous: it matches 2 sessions"):
        resolve_session_id(tmp_path, "20261130")
    with pytest.raises(ConfigError, match="no session matches '1999'"):
        resolve_session_id(tmp_path, "1999")


def test_resolution_in_a_project_without_sessions(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no sessions in this project yet"):
        resolve_session_id(tmp_path, "2026")


def test_compact_event_round_trips_through_the_log(tmp_path: Path, log: SessionLog) -> None:
    event = CompactEvent(
        layer="summarize",
        trigger="auto",
        messages_before=40,
        messages_after=6,
        tokens_before=90_000,
        tokens_after=12_000,
        summary="did things",
        transcript="t/x.jsonl",
        duration=1.23456,
    )
    log.log_event(event)
    record = lines(log.path)[-1]
    assert record["event"] == event.to_json()
    assert (log.dir / SESSION_FILE) == log.path


# ---- transcripts_view: list, show, search ---------------------------------------------


def test_format_list_is_a_table_newest_first(tmp_path: Path) -> None:
    day = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)
    _make(tmp_path, day, ["first   task\nwith lines"], model="claude-a")
    text = view.format_list(list_sessions(tmp_path), tz=UTC)
    header, row = text.splitlines()
    assert header.split() == ["ID", "UPDATED", "MSGS", "MODEL", "FIRST", "PROMPT"]
    assert row.startswith("20261130-090001-") and "claude-a" in row and row.endswith("first task with lines")
    assert view.format_list([]) == "No sessions in this project yet."


def test_format_show_reads_like_a_conversation(tmp_path: Path, log: SessionLog) -> None:
    log.log_message(Message.user("please fix the bug"))
    call = ToolUse("t1", "bash", {"command": "pytest -q"})
    log.log_message(Message.of("assistant", [TextBlock("Looking."), call]))
    output = "\n".join(f"line {i}" for i in range(50))
    log.log_message(Message.of("user", [ToolResult("t1", output, is_error=True)]))
    log.log_event(
        CompactEvent(
            layer="summarize",
            trigger="auto",
            messages_before=40,
            messages_after=6,
            tokens_before=90_000,
            tokens_after=12_000,
            summary="fixed tests",
            transcript="span-001-x.jsonl",
        )
    )
    summary = Message.of("user", [SummaryBlock("We fixed the tests.", "span-001-x.jsonl")])
    log.log_history([summary], "compaction")
    log.log_message(Message.assistant("Done."))
    log.close()
    with log.path.open("ab") as f:
        f.write(b'{"torn')
    text = view.format_show(tmp_path, log.id)
    assert text.startswith(f"session {log.id}\nstarted ")
    assert "model claude-test" in text
    assert "[user]\nplease fix the bug" in text
    assert '[assistant]\nLooking.\n  -> bash {"command": "pytest -q"}' in text
    assert "  <- error bash: line 0 line 1" in text and "(50 lines," in text
    assert "line 49" not in text  # results are abbreviated
    assert "=== compacted (summarize, auto): 40 -> 6 messages, 90,000 -> 12,000 tokens" in text
    assert "=== working history replaced (compaction): 1 messages ===" in text
    assert "[assistant]\nDone." in text
    assert text.rstrip().endswith("(1 unreadable line skipped)")


def test_search_finds_hits_across_files_and_sessions(tmp_path: Path, clock: Clock) -> None:
    old = SessionLog.create(tmp_path, redactor=Redactor(), meta=META, clock=clock)
    old.log_message(Message.user("where is the FrobnicateWidget defined?"))
    old.close()
    new = SessionLog.create(tmp_path, redactor=Redactor(), meta=META, clock=clock)
    msg = Message.assistant("frobnicatewidget lives in widgets.py")
    new.log_message(msg)
    new.log_event(
        CompactEvent(
            layer="summarize",
            trigger="auto",
            messages_before=9,
            messages_after=2,
            tokens_before=900,
            tokens_after=100,
            summary="talked about FROBNICATEWIDGET",
            transcript=None,
        )
    )
    new.close()
    span = Message.user('span text: the Frobnicatewidget "quoted" café')
    (new.dir / "span-001-early.jsonl").write_text(json.dumps(span.to_json()) + "\n")  # ASCII-escaped JSON
    (new.dir / "output-002-t9.txt").write_text("[full output]\nnothing\n... frobnicateWidget() at line 3\n")
    (new.dir / "notes.md").write_text("frobnicatewidget in a file type search ignores")
    # As in a session: the span, then the output, were written before the log's last line.
    for second, name in enumerate(["span-001-early.jsonl", "output-002-t9.txt", SESSION_FILE], 1):
        os.utime(new.dir / name, ns=(second * 10**9, second * 10**9))

    hits = view.search(tmp_path, "frobnicatewidget")
    where = [(h.session_id, h.file, h.kind, h.rid) for h in hits]
    assert where == [  # newest first, in a session as across sessions
        (new.id, SESSION_FILE, "event/compact", hits[0].rid),
        (new.id, SESSION_FILE, "message", msg.id),
        (new.id, "output-002-t9.txt", "output", "output-002-t9.txt:3"),
        (new.id, "span-001-early.jsonl", "message", span.id),
        (old.id, SESSION_FILE, "message", hits[4].rid),
    ]
    assert "lives in widgets.py" in hits[1].snippet and hits[0].snippet == "talked about FROBNICATEWIDGET"
    assert [h.file for h in view.search(tmp_path, "CAFÉ")] == ["span-001-early.jsonl"]  # non-ASCII, escaped
    assert [h.file for h in view.search(tmp_path, '"quoted"')] == ["span-001-early.jsonl"]
    assert len(view.search(tmp_path, "frobnicatewidget", limit=2)) == 2
    assert view.search(tmp_path, "   ") == []
    text = view.format_search(hits[:3])
    assert f"{new.id}  message  {msg.id}\n    frobnicatewidget lives in widgets.py" in text
    assert "(output-002-t9.txt)" in text
    assert view.format_search([]) == "No matches."


def test_search_snippet_is_cut_around_the_match(tmp_path: Path, log: SessionLog) -> None:
    log.log_message(Message.user("a" * 500 + " needle " + "b" * 500))
    (hit,) = view.search(tmp_path, "NEEDLE")
    assert hit.snippet.startswith("...") and hit.snippet.endswith("...")
    assert "needle" in hit.snippet and len(hit.snippet) < 140

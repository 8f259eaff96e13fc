"""The session log read back as typed records: what `SessionLog` writes comes back as the values it
was written from; a torn or misfitting line is counted; what a newer version wrote is kept as far as
it can be read, and a session reopened says what was left out."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.agent.approvals import Asker
from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.events import CompactEvent, UsageEvent, WarningEvent
from agent_cli.core.messages import Message, Usage
from agent_cli.store.log_records import (
    EventRecord,
    ForeignRecord,
    HistoryRecord,
    MessageRecord,
    MetaRecord,
    StateRecord,
    read_log,
)
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import load_session
from agent_cli.testing.scripted import ScriptedProvider, say


def test_what_the_log_writes_reads_back_as_typed_records(tmp_path: Path) -> None:
    first, second = Message.user("fix the tests"), Message.assistant("on it")
    usage = UsageEvent(
        model="m", usage=Usage(input_tokens=10, output_tokens=2), context_tokens=10, context_window=99
    )
    compact = CompactEvent(
        layer="summarize",
        trigger="auto",
        messages_before=5,
        messages_after=2,
        tokens_before=9,
        tokens_after=3,
    )
    with SessionLog.create(
        tmp_path, redactor=Redactor(), meta={"model": "m", "provider": "anthropic"}
    ) as log:
        log.log_message(first)
        log.log_event(usage)
        log.log_message(second)
        log.log_event(compact)
        log.log_history([second], "compact")
        path = log.path
    records, skipped = read_log(path)
    assert skipped == 0
    assert [type(r) for r in records] == [
        MetaRecord,
        MessageRecord,
        EventRecord,
        MessageRecord,
        EventRecord,
        HistoryRecord,
    ]
    meta, m1, e1, m2, e2, history = records
    assert isinstance(meta, MetaRecord) and meta.meta["model"] == "m" and meta.ts
    assert isinstance(m1, MessageRecord) and m1.message == first and m1.rid == first.id
    assert isinstance(e1, EventRecord) and e1.event == usage
    assert isinstance(e2, EventRecord) and e2.event == compact
    assert isinstance(m2, MessageRecord) and m2.message == second
    assert (
        isinstance(history, HistoryRecord) and history.messages == (second,) and history.reason == "compact"
    )


def test_torn_and_misfitting_lines_are_counted_unknown_kinds_are_kept_by_kind(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    good = {"rid": "r1", "ts": "t", "kind": "event", "event": WarningEvent(message="w").to_json()}
    lines = [
        json.dumps(good),
        '{"rid": "r2", "kind": "message", "mess',  # torn
        json.dumps({"rid": "r3", "kind": "message", "message": {"role": "nobody", "content": []}}),  # misfit
        json.dumps({"rid": "r4", "kind": "event", "event": {"type": "usage"}}),  # misfit
        json.dumps({"rid": "r5", "kind": "bookmark", "at": 3}),  # a newer version's kind
        json.dumps({"rid": "r6", "kind": "event", "event": {"type": "hook_ran", "name": "x"}}),  # newer type
        json.dumps([1, 2]),  # not a record
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe\n")
    records, skipped = read_log(path)
    # A newer version's kind is kept by its kind only (the reader of a session says it left it out).
    assert records == [EventRecord("r1", "t", WarningEvent(message="w")), ForeignRecord("r5", "", "bookmark")]
    assert skipped == 5  # torn, two misfits, not a record, undecodable bytes


def _newer_log(tmp_path: Path) -> str:
    """A session the user had, then two prompts a newer version logged with a block type this one does
    not know (the agent stopped before they were answered), and a record of a newer kind."""
    with SessionLog.create(tmp_path, redactor=Redactor(), meta={"model": "claude-sonnet-4-5"}) as log:
        log.log_message(Message.user("first question"))
        log.log_message(Message.assistant("first answer"))
        session_id, path = log.id, log.path
    with path.open("a") as f:
        for n, text in enumerate(("PENDING-ONE", "PENDING-TWO")):
            message = Message.user(text).to_json()
            message["content"].append({"type": "video", "source": {"type": "base64", "data": "AAAA"}})
            f.write(json.dumps({"rid": f"n{n}", "ts": "t", "kind": "message", "message": message}) + "\n")
        f.write(json.dumps({"rid": "n3", "ts": "t", "kind": "bookmark", "at": 3}) + "\n")
    return session_id


def test_messages_a_newer_version_wrote_are_kept_in_order_and_what_was_left_out_is_said(
    tmp_path: Path,
) -> None:
    session_id = _newer_log(tmp_path)
    loaded = load_session(tmp_path, session_id)
    # Before: both prompts were unreadable lines, dropped without a word.
    assert [m.text for m in loaded.messages] == [
        "first question",
        "first answer",
        "PENDING-ONE",
        "PENDING-TWO",
    ]
    assert loaded.notes == (
        f"session {session_id}: 1 record of kind bookmark left out (a newer agent-cli wrote them; "
        "this version cannot read them)",
        f"session {session_id}: 2 messages kept without their video parts (a newer agent-cli wrote them; "
        "this version cannot read them)",
    )


def test_continue_sends_the_newer_prompts_and_warns_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"ANTHROPIC_API_KEY": "k", "HOME": str(home), "XDG_STATE_HOME": str(home / "state")}
    project = tmp_path / "project"
    project.mkdir(parents=True)
    session_id = _newer_log(project)
    settings = load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-4-5"), cwd=project)
    provider = ScriptedProvider([say("ok")])
    yes: Asker = lambda name, args, always: "yes"  # noqa: E731 - the user accepts the unsigned log
    session = open_session(settings, env=env, resume=session_id, ask=yes, make_provider=lambda p: provider)
    list(session.run("go on"))
    session.close()
    sent = [m.text for m in provider.requests[-1].messages]
    assert sent == ["first question", "first answer", "PENDING-ONE", "PENDING-TWO", "go on"]
    said = [w.message for w in session.warnings if "a newer agent-cli wrote them" in w.message]
    assert len(said) == 2 and "2 messages kept without their video parts" in said[1]


def test_a_state_record_reads_back_with_its_topic_and_data(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, redactor=Redactor(), meta={"model": "m"}) as log:
        log.log_state("pins", {"pins": ["never use tabs", "\u00e9t\u00e9 \u2014 keep"]})
        path = log.path
    records, skipped = read_log(path)
    states = [r for r in records if isinstance(r, StateRecord)]
    assert skipped == 0 and len(states) == 1
    assert states[0].topic == "pins" and states[0].data == {
        "pins": ["never use tabs", "\u00e9t\u00e9 \u2014 keep"]
    }


def test_a_state_record_without_its_data_is_counted_as_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps({"rid": "r1", "ts": "t", "kind": "state", "topic": "pins"}) + "\n")
    records, skipped = read_log(path)
    assert records == [] and skipped == 1

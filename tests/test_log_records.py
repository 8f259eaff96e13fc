"""The session log read back as typed records: what `SessionLog` writes comes back as the values it
was written from; a torn or misfitting line is counted, a kind this version does not know is not."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.core.events import CompactEvent, UsageEvent, WarningEvent
from agent_cli.core.messages import Message, Usage
from agent_cli.store.log_records import (
    EventRecord,
    HistoryRecord,
    MessageRecord,
    MetaRecord,
    StateRecord,
    read_log,
)
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog


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


def test_torn_and_misfitting_lines_are_counted_unknown_kinds_are_not(tmp_path: Path) -> None:
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
    assert records == [EventRecord("r1", "t", WarningEvent(message="w"))]
    assert skipped == 5  # torn, two misfits, not a record, undecodable bytes


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

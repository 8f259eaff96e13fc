"""The record a run ended owing, as the session log keeps it (context/across_runs.py): written by
`finish_run`, read back by the next run only while its digest still leads the history, and a log
entry that does not read (another version, a hand edit) owes nothing rather than failing the open."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from test_context_fakes import assistant, user

from agent_cli.context.across_runs import TOPIC, logged_owed, owed_state
from agent_cli.context.engine_state import StandIn
from agent_cli.core.messages import Message
from agent_cli.store.log_records import LogRecord, StateRecord

SPAN = (user("Read every file."), assistant("Reading f01.txt."))
DIGEST = (user("Condensed mechanical digest of the span"), assistant("Understood."))
TAIL = [user("go on"), assistant("ok")]
OWED = StandIn(SPAN, DIGEST, "/p/.transcripts/s/span-001-compact.jsonl")


def logged(*data: Mapping[str, Any]) -> list[LogRecord]:
    # Through JSON, as the log stores it.
    return [StateRecord(f"r{n}", "t", TOPIC, json.loads(json.dumps(d))) for n, d in enumerate(data)]


def test_the_record_owed_comes_back_while_its_digest_leads() -> None:
    history = [*DIGEST, *TAIL]
    back = logged_owed(logged(owed_state(OWED)), history)
    assert back is not None and back.owed
    assert back.span == SPAN and back.head == DIGEST and back.path == OWED.path


@pytest.mark.parametrize(
    ("history", "records"),
    [
        ([user("something else"), *TAIL], logged(owed_state(OWED))),  # an edit or a record took it away
        ([*DIGEST, *TAIL], logged(owed_state(OWED), {})),  # made since: the last entry says none
        ([*DIGEST, *TAIL], []),  # never owed
    ],
)
def test_nothing_is_owed_once_the_digest_is_gone_or_the_record_made(
    history: list[Message], records: list[LogRecord]
) -> None:
    assert logged_owed(records, history) is None


@pytest.mark.parametrize(
    "data",
    [
        {"span": "not a list", "head": ["x"], "path": "p"},
        {"span": [{"role": "robot", "content": []}], "head": [DIGEST[0].id], "path": "p"},
        {"span": [{"role": "user", "content": [{"type": "hologram"}]}], "head": [DIGEST[0].id], "path": "p"},
        {"head": [DIGEST[0].id]},
        {"span": [], "head": [], "path": "p"},
        {"span": [1, 2], "head": 3, "path": None},
    ],
)
def test_an_entry_that_does_not_read_owes_nothing(data: Mapping[str, Any]) -> None:
    assert logged_owed(logged(data), [*DIGEST, *TAIL]) is None

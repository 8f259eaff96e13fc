"""The engine across a session's runs: what it takes from the session log when the session opens,
and what it leaves there when a run ends.

    take_back(engine, records, history, frame)   # on opening: the counter's anchor, a record owed
    finish_run(engine, history, frame, log, owed)   # a run ends: the record due swapped in, or owed

*The anchor.* A resumed history is counted from the provider's last report, as if the session had
not stopped: that report was for the history up to the last assistant message, so with that prefix
anchored only what came after is counted locally.

*A record owed.* A digest stands in for the model's record while its summary call runs in the
background (engine_state.StandIn). When the run ends before that call has, the engine does not wait
for it (`decide`'s `OweRecord`): it is logged as owed (a state record: the span, the digest's message
ids, its transcript), and the next run of the session (`--continue`, `--resume`, `/resume`) reads it
back and makes it before its first request, while the digest still leads the history. The span is
kept whole in the log (as the log holds every message, redacted), so the record made later is the
reply to the request a summary of that span would have sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agent_cli.context.engine import ContextEngine
from agent_cli.context.engine_state import StandIn
from agent_cli.context.protocol import Frame, Prepared
from agent_cli.core.messages import Message
from agent_cli.store.log_records import LogRecord, StateRecord, last_usage

__all__ = ["TOPIC", "finish_run", "logged_owed", "owed_state", "take_back"]

TOPIC = "owed-record"  # the session log's state topic: {"span": [...], "head": [ids], "path": str}; {} none


class StateLog(Protocol):
    def log_state(self, topic: str, data: Mapping[str, Any]) -> None: ...


def take_back(
    engine: ContextEngine, records: Sequence[LogRecord], history: Sequence[Message], frame: Frame
) -> bool:
    """What the engine takes from the log of a session opened again: the provider's last report as
    the counter's anchor, and the record its last run owed (True when there is one)."""
    usage = last_usage(records)
    replies = [i for i, m in enumerate(history) if m.role == "assistant"]
    if usage is not None and replies:
        engine.observe(frame, history[: replies[-1]], usage)
    owed = logged_owed(records, history)
    if owed is not None:
        engine.owe(owed)  # (made before the next request)
    return owed is not None


def finish_run(
    engine: ContextEngine, history: Sequence[Message], frame: Frame, log: StateLog, owed: bool
) -> Prepared | None:
    """The run ends: the history to keep when the record a digest stood in for was swapped in (None
    otherwise); a record still being written is logged owed, and one the log owed (`owed`) and now
    made or no longer due is cleared from it."""
    finished = engine.finish(history, frame)
    if isinstance(finished, StandIn):
        log.log_state(TOPIC, owed_state(finished))
    elif owed:
        log.log_state(TOPIC, {})
    return finished if isinstance(finished, Prepared) else None


def owed_state(stand_in: StandIn) -> dict[str, Any]:
    return {
        "span": [m.to_json() for m in stand_in.span],
        "head": [m.id for m in stand_in.head],
        "path": stand_in.path,
    }


def logged_owed(records: Sequence[LogRecord], history: Sequence[Message]) -> StandIn | None:
    """The record the session's last run owed, when its digest still leads `history` (an edit,
    /clear or a later record took it away: nothing is owed then); None when none is."""
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    if last is None or not last.data:
        return None
    try:
        head = [str(i) for i in last.data["head"]]
        span = tuple(Message.from_json(m) for m in last.data["span"])
        path = str(last.data["path"])
    except (AttributeError, KeyError, TypeError, ValueError):  # a log another version wrote: nothing owed
        return None
    if not head or not span or [m.id for m in history[: len(head)]] != head:
        return None
    return StandIn(span, tuple(history[: len(head)]), path, owed=True)

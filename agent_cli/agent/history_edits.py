"""The user's commands that put another working history in place of the loop's.

    /record edit   the user's text becomes the condensed record (the old one archived first)
    /uncompact     the last L2/L3/L4 compaction undone, when what it removed fits the budget
    /rewind N      the conversation (and the files) back to just before prompt N

What each history is, is decided by pure functions (agent/record_edits.py, agent/rewind.py);
this module carries the choice out on the session's loop and engine: the history replaced under a
named checkpoint the log keeps (so `--resume` replays it), the engine told what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_cli.agent.file_changes import REWIND_TOPIC
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.record_edits import RECORD_EDIT, Uncompacted, find_record, uncompacted, with_record
from agent_cli.agent.restore import restore
from agent_cli.agent.rewind import Rewound, before_prompt, pick, points, rewind_data, undo_plan
from agent_cli.context.engine import ContextEngine
from agent_cli.core.errors import AgentError
from agent_cli.store.compactions import UNCOMPACT
from agent_cli.store.log_records import LogRecord
from agent_cli.store.session_log import SessionLog
from agent_cli.store.snapshots import SnapshotStore

__all__ = ["HistoryEdits"]


class HistoryEdits:
    """Edits of `loop`'s history, with `engine` kept in step and the files under `root` put back.
    All three are the session's own for its whole life (a model switch or a resume resets the loop
    and the engine in place); what changes with a resume (the log, its records) comes with each call."""

    def __init__(self, loop: AgentLoop, engine: ContextEngine, root: Path) -> None:
        self._loop = loop
        self._engine = engine
        self._root = root

    def edit_record(self, text: str) -> None:
        """The user's `text` becomes the record, byte for byte, in every later request; the record
        it replaces goes to the archive first. Raises AgentError when there is no record."""
        history = self._loop.history
        index = find_record(history)
        if index is None:
            raise AgentError("there is no condensed record in the context yet (/compact makes one)")
        if any(m.native is not None for m in history):
            raise AgentError(
                "this record is the provider's own (native compaction), signed: it cannot be edited"
            )
        self._engine.archive.write_span([history[index]], "record-before-edit")
        self._loop.replace_history(with_record(history, index, text), RECORD_EDIT)

    def uncompact(self, records: Sequence[LogRecord]) -> Uncompacted | None:
        """Undo the last L2/L3/L4 compaction when what it removed fits; None when there is none."""
        found = uncompacted(records, self._loop.history)
        if found is None:
            return None
        messages, restored = found
        tokens = self._engine.tokens(messages, self._loop.frame)
        room = self._engine.thresholds.budget
        if tokens > room:
            return Uncompacted(restored, tokens, over=tokens - room)
        self._loop.replace_history(messages, UNCOMPACT)
        self._engine.keep_size(tokens)
        return Uncompacted(restored, tokens)

    def rewind(
        self,
        number: int,
        chat: bool,
        code: bool,
        records: Sequence[LogRecord],
        *,
        log: SessionLog,
        snapshots: SnapshotStore,
    ) -> Rewound:
        """Go back to just before prompt `number`: the conversation (`chat`) to the history before it,
        and (`code`) every file under the root changed since to how it was then (from `snapshots`). The
        rewind is a record in `log`, with a checkpoint `--resume` replays; nothing is deleted.
        CommandError for a number no prompt has."""
        point = pick(points(records), number)
        restored = None
        if code:
            restored = restore(self._root, snapshots, undo_plan(records, point))
        log.log_state(REWIND_TOPIC, rewind_data(point, chat, code, restored))
        if chat:  # (a "rewind" checkpoint: /uncompact does not reach back past it)
            self._loop.replace_history(before_prompt(self._loop.history, records, point), "rewind")
            self._engine.restart()
        return Rewound(point, chat, restored)

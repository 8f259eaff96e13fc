"""Reading sessions back: a log's records, the working history they rebuild, the project's sessions.

`load_session` rebuilds the working history from the last checkpoint plus the
messages after it, skipping torn or undecodable lines, and repairs tool
pairing so a session stopped mid-tool resumes with "interrupted" results. What a
newer version wrote that this one cannot read (a record of another kind, a block of
another type in a message) is said in one line each (`LoadedSession.notes`): a
message keeps what can be read of it, in its place, and nothing goes without a word.
`list_sessions`, `session_ids`, `latest_session_id`, `continue_candidates` and
`resolve_session_id` find sessions in a project; an unknown or ambiguous id is a
ConfigError. A session in which nothing was said is neither listed nor continued.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_cli.core.errors import ConfigError
from agent_cli.core.messages import Message, NativeRecord, SummaryBlock
from agent_cli.core.pairing import repair_history
from agent_cli.core.thinking import settle_thinking, strip_thinking
from agent_cli.store.layout import ID_RE, SESSION_FILE, check_private_dir, session_dir, transcripts_dir
from agent_cli.store.log_records import (
    ForeignRecord,
    HistoryRecord,
    LogRecord,
    MessageRecord,
    MetaRecord,
    read_log,
)
from agent_cli.store.redact import REDACTED

__all__ = [
    "LoadedSession",
    "SessionInfo",
    "continue_candidates",
    "latest_session_id",
    "left_out_notes",
    "list_sessions",
    "load_session",
    "replay",
    "resolve_session_id",
    "sendable",
    "session_ids",
]

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class LoadedSession:
    id: str
    meta: JSONDict
    messages: list[Message]  # what to send: `logged` with its pairing repaired and stale thinking gone
    skipped_lines: int = 0
    logged: list[Message] = field(default_factory=list)  # what the log replays to, as written
    notes: tuple[str, ...] = ()  # what a newer version wrote that was not read, for the user


def replay(records: Iterable[LogRecord]) -> tuple[JSONDict, list[Message]]:
    """Meta and working history from a log's records (pure).

    The history starts from the last checkpoint and adds the messages logged
    after it; a message id seen already is not added twice.
    """
    meta: JSONDict = {}
    messages: list[Message] = []
    seen: set[str] = set()
    for rec in records:
        if isinstance(rec, MetaRecord):
            meta.update(rec.meta)
        elif isinstance(rec, MessageRecord):
            if rec.message.id not in seen:
                messages.append(rec.message)
                seen.add(rec.message.id)
        elif isinstance(rec, HistoryRecord):
            messages = list(rec.messages)
            seen = {m.id for m in messages}
    return meta, messages


def load_session(root: Path | str, session_id: str) -> LoadedSession:
    """Rebuild a session's working history from its log (see `replay`), pairing repaired."""
    directory = session_dir(root, session_id)
    check_private_dir(transcripts_dir(root), owner=False)
    check_private_dir(directory, owner=False)  # a planted link to a folder elsewhere is not read through
    path = directory / SESSION_FILE
    if not path.is_file():
        raise ConfigError(f"no session {session_id!r} in {transcripts_dir(root)}")
    records, skipped = read_log(path)
    meta, messages = replay(records)
    notes = tuple(left_out_notes(records, session_id))
    return LoadedSession(session_id, meta, sendable(messages), skipped, messages, notes)


def left_out_notes(records: list[LogRecord], session_id: str) -> list[str]:
    """One line for each kind of thing after the last checkpoint this version could not read (pure):
    records of kinds it does not know, and messages kept without blocks of types it does not know."""
    start = max((i for i, r in enumerate(records) if isinstance(r, HistoryRecord)), default=0)
    tail = records[start:]
    foreign = [r.kind for r in tail if isinstance(r, ForeignRecord)]
    partial = [r for r in tail if isinstance(r, MessageRecord) and r.left_out]
    newer = "a newer agent-cli wrote them; this version cannot read them"
    notes: list[str] = []
    if foreign:
        kinds = ", ".join(sorted(set(foreign)))
        notes.append(
            f"session {session_id}: {_count(len(foreign), 'record')} of kind {kinds} left out ({newer})"
        )
    if partial:
        types = ", ".join(sorted({t for r in partial for t in r.left_out}))
        emptied = sum(1 for r in partial if not r.message.content)
        lost = (
            f"; {emptied} had nothing else and {'is' if emptied == 1 else 'are'} left out" if emptied else ""
        )
        notes.append(
            f"session {session_id}: {_count(len(partial), 'message')} kept without their {types} parts "
            f"({newer}){lost}"
        )
    return notes


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def sendable(logged: list[Message]) -> list[Message]:
    """The logged history, pairing repaired, without the thinking that no longer matches it.

    Thinking is bound to the exact conversation before it: after a repaired
    message, or a message the log holds redacted (the provider saw the secret),
    the conversation differs from what the model saw, so its later thinking goes.
    """
    repaired = settle_thinking(logged, [_unsigned(m) for m in repair_history(logged)])
    redacted = next((i for i, m in enumerate(repaired) if REDACTED in json.dumps(m.to_json())), None)
    return repaired if redacted is None else strip_thinking(repaired, redacted)


def _unsigned(message: Message) -> Message:
    """`message`, or, when it holds a provider's record the log holds redacted, the message with that
    record's readable text as a record of ours: the provider would refuse the record (its signature
    covers the text the secret was in), and the user's words, carried beside it, are kept anyway."""
    native = message.native
    if native is None or REDACTED not in native.wire:
        return message
    note = f"[The {native.provider} compaction record, kept as text: the log holds it redacted]"
    text = f"{note}\n{native.text}" if native.readable else note
    return message.replace(SummaryBlock(text) if isinstance(b, NativeRecord) else b for b in message.content)


def session_ids(root: Path | str) -> list[str]:
    """Ids of the sessions in this project that have a log, oldest first.

    None when `.transcripts/` is a link (`check_private_dir` says why, for callers that must);
    a session folder that is a link is not one of them.
    """
    base = transcripts_dir(root)
    try:
        if not check_private_dir(base, owner=False):
            return []
    except (ConfigError, NotADirectoryError):  # a link, or a file in its place: no sessions there
        return []
    return sorted(
        p.name
        for p in base.iterdir()
        if ID_RE.fullmatch(p.name) and not p.is_symlink() and (p / SESSION_FILE).is_file()
    )


def latest_session_id(root: Path | str) -> str | None:
    """The session whose log was written last (ties: the later id), or None."""
    base = transcripts_dir(root)
    ids = session_ids(root)
    if not ids:
        return None
    return max(ids, key=lambda i: ((base / i / SESSION_FILE).stat().st_mtime_ns, i))


def continue_candidates(root: Path | str) -> Iterator[tuple[str, JSONDict]]:
    """(id, merged meta) of the sessions `--continue` may pick, the one written last first.

    A session in which nothing was said (the REPL opened and closed) is not one: continuing it
    would continue nothing. Logs are read lazily, so the usual case reads one.
    """
    base = transcripts_dir(root)
    ids = session_ids(root)

    def written(session_id: str) -> tuple[int, str]:
        try:
            return (base / session_id / SESSION_FILE).stat().st_mtime_ns, session_id
        except OSError:
            return 0, session_id

    for session_id in sorted(ids, key=written, reverse=True):
        try:
            records, _ = read_log(base / session_id / SESSION_FILE)
        except OSError:
            continue
        if not any(isinstance(r, MessageRecord | HistoryRecord) for r in records):
            continue
        meta: JSONDict = {}
        for rec in records:
            if isinstance(rec, MetaRecord):
                meta.update(rec.meta)
        yield session_id, meta


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    started: datetime | None
    updated: datetime
    message_count: int
    model: str = ""
    first_prompt: str = ""
    extra: JSONDict = field(default_factory=dict)  # the whole merged meta record
    problem: str = ""  # why the log could not be read ("" when it could)


def _parse_ts(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def _session_info(root: Path | str, session_id: str) -> SessionInfo:
    path = transcripts_dir(root) / session_id / SESSION_FILE
    records, _ = read_log(path)
    meta: JSONDict = {}
    count = 0
    first_prompt = ""
    for rec in records:
        if isinstance(rec, MetaRecord):
            meta.update(rec.meta)
        elif isinstance(rec, MessageRecord):
            count += 1
            msg = rec.message
            if not first_prompt and msg.is_plain_user and msg.text.strip():
                first_prompt = " ".join(msg.text.split())[:200]
    started = _parse_ts(records[0].ts) if records else None
    updated = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return SessionInfo(session_id, started, updated, count, str(meta.get("model") or ""), first_prompt, meta)


def _unreadable(root: Path | str, session_id: str, exc: OSError) -> SessionInfo:
    """A session whose log cannot be read (another owner after `sudo agent`, mode 000): listed, with why."""
    try:
        updated = datetime.fromtimestamp((transcripts_dir(root) / session_id).stat().st_mtime, UTC)
    except OSError:
        updated = datetime.fromtimestamp(0, UTC)
    return SessionInfo(session_id, None, updated, 0, problem=f"cannot read its log: {exc.strerror or exc}")


def list_sessions(root: Path | str) -> list[SessionInfo]:
    """Every session of this project, most recently updated first; unreadable ones say why."""
    infos = []
    for session_id in session_ids(root):
        try:
            info = _session_info(root, session_id)
        except OSError as exc:
            infos.append(_unreadable(root, session_id, exc))
            continue
        if info.message_count:
            infos.append(info)  # a session in which nothing was said is not worth a row
    infos.sort(key=lambda s: (s.updated, s.id), reverse=True)
    return infos


def resolve_session_id(root: Path | str, prefix: str) -> str:
    """The one session whose id is `prefix` or starts with it; ConfigError otherwise."""
    wanted = prefix.strip()
    ids = session_ids(root)
    where = transcripts_dir(root)
    if not ids:
        raise ConfigError(f"no sessions in this project yet ({where} has none)")
    if wanted in ids:
        return wanted
    matches = [i for i in ids if wanted and i.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ConfigError(f"no session matches {prefix!r} in {where}; `agent transcripts list` shows them")
    shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
    raise ConfigError(
        f"session id {prefix!r} is ambiguous: it matches {len(matches)} sessions ({shown}); "
        "give more characters"
    )

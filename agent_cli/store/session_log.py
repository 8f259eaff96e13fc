"""Sessions on disk: the append-only log in `.transcripts/<session-id>/session.jsonl`.

`SessionLog` writes one JSON record per line as things happen, each passed
through a `Redactor` and made durable (`os.fsync`) before the call returns, so
a crash loses at most the line being written. Records look like

    {"rid": <record id>, "ts": <ISO time>, "kind": <kind>, ...}

with kinds `meta` (provider, model, cwd, version), `message` (a message;
`rid` is its id), `event` (an event's JSON) and `history` (a checkpoint: the
complete working history after a compaction or `/clear`).

`load_session` rebuilds the working history from the last checkpoint plus the
messages after it, skipping torn or undecodable lines, and repairs tool
pairing so a session stopped mid-tool resumes with "interrupted" results.
The `.transcripts/` directory and each session directory are 0700, the log
0600: transcripts hold the user's code and commands.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from agent_cli.core.errors import ConfigError
from agent_cli.core.events import AssistantTextDelta, Event, StatusEvent
from agent_cli.core.messages import Message, new_id
from agent_cli.core.pairing import repair_history
from agent_cli.store.redact import Redactor

__all__ = [
    "SESSION_FILE",
    "TRANSCRIPTS_DIR",
    "LoadedSession",
    "SessionInfo",
    "SessionLog",
    "ensure_private_dir",
    "latest_session_id",
    "list_sessions",
    "load_session",
    "new_session_id",
    "read_records",
    "replay",
    "resolve_session_id",
    "session_dir",
    "session_ids",
    "transcripts_dir",
]

TRANSCRIPTS_DIR = ".transcripts"
SESSION_FILE = "session.jsonl"
_DIR_MODE = 0o700
_FILE_MODE = 0o600
# A session id is one plain path component (no separators, no leading dot).
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

Clock = Callable[[], datetime]
JSONDict = dict[str, Any]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def transcripts_dir(root: Path | str) -> Path:
    """`<root>/.transcripts`."""
    return Path(root) / TRANSCRIPTS_DIR


def session_dir(root: Path | str, session_id: str) -> Path:
    """`<root>/.transcripts/<session_id>`; ConfigError for an id that is not a plain name."""
    if not _ID_RE.fullmatch(session_id):
        raise ConfigError(f"invalid session id {session_id!r} (ids look like 20261130-142501-3fa2c1)")
    return transcripts_dir(root) / session_id


def new_session_id(now: datetime) -> str:
    """A sortable, unique-enough id: UTC time to the second plus 6 random hex digits."""
    return f"{now.astimezone(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and parents) if needed and make it 0700, whatever the umask."""
    path.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    if (path.stat().st_mode & 0o777) != _DIR_MODE:
        os.chmod(path, _DIR_MODE)


def _open_append(path: Path) -> int:
    # O_NOFOLLOW: a planted symlink must not redirect the log elsewhere.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, _FILE_MODE)
    try:
        os.fchmod(fd, _FILE_MODE)  # the umask may have left it wider, or the file predates us
    except BaseException:
        os.close(fd)
        raise
    return fd


class SessionLog:
    """The append-only, fsynced, redacted JSONL log of one session. Thread-safe."""

    def __init__(self, session_id: str, directory: Path, fd: int, redactor: Redactor, clock: Clock) -> None:
        # Use `create` or `open`; this only wires the parts together.
        self._id = session_id
        self._dir = directory
        self._fd: int | None = fd
        self._redactor = redactor
        self._clock = clock
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls,
        root: Path | str,
        *,
        redactor: Redactor,
        meta: Mapping[str, Any],
        clock: Clock = _utc_now,
    ) -> SessionLog:
        """Start a new session under `root` and write its `meta` record."""
        base = transcripts_dir(root)
        ensure_private_dir(base)
        while True:
            session_id = new_session_id(clock())
            directory = base / session_id
            try:
                directory.mkdir(mode=_DIR_MODE)
            except FileExistsError:
                continue  # same second, same random suffix: draw again
            break
        os.chmod(directory, _DIR_MODE)
        log = cls(session_id, directory, _open_append(directory / SESSION_FILE), redactor, clock)
        log.log_meta(meta)
        return log

    @classmethod
    def open(
        cls,
        root: Path | str,
        session_id: str,
        *,
        redactor: Redactor,
        clock: Clock = _utc_now,
    ) -> SessionLog:
        """Append to an existing session (for --resume / --continue)."""
        directory = session_dir(root, session_id)
        path = directory / SESSION_FILE
        if not path.is_file():
            raise ConfigError(f"no session {session_id!r} in {transcripts_dir(root)}")
        ensure_private_dir(transcripts_dir(root))
        ensure_private_dir(directory)
        fd = _open_append(path)
        log = cls(session_id, directory, fd, redactor, clock)
        # A crash may have left a torn last line; start on a fresh line so the
        # next record is not glued to it (and lost with it).
        if path.stat().st_size > 0:
            with path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    log._write_bytes(b"\n")
        return log

    @property
    def id(self) -> str:
        return self._id

    @property
    def dir(self) -> Path:
        return self._dir

    @property
    def path(self) -> Path:
        return self._dir / SESSION_FILE

    @property
    def closed(self) -> bool:
        return self._fd is None

    def log_meta(self, meta: Mapping[str, Any]) -> None:
        """Provider, model, cwd, version: what `list_sessions` and `format_show` display."""
        self._record("meta", new_id("r"), {"meta": dict(meta)})

    def log_message(self, message: Message) -> None:
        self._record("message", message.id, {"message": message.to_json()})

    def log_event(self, event: Event) -> None:
        # Deltas and spinner text are display-only: the complete text arrives as
        # a message, and an fsync per streamed token would slow the stream.
        if isinstance(event, AssistantTextDelta | StatusEvent):
            return
        self._record("event", new_id("r"), {"event": event.to_json()})

    def log_history(self, messages: Sequence[Message], reason: str) -> None:
        """A checkpoint: the whole working history, after a compaction or /clear."""
        payload = {"reason": reason, "messages": [m.to_json() for m in messages]}
        self._record("history", new_id("r"), payload)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _record(self, kind: str, rid: str, payload: Mapping[str, Any]) -> None:
        record: JSONDict = {"rid": rid, "ts": self._clock().isoformat(timespec="milliseconds"), "kind": kind}
        record.update(payload)
        # Redact the structure, not the serialized line, so a pattern can never
        # swallow JSON syntax and corrupt the line.
        clean = self._redactor.redact_json(record)
        line = json.dumps(clean, ensure_ascii=False, separators=(",", ":"), default=self._redacted_str) + "\n"
        self._write_bytes(line.encode("utf-8"))

    def _redacted_str(self, value: object) -> str:
        """JSON fallback for non-JSON values (paths, ...): their text, redacted too."""
        return self._redactor.redact(str(value))

    def _write_bytes(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None:
                raise ValueError(f"session log {self._id} is closed")
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)


# ---- reading -------------------------------------------------------------------


def read_records(path: Path) -> tuple[list[JSONDict], int]:
    """The records of a JSONL file and the number of lines skipped (torn or undecodable)."""
    records: list[JSONDict] = []
    skipped = 0
    for raw in path.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:  # includes UnicodeDecodeError
            skipped += 1
            continue
        if isinstance(value, dict):
            records.append(value)
        else:
            skipped += 1
    return records, skipped


@dataclass(frozen=True, slots=True)
class LoadedSession:
    id: str
    meta: JSONDict
    messages: list[Message]
    skipped_lines: int = 0


def replay(records: Iterable[Mapping[str, Any]]) -> tuple[JSONDict, list[Message], int]:
    """Meta, working history and bad-record count from session records (pure).

    The history starts from the last checkpoint and adds the messages logged
    after it; a message id seen already is not added twice.
    """
    meta: JSONDict = {}
    messages: list[Message] = []
    seen: set[str] = set()
    bad = 0
    for rec in records:
        kind = rec.get("kind")
        try:
            if kind == "meta":
                meta.update(dict(rec["meta"]))
            elif kind == "message":
                msg = Message.from_json(rec["message"])
                if msg.id not in seen:
                    messages.append(msg)
                    seen.add(msg.id)
            elif kind == "history":
                messages = [Message.from_json(m) for m in rec["messages"]]
                seen = {m.id for m in messages}
        except (KeyError, TypeError, ValueError, AttributeError):
            bad += 1
    return meta, messages, bad


def load_session(root: Path | str, session_id: str) -> LoadedSession:
    """Rebuild a session's working history from its log (see `replay`), pairing repaired."""
    path = session_dir(root, session_id) / SESSION_FILE
    if not path.is_file():
        raise ConfigError(f"no session {session_id!r} in {transcripts_dir(root)}")
    records, skipped = read_records(path)
    meta, messages, bad = replay(records)
    return LoadedSession(session_id, meta, repair_history(messages), skipped + bad)


def session_ids(root: Path | str) -> list[str]:
    """Ids of the sessions in this project that have a log, oldest first."""
    base = transcripts_dir(root)
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if _ID_RE.fullmatch(p.name) and (p / SESSION_FILE).is_file())


def latest_session_id(root: Path | str) -> str | None:
    """The session whose log was written last (ties: the later id), or None."""
    base = transcripts_dir(root)
    ids = session_ids(root)
    if not ids:
        return None
    return max(ids, key=lambda i: ((base / i / SESSION_FILE).stat().st_mtime_ns, i))


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    started: datetime | None
    updated: datetime
    message_count: int
    model: str = ""
    first_prompt: str = ""
    extra: JSONDict = field(default_factory=dict)  # the whole merged meta record


def _parse_ts(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def _session_info(root: Path | str, session_id: str) -> SessionInfo:
    path = transcripts_dir(root) / session_id / SESSION_FILE
    records, _ = read_records(path)
    meta: JSONDict = {}
    count = 0
    first_prompt = ""
    for rec in records:
        if rec.get("kind") == "meta" and isinstance(rec.get("meta"), dict):
            meta.update(rec["meta"])
        elif rec.get("kind") == "message":
            count += 1
            if not first_prompt:
                try:
                    msg = Message.from_json(rec["message"])
                except (KeyError, TypeError, ValueError, AttributeError):
                    continue
                if msg.is_plain_user and msg.text.strip():
                    first_prompt = " ".join(msg.text.split())[:200]
    started = _parse_ts(records[0].get("ts")) if records else None
    updated = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return SessionInfo(session_id, started, updated, count, str(meta.get("model") or ""), first_prompt, meta)


def list_sessions(root: Path | str) -> list[SessionInfo]:
    """Every session of this project, most recently updated first."""
    infos = [_session_info(root, i) for i in session_ids(root)]
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
    raise ConfigError(f"session id {prefix!r} is ambiguous: it matches {len(matches)} sessions ({shown}); "
                      "give more characters")

"""The session log: `.transcripts/<session-id>/session.jsonl`, append-only.

`SessionLog` writes one JSON record per line as things happen, each passed
through a `Redactor` and made durable (`os.fsync`) before the call returns, so
a crash loses at most the line being written. Records look like

    {"rid": <record id>, "ts": <ISO time>, "kind": <kind>, ...}

with kinds `meta` (provider, model, cwd, version), `message` (a message;
`rid` is its id), `event` (an event's JSON) and `history` (a checkpoint: the
complete working history after a compaction or `/clear`). Reading a log back
is `sessions.py`.

A write that fails (the disk full above all) is undone: the file is cut back
to where it ended before, so it holds whole records only and reads back as
it was. The log then refuses every later record with the same one-line
`SessionLogError` (a `DiskFullError` for ENOSPC / EDQUOT): a session that
went on would leave a hole in its record, and `--resume` after the space is
freed goes on from the last record saved.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from agent_cli.core.errors import ConfigError, DiskFullError, SessionLogError, disk_full_reason
from agent_cli.core.events import AssistantTextDelta, Event, StatusEvent
from agent_cli.core.messages import Message, new_id
from agent_cli.core.text import clean as clean_text
from agent_cli.store.image_refs import by_reference, image_digests
from agent_cli.store.layout import (
    DIR_MODE,
    FILE_MODE,
    LOCK_FILE,
    SESSION_FILE,
    TASKS_DIR,
    ensure_private_dir,
    new_session_id,
    no_session_on_a_full_disk,
    session_dir,
    transcripts_dir,
)
from agent_cli.store.redact import Redactor
from agent_cli.store.session_lock import hold_session

__all__ = ["SessionLog"]

Clock = Callable[[], datetime]
JSONDict = dict[str, Any]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _open_append(path: Path) -> int:
    # O_NOFOLLOW: a planted symlink must not redirect the log elsewhere.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # the umask may have left it wider, or the file predates us
    except BaseException:
        os.close(fd)
        raise
    return fd


class SessionLog:
    """The append-only, fsynced, redacted JSONL log of one session. Thread-safe."""

    def __init__(
        self, session_id: str, directory: Path, fd: int, redactor: Redactor, clock: Clock, held: int
    ) -> None:
        # Use `create` or `open`; this only wires the parts together.
        self._id = session_id
        self._dir = directory
        self._fd: int | None = fd
        self._held: int | None = held  # the session's lock (session_lock.py)
        self._redactor = redactor
        self._images: set[str] = set()  # the digests of the images this log holds whole
        self._clock = clock
        self._lock = threading.Lock()
        self._failed: SessionLogError | None = None  # once a write failed, every later one fails so

    @classmethod
    def create(
        cls,
        root: Path | str,
        *,
        redactor: Redactor,
        meta: Mapping[str, Any] | Callable[[str], Mapping[str, Any]],
        clock: Clock = _utc_now,
    ) -> SessionLog:
        """Start a new session under `root` and write its `meta` record (or `meta(id)`'s, for a
        record that names the new session: its signature)."""
        base = transcripts_dir(root)
        ensure_private_dir(base)
        while True:
            session_id = new_session_id(clock())
            directory = base / session_id
            try:
                directory.mkdir(mode=DIR_MODE)
            except FileExistsError:
                continue  # same second, same random suffix: draw again
            break
        log: SessionLog | None = None
        try:
            os.chmod(directory, DIR_MODE)
            held = hold_session(directory, session_id)
            try:
                fd = _open_append(directory / SESSION_FILE)
            except BaseException:
                os.close(held)
                raise
            log = cls(session_id, directory, fd, redactor, clock, held)
            log.log_meta(meta(session_id) if callable(meta) else meta)
        except (OSError, SessionLogError) as exc:
            # Nothing was saved: leave no empty session behind to be listed or continued.
            if log is not None:
                log.close()
            _remove_empty(directory)
            full = disk_full_reason(exc if isinstance(exc, OSError) else exc.__cause__)
            if full is not None:
                raise no_session_on_a_full_disk(full, base) from exc
            raise
        return log

    @classmethod
    def create_task(
        cls,
        parent: Path,
        *,
        redactor: Redactor,
        meta: Mapping[str, Any],
        clock: Clock = _utc_now,
    ) -> SessionLog:
        """A sub-agent's log, archived with its parent session's: `<parent>/tasks/<id>/session.jsonl`
        (its own archive beside it). Not a session of the project: `--continue` and the session list
        never see it; the parent's recall searches it (session_search.session_files)."""
        base = parent / TASKS_DIR
        ensure_private_dir(base)
        while True:
            task_id = new_session_id(clock())
            directory = base / task_id
            try:
                directory.mkdir(mode=DIR_MODE)
            except FileExistsError:
                continue
            break
        os.chmod(directory, DIR_MODE)
        held = hold_session(directory, task_id)
        try:
            fd = _open_append(directory / SESSION_FILE)
        except BaseException:
            os.close(held)
            raise
        log = cls(task_id, directory, fd, redactor, clock, held)
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
        """Append to an existing session (for --resume / --continue); SessionBusyError while
        another agent has it open."""
        directory = session_dir(root, session_id)
        path = directory / SESSION_FILE
        if not path.is_file():
            raise ConfigError(f"no session {session_id!r} in {transcripts_dir(root)}")
        ensure_private_dir(transcripts_dir(root))
        ensure_private_dir(directory)
        held = hold_session(directory, session_id)
        try:
            fd = _open_append(path)
        except BaseException:
            os.close(held)
            raise
        log = cls(session_id, directory, fd, redactor, clock, held)
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
        data = message.to_json()
        self._images.update(image_digests(data))  # a checkpoint names these by digest (image_refs.py)
        self._record("message", message.id, {"message": data})

    def log_event(self, event: Event) -> None:
        # Deltas and spinner text are display-only: the complete text arrives as
        # a message, and an fsync per streamed token would slow the stream.
        if isinstance(event, AssistantTextDelta | StatusEvent):
            return
        self._record("event", new_id("r"), {"event": event.to_json()})

    def log_history(self, messages: Sequence[Message], reason: str) -> None:
        """A checkpoint: the whole working history, after a compaction or /clear."""
        written = by_reference([m.to_json() for m in messages], self._images)
        payload = {"reason": reason, "messages": written}
        self._record("history", new_id("r"), payload)

    def log_state(self, topic: str, data: Mapping[str, Any]) -> None:
        """A change of the session's own state (its pins, a rewind), read back as a StateRecord."""
        self._record("state", new_id("r"), {"topic": topic, "data": dict(data)})

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self._held is not None:  # after the log: the next writer finds it complete
                os.close(self._held)
                self._held = None

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
        self._write_bytes(clean_text(line).encode("utf-8"))  # a stray surrogate must not lose the record

    def _redacted_str(self, value: object) -> str:
        """JSON fallback for non-JSON values (paths, ...): their text, redacted too."""
        return self._redactor.redact(str(value))

    def _write_bytes(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None:
                raise ValueError(f"session log {self._id} is closed")
            if self._failed is not None:
                raise type(self._failed)(str(self._failed))
            end = os.lseek(self._fd, 0, os.SEEK_END)  # where the last whole record ends
            try:
                view = memoryview(data)
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                os.fsync(self._fd)
            except OSError as exc:
                _cut_back(self._fd, end)
                self._failed = self._failure(exc, saved=end > 0)
                raise self._failed from exc

    def _failure(self, exc: OSError, *, saved: bool) -> SessionLogError:
        """The one line that says what happened and what to do."""
        then = f"free space, then `agent --resume {self._id}`" if saved else "free space and run agent again"
        full = disk_full_reason(exc)
        if full is not None:
            kept = "; what it held before is saved" if saved else ""
            said = f"{full}: the session log {self.path} cannot take more{kept}"
            return DiskFullError(f"{said}; {then}")
        reason = exc.strerror or str(exc)
        resume = f"; `agent --resume {self._id}` goes on from the last record saved" if saved else ""
        return SessionLogError(f"cannot write the session log {self.path}: {reason}{resume}")


def _cut_back(fd: int, end: int) -> None:
    """Cut the file back to `end`: a record half written would read as a torn line, and one
    written but not made durable may be lost or torn by a crash."""
    try:
        os.ftruncate(fd, end)
        os.fsync(fd)
    except OSError:
        pass  # what can be done is done; the reader still skips a torn last line


def _remove_empty(directory: Path) -> None:
    """Remove a session directory that holds no record (its log failed before the first one)."""
    for name in (SESSION_FILE, LOCK_FILE):
        try:
            (directory / name).unlink()
        except FileNotFoundError:
            pass
        except OSError:
            return
    with contextlib.suppress(OSError):
        directory.rmdir()

"""Which sessions the user wrote: a per-user key, and a signature in each session's meta record.

A clone can ship a `.transcripts/` of its own, and its files belong to whoever cloned it, so
ownership says nothing about who wrote a session. Each user has a random key in the state dir
(`<state dir>/session-key`, 0600, made on first use), and every session this agent starts gets
`"signature": "2.<nonce>.<HMAC-SHA256(key, session id, project, nonce)>"` in its meta record: the
signature names the session and the project (its real path) it was made for, so one copied from
another of the user's sessions, or a log copied whole from another project, does not pass. A
session without a valid signature was planted, or predates signing; `--continue` passes over it
and `--resume` asks (accepted, it is signed anew).

The first signatures (`<nonce>.<HMAC(key, nonce)>`, before 2026-12) signed nothing of the session,
so any one of them made any log pass. They are not accepted: such a session counts as unsigned, and
is asked about once, like one that predates signing.

What the signature does not do: a log the user wrote, leaked (committed, say) and edited, keeps its
signature; it tells who started a session, not that its lines are unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from agent_cli.store.user_dirs import home_dir, state_dir

__all__ = ["KEY_FILE", "SIGNATURE_KEY", "SessionSigner"]

KEY_FILE = "session-key"
SIGNATURE_KEY = "signature"  # the meta record's key
_CONTEXT = b"agent-cli session signature v2\x00"
_VERSION = "2"


class SessionSigner:
    """Signs new sessions and checks old ones with the user's key (None: the key could not be had)."""

    def __init__(self, key: bytes | None, problem: str = "") -> None:
        self._key = key
        self.problem = problem  # why there is no key, for a warning

    @classmethod
    def for_user(cls, env: Mapping[str, str]) -> SessionSigner:
        """The signer with the user's key, made on first use; without one if the state dir
        cannot be written (then sessions are unsigned and `problem` says why)."""
        # Without XDG_STATE_HOME the key goes under the home folder, which must exist: a HOME
        # that names nothing is not created (as root, /nonexistent would be).
        xdg = env.get("XDG_STATE_HOME", "")
        home = None if xdg and Path(xdg).is_absolute() else home_dir(env)
        try:
            return cls(_user_key(state_dir(env), home))
        except OSError as exc:
            where = state_dir(env) / KEY_FILE
            return cls(None, f"cannot keep the session key in {where} ({exc.strerror or exc})")

    def new_signature(self, session_id: str, project: Path) -> str | None:
        """The signature of session `session_id` of `project`; None without a key."""
        if self._key is None:
            return None
        nonce = secrets.token_hex(16)
        return f"{_VERSION}.{nonce}.{self._mac(session_id, project, nonce)}"

    def signed(self, meta: Mapping[str, object], session_id: str, project: Path) -> bool:
        """Whether a session's (merged) meta carries this user's signature for `session_id` of `project`."""
        value = meta.get(SIGNATURE_KEY)
        if self._key is None or not isinstance(value, str) or value.count(".") != 2:
            return False  # none, or the first format, which bound nothing of the session
        version, nonce, mac = value.split(".")
        return version == _VERSION and hmac.compare_digest(mac, self._mac(session_id, project, nonce))

    def _mac(self, session_id: str, project: Path, nonce: str) -> str:
        assert self._key is not None
        # Each part ends with a NUL, which neither an id, a path nor a hex nonce holds.
        where = os.fsencode(os.path.realpath(project))
        message = b"\x00".join((_CONTEXT, session_id.encode(), where, nonce.encode()))
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()


def _user_key(folder: Path, home: Path | None) -> bytes:
    path = folder / KEY_FILE
    with contextlib.suppress(FileNotFoundError):
        return _read_key(path)
    if home is not None and not home.is_dir():
        raise FileNotFoundError(2, "the home folder does not exist", str(home))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Written whole under another name, then linked into place: a second agent starting at the
    # same moment either links first or reads the complete key the first one linked.
    temp = folder / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(temp)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    # Non-blocking, and only a regular file: a FIFO in its place would hang every start-up.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "the key file is not a regular file; remove it and a new one is made", str(path))
        data = os.read(fd, 256).strip()
    finally:
        os.close(fd)
    if len(data) < 32:
        raise OSError(0, "the key file is too short; remove it and a new one is made", str(path))
    return data

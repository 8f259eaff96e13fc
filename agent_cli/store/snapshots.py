"""The snapshot store: file contents kept so `/rewind` can put a file back, by content.

    <project>/.transcripts/<session id>/snapshots/           0700
    <project>/.transcripts/<session id>/snapshots/<sha256>   0600, one file's bytes, exactly

A *snapshot* is a file's bytes named by their SHA-256 (its *digest*): the same content is stored
once however often it is snapshotted, so taking the project's tree before every command costs
only the files that changed since. A blob is written to a temporary name and renamed into place,
so a reader never sees half of one; an existing blob is never rewritten or removed (nothing is
deleted from the archive).

The bytes are stored as they are, not redacted like the log and the archive: a snapshot exists to
give a file back byte for byte, and it is the project's own file, kept as privately as the rest of
the session (see layout.py). So a content in which the session's redactor finds a secret (a
configured key, a credential's shape) is not stored at all (`HoldsSecret`): API keys never reach
the session store, and the file is named to the user as one that cannot be restored.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from agent_cli.store.layout import ensure_private_dir
from agent_cli.store.private_write import write_private
from agent_cli.store.redact import Redactor

__all__ = ["SNAPSHOTS_DIR", "HoldsSecret", "SnapshotStore", "digest_of"]

SNAPSHOTS_DIR = "snapshots"
_DIGEST_RE = re.compile(r"[0-9a-f]{64}")


def digest_of(data: bytes) -> str:
    """The name a content is stored under: its SHA-256, in hex."""
    return hashlib.sha256(data).hexdigest()


class HoldsSecret(ValueError):
    """The content holds a key or credential, so it is not stored."""


class SnapshotStore:
    """Content-addressed blobs in a session's folder; the folder is made on the first `put`.
    With a `redactor`, a content holding a secret is refused (see the module's docstring)."""

    def __init__(self, session_dir: Path, *, redactor: Redactor | None = None) -> None:
        self.dir = Path(session_dir) / SNAPSHOTS_DIR
        self._redactor = redactor

    def put(self, data: bytes) -> str:
        """Keep `data` (if not kept already) and return its digest; HoldsSecret if it holds one."""
        digest = digest_of(data)
        path = self.dir / digest
        if path.is_file():
            return digest  # (checked when it was stored)
        if self._redactor is not None and self._redactor.spans(data.decode("utf-8", "replace")):
            raise HoldsSecret("it holds a key or credential, which the session store never keeps")
        ensure_private_dir(self.dir)
        write_private(path, data)  # a full disk leaves no stub taken later for the file's content
        return digest

    def has(self, digest: str) -> bool:
        return bool(_DIGEST_RE.fullmatch(digest)) and (self.dir / digest).is_file()

    def get(self, digest: str) -> bytes:
        """The bytes stored under `digest`. FileNotFoundError if there are none, and ValueError
        for a name that is not a digest (a log edited by hand must not read files elsewhere)."""
        if not _DIGEST_RE.fullmatch(digest):
            raise ValueError(f"not a snapshot digest: {digest!r}")
        fd = os.open(self.dir / digest, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        if digest_of(data) != digest:  # damaged on disk: better to say so than to restore it
            raise ValueError(f"the snapshot {digest[:12]} is damaged")
        return data

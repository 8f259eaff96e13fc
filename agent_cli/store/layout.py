"""Where a project's sessions live on disk, and how their files are protected.

    <project>/.transcripts/                 0700
    <project>/.transcripts/<session id>/    0700, one per session
        session.jsonl                       0600, the session log (session_log.py)
        session.lock                        0600, held by the one agent writing the log; its pid
        span-NNN-<label>.jsonl, output-...  0600, the archive (archive.py)

A session id is one plain path component: `20261130-142501-3fa2c1`.
"""

from __future__ import annotations

import os
import re
import secrets
from datetime import UTC, datetime
from pathlib import Path

from agent_cli.core.errors import ConfigError

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "ID_RE",
    "LOCK_FILE",
    "SESSION_FILE",
    "TRANSCRIPTS_DIR",
    "ensure_private_dir",
    "new_session_id",
    "session_dir",
    "transcripts_dir",
]

TRANSCRIPTS_DIR = ".transcripts"
SESSION_FILE = "session.jsonl"
LOCK_FILE = "session.lock"
DIR_MODE = 0o700
FILE_MODE = 0o600
# A session id is one plain path component (no separators, no leading dot).
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def transcripts_dir(root: Path | str) -> Path:
    """`<root>/.transcripts`."""
    return Path(root) / TRANSCRIPTS_DIR


def session_dir(root: Path | str, session_id: str) -> Path:
    """`<root>/.transcripts/<session_id>`; ConfigError for an id that is not a plain name."""
    if not ID_RE.fullmatch(session_id):
        raise ConfigError(f"invalid session id {session_id!r} (ids look like 20261130-142501-3fa2c1)")
    return transcripts_dir(root) / session_id


def new_session_id(now: datetime) -> str:
    """A sortable, unique-enough id: UTC time to the second plus 6 random hex digits."""
    return f"{now.astimezone(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and parents) if needed and make it 0700, whatever the umask."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if (path.stat().st_mode & 0o777) != DIR_MODE:
        os.chmod(path, DIR_MODE)

"""Unexpected errors: one line for the user, the traceback in a private log for a bug report.

A bug must never dump a traceback at the user nor end a session silently.
`internal_error(exc)` appends the traceback (redacted) to
`<state dir>/crash.log` (0600) and returns the line to show; `record_crash(exc)`
only appends it, for a failure that is answered elsewhere (a tool's crash becomes
an error result the model reads, and its traceback still reaches the log). A full disk is
not a bug, wherever it surfaces: it is said as such (the session log says it
itself, see session_log.py; this is the net under every other write).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from agent_cli.core.errors import disk_full_reason
from agent_cli.store.redact import Redactor
from agent_cli.store.user_dirs import state_dir

__all__ = ["internal_error", "record_crash"]


def internal_error(exc: BaseException, env: Mapping[str, str] | None = None) -> str:
    """Log `exc` with its traceback; return one line for the user."""
    full = disk_full_reason(exc)
    if full is not None:
        where = f": cannot write {getattr(exc, 'filename', None)}" if getattr(exc, "filename", None) else ""
        return f"{full}{where}; free space and try again"
    path = record_crash(exc, env)
    where = "the traceback could not be saved" if path is None else f"details in {path}"
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"internal error: {type(exc).__name__}{': ' + message if message else ''} ({where})"


def record_crash(exc: BaseException, env: Mapping[str, str] | None = None) -> Path | None:
    """Append `exc` with its traceback (redacted) to the crash log; the log's path, None if it
    could not be written."""
    try:
        directory = state_dir(os.environ if env is None else env)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = directory / "crash.log"
        text = "".join(traceback.format_exception(exc))
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(f"--- {stamp}\n{Redactor().redact(text)}\n")
        os.chmod(path, 0o600)
    except OSError:
        return None
    return path

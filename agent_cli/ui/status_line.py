"""The user's status line: `[ui] statusline = "command"`, run with Claude Code's status JSON on
stdin; its first line is shown under the REPL's toolbar.

    StatusLine(command, payload, cwd, invalidate)   .line(): what the toolbar shows now
    status_payload(session, tokens, started)        Claude Code's status JSON for this session

The command is the user's own (a project file may not set it: `config/load.py`), so it runs as the
user, in the project root, through the hook runner (`hooks_user/process.py`: its own process group,
bash -c, stdout and stderr capped). Its rules:

- *At most once a second*: a run starts only when none is running and `INTERVAL` has passed since
  the last one ended (measured on the injected clock), when the toolbar is drawn. It runs in the
  background; when it ends the toolbar is redrawn, and that redraw starts nothing (too soon).
- *Bounded*: `TIMEOUT` seconds, then its process group is killed; a slow run keeps the line shown
  before it (or shows a marker when there was none).
- *Made safe*: the first line of stdout only; colours (ANSI SGR sequences, `ESC [ ... m`) are
  stripped, not passed through, so no escape of the command's reaches the terminal; every other
  control character, the rest of an escape sequence included, is written out (`\\x1b`), and the
  line is cut at `MAX_CHARS`.
- *Failures* (it cannot start, exits non-zero, prints nothing) show a short marker in brackets,
  never a traceback.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli import __version__
from agent_cli.core.text import visible
from agent_cli.hooks_user.process import HookRun, run_hook
from agent_cli.store.crash_log import record_crash
from agent_cli.ui.reports import cost_rows

if TYPE_CHECKING:
    from agent_cli.session import AgentSession

__all__ = ["INTERVAL", "MAX_CHARS", "TIMEOUT", "StatusLine", "safe_line", "status_payload"]

INTERVAL = 1.0  # seconds between the end of one run and the start of the next, at least
TIMEOUT = 1.0  # seconds a run may take
MAX_CHARS = 400  # of the line kept (the toolbar cuts it to the terminal's width)
_SGR = re.compile(r"\x1b\[[0-9;:]*m")

Runner = Callable[[str, bytes, Path, float], HookRun]
Starter = Callable[[Callable[[], None]], None]


def safe_line(stdout: str) -> str:
    """The first line of `stdout`, colours stripped, every other control character written out."""
    first = stdout.split("\n", 1)[0].removesuffix("\r")
    shown = visible(_SGR.sub("", first)).replace("\t", " ").rstrip()
    return shown if len(shown) <= MAX_CHARS else shown[: MAX_CHARS - 1] + "…"


def _outcome(run: HookRun, last: str) -> str:
    """What a finished run shows: its line, or the last one (slow), or a short marker."""
    if run.failed:
        return f"[statusline: {safe_line(run.failed)}]"
    if run.timed_out:
        return last or f"[statusline: no line within {TIMEOUT:g} s]"
    if run.exit_code != 0:
        return f"[statusline: exit {run.exit_code}]"
    return safe_line(run.stdout) or "[statusline: no output]"


def _thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="statusline", daemon=True).start()


class StatusLine:
    """The status command's last line, refreshed at most once a second in the background."""

    def __init__(
        self,
        command: str,
        payload: Callable[[], dict[str, Any]],
        cwd: Path,
        invalidate: Callable[[], None] = lambda: None,
        *,
        clock: Callable[[], float] = time.monotonic,
        run: Runner = run_hook,
        start: Starter = _thread,
    ) -> None:
        self.command = command
        self._payload = payload
        self._cwd = cwd
        self._invalidate = invalidate
        self._clock = clock
        self._run = run
        self._start = start
        self._lock = threading.Lock()
        self._line = ""
        self._running = False
        self._ended: float | None = None  # when the last run ended (None: never run)
        self.runs = 0  # how many have started

    def line(self) -> str:
        """The line to show now; starts a refresh when one is due."""
        with self._lock:
            due = not self._running and (self._ended is None or self._clock() - self._ended >= INTERVAL)
            if due:
                self._running = True
                self.runs += 1
            shown = self._line
        if due:
            self._start(self._refresh)
        return shown

    def _refresh(self) -> None:
        try:
            data = json.dumps(self._payload()).encode()
            run = self._run(self.command, data, self._cwd, TIMEOUT)
            with self._lock:
                self._line = _outcome(run, self._line)
        except Exception as exc:  # a bug of ours (the runner never raises for the command): kept in
            record_crash(exc)  # the crash log, a marker shown; a thread's traceback would hit the screen
            with self._lock:
                self._line = f"[statusline: internal error ({type(exc).__name__}), see the crash log]"
        finally:
            with self._lock:
                self._running = False
                self._ended = self._clock()
        self._invalidate()


def status_payload(session: AgentSession, tokens: int | None, started: float, now: float) -> dict[str, Any]:
    """Claude Code's status-line JSON for `session` (`tokens`: the context in use, None: not yet
    counted; `started`, `now`: the session's start and the time now, in seconds)."""
    root = str(session.project_root)
    rows = cost_rows(session.usage_log)
    dollars = rows[-1].dollars if rows else 0.0
    usages = [u for _, u in session.usage_log]
    last = usages[-1] if usages else None
    window = session.window
    used = None if tokens is None or window <= 0 else round(100 * tokens / window, 1)
    return {
        "hook_event_name": "Status",
        "session_id": session.id,
        "transcript_path": str(session.transcript_path),
        "cwd": root,
        "model": {"id": session.model, "display_name": session.model},
        "workspace": {"current_dir": root, "project_dir": root},
        "version": __version__,
        "output_style": {"name": "default"},
        "cost": {
            "total_cost_usd": None if dollars is None else round(dollars, 6),
            "total_duration_ms": round((now - started) * 1000),
            "total_api_duration_ms": None,  # not measured here
            "total_lines_added": None,
            "total_lines_removed": None,
        },
        "context_window": {
            "total_input_tokens": sum(u.prompt_tokens for u in usages),
            "total_output_tokens": sum(u.output_tokens for u in usages),
            "context_window_size": window,
            "used_percentage": used,
            "remaining_percentage": None if used is None else round(100 - used, 1),
            "current_usage": None
            if last is None
            else {
                "input_tokens": last.input_tokens,
                "output_tokens": last.output_tokens,
                "cache_creation_input_tokens": last.cache_write_tokens,
                "cache_read_input_tokens": last.cache_read_tokens,
            },
        },
    }

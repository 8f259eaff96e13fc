"""How the agent ends on SIGTERM and SIGHUP (a `kill`, a closed terminal) and at exit.

Like Ctrl-C: the commands the tools started are killed at once (`tools.children`),
then a KeyboardInterrupt stops the running turn cleanly, so the history and the
session log are closed as after Ctrl-C; the REPL and headless mode then exit
with 128 + the signal's number. A second signal while that happens is noted,
not raised. At interpreter exit, whatever is still registered is killed, and then everything
the session's commands left behind (daemons: `children.end`).
"""

from __future__ import annotations

import atexit
import signal
from types import FrameType

from agent_cli.tools import children

__all__ = ["install", "received", "stopped_by"]

_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)
_received: list[int] = []


def install() -> None:
    """Handle SIGTERM and SIGHUP, and kill the tools' commands at exit (main thread only)."""
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    atexit.register(children.end)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    first = not _received
    _received.append(signum)
    children.kill_all(grace=0.5)
    if first:
        raise KeyboardInterrupt


def received() -> int | None:
    """The first SIGTERM or SIGHUP received, if any."""
    return _received[0] if _received else None


def stopped_by() -> str:
    sig = received()
    return signal.Signals(sig).name if sig is not None else ""

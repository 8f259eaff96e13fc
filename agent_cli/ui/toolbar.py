"""The REPL's bottom toolbar: the approval mode, the model, the context in use and where
auto-compaction fires, the todo item in progress and the goal's mark; under it the user's status
line (`[ui] statusline`, status_line.py) when one is set.

The context is counted after each turn (and once off the main thread at start-up), never while
the toolbar draws: `text` only reads the last count.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agent_cli.session import AgentSession
from agent_cli.store.crash_log import internal_error
from agent_cli.ui.goal_commands import goal_mark
from agent_cli.ui.reports import format_context_line, mode_label
from agent_cli.ui.status_line import StatusLine, status_payload
from agent_cli.ui.todo_view import toolbar_item

__all__ = ["Toolbar", "status_line_for"]


class Toolbar:
    """The bottom toolbar: the model, the context in use (counted after each turn) and the compaction
    line; under it the user's status line (`[ui] statusline`, status_line.py) when one is set."""

    def __init__(self, session: AgentSession, status_line: StatusLine | None = None) -> None:
        self.session = session
        self.status_line = status_line
        self.tokens: int | None = None  # None until counted
        self.failure: str | None = None  # a failed count's line, said once at the next prompt

    def count(self) -> None:
        """Count the context (after each turn, and off the main thread at start-up). Counting is
        pure (a vocabulary that cannot load falls back inside the counter), so an error here is a
        bug: it goes to the crash log and is said once (`take_failure`), never hidden; the toolbar
        shows the count as unknown and the REPL goes on."""
        try:
            self.tokens = self.session.context_tokens()
        except Exception as exc:
            self.tokens = None
            self.failure = internal_error(exc)

    def take_failure(self) -> str | None:
        failure, self.failure = self.failure, None
        return failure

    def text(self, width: int | None = None) -> str:
        """The toolbar's text, fitted to `width` columns when given."""
        s = self.session
        th = s.thresholds
        ratio = s.settings.context.trigger_ratio
        mode = mode_label(s.mode.mode, sandboxed=s.mode.sandboxed)  # first: what runs without asking
        rest = None if width is None else max(width - len(mode), 0)
        text = mode + format_context_line(s.model, self.tokens, th.window, th.trigger_at, ratio, rest)
        text += toolbar_item(s.todos, None if width is None else width - len(text))
        text += goal_mark(s.goal, None if width is None else width - len(text))
        if self.status_line is None:
            return text
        extra = self.status_line.line()
        if width is not None and len(extra) > width:
            extra = extra[: max(width - 1, 0)] + "…"
        return f"{text}\n{extra}"


def status_line_for(
    session: AgentSession, toolbar: Callable[[], Toolbar], invalidate: Callable[[], None]
) -> StatusLine | None:
    """The user's status line (`[ui] statusline`), None when none is set."""
    command = session.settings.ui.statusline
    if not command.strip():
        return None
    started = time.monotonic()

    def payload() -> dict[str, object]:
        return status_payload(session, toolbar().tokens, started, time.monotonic())

    return StatusLine(command, payload, session.project_root, invalidate)

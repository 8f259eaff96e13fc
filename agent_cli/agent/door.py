"""The loop's one door for events, and the side queue read there and nowhere else.

    door = Door(side)
    door.relay(events, log)   # the stream: before each event (and at its end) what the side queue
                              # holds, every event logged as the session log keeps it
    door.reports()            # the background tasks' reports taken since the last call

Every event a turn, `/compact`, the session's start or end yields leaves through the door
(`AgentLoop._door`), so a note from another thread (side_events.py: a hook's output, a failed MCP
call, an `@path` that names nothing) is shown just before the loop's next event, in the order it was
put. A hook's event is logged as the loop's own are (event_log.py); a notice is a warning line, not
logged; a task's report is kept for the next request's newest user message, which the loop builds.
Ctrl-C still reaches the generator behind the door (turn_stream.py).
"""

from __future__ import annotations

from collections.abc import Generator

from agent_cli.agent.event_log import SessionSink, log_event
from agent_cli.agent.side_events import HookEvent, Notice, SideEvents, TaskReport
from agent_cli.agent.turn_stream import relayed
from agent_cli.core.events import Event, WarningEvent

__all__ = ["Door"]


class Door:
    def __init__(self, side: SideEvents) -> None:
        self.side = side
        self._reports: list[str] = []  # background tasks' reports taken, for the next request

    def relay(self, events: Generator[Event, None, None], log: SessionSink) -> Generator[Event, None, None]:
        """`events` through the door: each after the side queue's notes, each logged to `log`."""
        return relayed(
            events, lambda event: [*self._drained(log), _logged(log, event)], lambda: self._drained(log)
        )

    def reports(self) -> list[str]:
        """The background tasks' reports taken since the last call (each given out once)."""
        taken, self._reports = self._reports, []
        return taken

    def _drained(self, log: SessionSink) -> list[Event]:
        """The side queue's notes: the user's lines, a hook's logged; a task's report kept."""
        notes = self.side.take()
        self._reports += [n.text for n in notes if isinstance(n, TaskReport)]
        return [
            _logged(log, n.event) if isinstance(n, HookEvent) else WarningEvent(message=n.text)
            for n in notes
            if isinstance(n, HookEvent | Notice)
        ]


def _logged(log: SessionSink, event: Event) -> Event:
    """The event logged to the session (as event_log keeps it) and handed back, to be yielded."""
    log_event(log, event)
    return event

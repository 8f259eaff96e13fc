"""The turn's side channels as one queue: what reaches the loop besides its own steps.

Producers put typed notes, from any thread: the user's hooks (what a hook printed, a warning about
one; hooks_user/, a summary's PreCompact gate on the engine's thread among them), the MCP servers
(a failed call, said once), the session (an `@path` that names nothing), the background tasks (a
task's report, agent/subagent.py). The loop takes them all at one point, its one door for events
(door.py, `AgentLoop._door`: before each event it yields, and when its stream ends), in the order they were
put:

    HookEvent(event)   shown before the loop's next event, and logged as the loop's own events are
    Notice(text)       a warning line shown before the loop's next event (not logged)
    TaskReport(text)   a background task's report: the next request's newest user message carries it
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from agent_cli.core.events import Event

__all__ = ["HookEvent", "Notice", "SideEvents", "SideNote", "TaskReport"]


@dataclass(frozen=True, slots=True)
class HookEvent:
    event: Event


@dataclass(frozen=True, slots=True)
class Notice:
    text: str


@dataclass(frozen=True, slots=True)
class TaskReport:
    text: str


SideNote = HookEvent | Notice | TaskReport


class SideEvents:
    """A thread-safe queue of side notes: any thread puts, the loop takes everything at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: list[SideNote] = []

    def put(self, note: SideNote) -> None:
        with self._lock:
            self._notes.append(note)

    def take(self) -> list[SideNote]:
        """Every note put since the last take, in the order put."""
        with self._lock:
            notes, self._notes = self._notes, []
        return notes

"""A turn's events with what the session adds to them, Ctrl-C still reaching the loop.

    woven(first, events, take_notes)

`first` (the attachments' notes), then the loop's events, each note `take_notes` has (a failed MCP
call's warning) after the event it came with, and before the result. The REPL throws
KeyboardInterrupt into the turn between two events (ui/turn.py); a plain wrapper would take it
itself, so it is thrown on into the loop's own generator, which ends the turn cleanly.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence

from agent_cli.core.events import Event, ResultEvent, WarningEvent

__all__ = ["woven"]


def woven(
    first: Sequence[Event],
    events: Generator[Event, None, None],
    take_notes: Callable[[], list[str]] | None = None,
) -> Generator[Event, None, None]:
    yield from first
    thrown: BaseException | None = None
    while True:
        try:
            event = events.throw(thrown) if thrown is not None else next(events)
        except StopIteration:
            return
        thrown = None
        notes = [WarningEvent(message=n) for n in take_notes()] if take_notes else []
        try:
            if isinstance(event, ResultEvent):
                yield from notes
                yield event
            else:
                yield event
                yield from notes
        except KeyboardInterrupt as exc:
            thrown = exc

"""A stream of events passed on through a door, Ctrl-C still reaching the generator behind it.

    relayed(events, through, last) -> yields through(e) for each event e, then last(); returns
                                     what `events` returned

The REPL throws KeyboardInterrupt into a turn between two events (ui/turn.py); a plain wrapper would
take it itself, so it is thrown on into the inner generator, which ends the turn cleanly: at once when it
arrived at the event itself, after it when it arrived at something the door put before it (so
no event of the turn goes unseen). Closing the stream closes the generator behind it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TypeVar

from agent_cli.core.events import Event

__all__ = ["relayed"]

_R = TypeVar("_R")


def relayed(
    events: Generator[Event, None, _R],
    through: Callable[[Event], Sequence[Event]],
    last: Callable[[], Sequence[Event]] = lambda: (),
) -> Generator[Event, None, _R]:
    thrown: BaseException | None = None
    while True:
        try:
            event = events.throw(thrown) if thrown is not None else next(events)
        except StopIteration as stop:
            result: _R = stop.value
            yield from last()
            return result
        thrown = None
        for each in through(event):
            try:
                yield each
            except GeneratorExit:
                events.close()
                raise
            except KeyboardInterrupt as exc:  # (at a note before the event: the event still goes out)
                thrown = exc

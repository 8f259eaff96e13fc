"""The REPL's turn driver: feed one turn's events to the renderer, and make Ctrl-C cancel the turn.

    drive_turn(events, renderer, cancel, watch)

The loop turns a KeyboardInterrupt raised inside it into a clean
"interrupted" result; a KeyboardInterrupt that lands in the renderer half way
through a redraw would instead leave the live display broken. So while an
event renders, SIGINT only records the wish (and stops a running tool through
`cancel`), and the interrupt is thrown into the loop's generator between two
events (`InterruptGate`). Errors end the turn as one line, never the session.

While a turn runs the terminal does not echo what is typed (`quiet_input`):
an echoed `^C` or a typed-ahead word would land inside the live display and
break its redraw. The keys stay queued for the next prompt. `watch` (the REPL's `key_watch.TurnKeys`)
is entered inside the Ctrl-C gate, so a key that cancels the turn never lands after the gate is gone.

No terminal library is imported here: the renderer is anything with the
`TurnView` methods, so tests drive turns into a StringIO console.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

from agent_cli.core.errors import AgentError
from agent_cli.core.events import Event, ResultEvent
from agent_cli.store.crash_log import internal_error

__all__ = ["InterruptGate", "TurnView", "discard_typeahead", "drive_turn", "quiet_input"]


class TurnView(Protocol):
    """What the driver needs from the renderer (`render.Renderer` is one)."""

    def handle(self, event: Event) -> None: ...

    def error(self, text: str) -> None: ...

    def end_turn(self) -> None: ...


def drive_turn(
    events: Iterator[Event],
    view: TurnView,
    cancel: Callable[[], None],
    watch: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
) -> None:
    """Render one turn's events until its result. Ctrl-C cancels the turn; errors end it as one line."""
    with InterruptGate(cancel) as gate, watch():
        while True:
            try:
                if isinstance(events, Generator) and gate.take_pending():
                    event = events.throw(KeyboardInterrupt())
                else:
                    event = next(events)
            except StopIteration:
                break
            except KeyboardInterrupt:
                # The generator let it through: the turn is over all the same.
                cancel()
                view.error("interrupted")
                break
            except AgentError as exc:
                view.error(str(exc))
                break
            except Exception as exc:  # a bug must not end the user's session
                view.error(internal_error(exc))
                break
            try:
                with gate.deferred():
                    view.handle(event)
            except KeyboardInterrupt:
                gate.defer()  # raised by the renderer itself (or no gate installed)
            if isinstance(event, ResultEvent):
                break
        with gate.deferred():
            view.end_turn()


class InterruptGate:
    """Ctrl-C during a turn: raised at once inside the loop, deferred while rendering.

    Outside the main thread (tests) no handler is installed and
    KeyboardInterrupt behaves as usual.
    """

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.cancel = cancel
        self.pending = False
        self._rendering = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> InterruptGate:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)

    def defer(self) -> None:
        """An interrupt to throw into the loop before its next event."""
        self.pending = True

    def take_pending(self) -> bool:
        """Whether an interrupt waits to be thrown into the loop (and it no longer does)."""
        pending, self.pending = self.pending, False
        return pending

    def _on_sigint(self, signum: int, frame: object) -> None:
        if self._rendering:
            self.pending = True
            self.cancel()
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self._rendering = True
        try:
            yield
        finally:
            self._rendering = False


@contextlib.contextmanager
def quiet_input(fd: int) -> Iterator[None]:
    """Turn off the echo of typed keys on terminal `fd` for a while (nothing happens if it is no terminal).

    Ctrl-C still raises SIGINT; only its `^C` echo goes.
    """
    saved: list[Any] | None = None
    try:
        import termios

        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] &= ~(termios.ECHO | getattr(termios, "ECHOCTL", 0))
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except Exception:  # not a terminal (termios.error), a closed fd, or no termios at all
        saved = None
    try:
        yield
    finally:
        if saved is not None:
            with contextlib.suppress(Exception):
                termios.tcsetattr(fd, termios.TCSANOW, saved)


def discard_typeahead(fd: int) -> None:
    """Drop keys typed before a question was shown, so a word typed early cannot answer it."""
    with contextlib.suppress(Exception):
        import termios

        termios.tcflush(fd, termios.TCIFLUSH)

"""Keys typed while the REPL is not reading them: kept for its prompt, never echoed raw, Ctrl-D included.

    hold(fd)      at launch: the terminal stops echoing and treating lines (no ECHO, ICANON, ICRNL)
    release()     when the REPL ends (and at exit): the terminal as it was
    released()    a while in the usual mode (an editor the REPL runs)

Whenever prompt_toolkit is not reading the terminal (while the REPL starts, between a turn and the
next prompt), a terminal in its usual mode echoes what is typed (raw, above the welcome line),
takes a Ctrl-D at the start of a line as an end of file that nobody reads (it is lost) and turns
Enter into a line feed (which the prompt takes as a new line, not as sending). Held, each key
waits in the terminal's queue as the byte typed, unechoed, and the next prompt reads it: the text
typed early is in its line, an early Ctrl-D ends the REPL. prompt_toolkit sets its own mode while
it reads and puts this one back. Ctrl-C still interrupts (ISIG stays). Nothing happens when `fd` is
not a terminal.
"""

from __future__ import annotations

import atexit
import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["hold", "release", "released"]

_saved: tuple[int, list[Any]] | None = None


def hold(fd: int) -> None:
    global _saved
    if _saved is not None:
        return
    try:
        import termios

        before = termios.tcgetattr(fd)
        held = list(before)
        held[0] &= ~termios.ICRNL
        held[3] &= ~(termios.ECHO | termios.ICANON | getattr(termios, "ECHOCTL", 0))
        chars = list(held[6])
        chars[termios.VMIN], chars[termios.VTIME] = 1, 0
        held[6] = chars
        termios.tcsetattr(fd, termios.TCSANOW, held)
    except Exception:  # not a terminal (termios.error), a closed fd, or no termios at all
        return
    _saved = (fd, before)
    atexit.register(release)  # an error before the prompt must not leave the terminal without echo


def release() -> None:
    global _saved
    if _saved is None:
        return
    fd, before = _saved
    _saved = None
    with contextlib.suppress(Exception):
        import termios

        termios.tcsetattr(fd, termios.TCSANOW, before)


@contextlib.contextmanager
def released() -> Iterator[None]:
    """The terminal in its usual mode for a while (a program the REPL runs on it), held again after."""
    saved = _saved
    release()
    try:
        yield
    finally:
        if saved is not None:
            hold(saved[0])

"""Keys pressed while a turn runs: Esc cancels the turn as Ctrl-C does; text typed waits for the next prompt.

    keys = TurnKeys(fd, on_escape)
    with keys.watching():          # around one turn (drive_turn enters it inside its Ctrl-C gate)
        ...                        # a lone Esc calls on_escape (the REPL: SIGINT to itself)
        with keys.paused(): ask()  # a question gets the terminal back as it was, no key read away
    keys.take_typed()              # what was typed meanwhile, for the next input line

While watching, the terminal is in non-canonical mode without echo; ISIG stays on, so Ctrl-C still
raises SIGINT and Ctrl-Z still suspends. A thread reads the keys. An Esc is "lone" when no byte follows
it within ESC_WAIT: an arrow key or an Alt chord starts with Esc too, and is dropped whole. Printable
text is kept (Backspace and Ctrl-U edit it); Enter keeps a line break; other control keys are dropped.
Nothing happens when the fd is no terminal (tests that inject `read_line`, or piped input).
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["ESC_WAIT", "TurnKeys", "typed_text"]

ESC_WAIT = 0.05  # seconds after an Esc within which a following byte makes it a key sequence
ESC = 0x1B


class TurnKeys:
    def __init__(self, fd: int, on_escape: Callable[[], None]) -> None:
        self.fd = fd
        self.on_escape = on_escape
        self._saved: list[Any] | None = None  # the terminal as the turn found it, while watching
        self._thread: threading.Thread | None = None
        self._wake: tuple[int, int] | None = None
        self._typed = bytearray()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Read keys until the block ends; then the terminal is as it was and the reader is gone."""
        try:
            import termios

            self._saved = termios.tcgetattr(self.fd)
        except Exception:  # not a terminal, or no termios: nothing to watch
            yield
            return
        try:
            self._start()
            yield
        finally:
            self._stop()
            self._restore()
            self._saved = None

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No key read while the block runs (a question reads them), the terminal as the turn found it."""
        if self._thread is None:
            yield
            return
        self._stop()
        self._restore()
        try:
            yield
        finally:
            if self._saved is not None:
                self._start()

    def take_typed(self) -> str:
        """The text typed while watching (and not taken yet)."""
        with self._lock:
            raw, self._typed = bytes(self._typed), bytearray()
        return typed_text(raw)

    # ---- the reader -------------------------------------------------------

    def _start(self) -> None:
        import termios

        assert self._saved is not None
        mode = list(self._saved)
        mode[3] &= ~(termios.ICANON | termios.ECHO | getattr(termios, "ECHOCTL", 0))
        mode[6] = list(mode[6])
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        with contextlib.suppress(Exception):
            termios.tcsetattr(self.fd, termios.TCSANOW, mode)
        self._wake = os.pipe()
        self._thread = threading.Thread(
            target=self._read, args=(self._wake[0],), name="turn-keys", daemon=True
        )
        self._thread.start()

    def _stop(self) -> None:
        if self._thread is None or self._wake is None:
            return
        os.write(self._wake[1], b"x")
        self._thread.join()
        for end in self._wake:
            os.close(end)
        self._thread = self._wake = None

    def _restore(self) -> None:
        if self._saved is None:
            return
        with contextlib.suppress(Exception):
            import termios

            termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)

    def _read(self, wake: int) -> None:
        pending = bytearray()  # bytes read and not yet sorted into keys
        while True:
            ready = self._wait(wake, None if not pending else ESC_WAIT)
            if ready is None:  # told to stop: a half-read key sequence is dropped
                return
            if ready:
                try:
                    chunk = os.read(self.fd, 1024)
                except OSError:
                    return
                if not chunk:
                    return
                pending += chunk
            self._sort(pending, quiet_after=not ready)

    def _wait(self, wake: int, timeout: float | None) -> bool | None:
        """True when a key waits, False on timeout, None when told to stop."""
        try:
            readable, _, _ = select.select([self.fd, wake], [], [], timeout)
        except (OSError, ValueError):
            return None
        if wake in readable:
            return None
        return bool(readable)

    def _sort(self, pending: bytearray, *, quiet_after: bool) -> None:
        """Take whole keys off the front of `pending`: text is kept, Esc alone cancels, sequences go.
        An Esc at the very end stays pending until ESC_WAIT passes with nothing after it."""
        while pending:
            if pending[0] != ESC:
                end = pending.find(ESC)
                end = len(pending) if end < 0 else end
                with self._lock:
                    self._typed += pending[:end]
                del pending[:end]
                continue
            if len(pending) == 1:
                if quiet_after:
                    del pending[:1]
                    self.on_escape()
                return
            del pending[: _sequence_length(pending)]


def _sequence_length(data: bytearray) -> int:
    """How many bytes the key sequence at the front of `data` (starting with Esc) takes."""
    second = data[1]
    if second == ESC:  # Esc pressed twice in a row: the first is an Esc of its own
        return 1
    if second in (ord("["), ord("O")):  # CSI (arrows, Shift+Tab, F-keys) and SS3
        for i in range(2, len(data)):
            if 0x40 <= data[i] <= 0x7E and not (second == ord("[") and data[i] == ord("[") and i == 2):
                return i + 1
        return len(data)
    return 2  # Alt + a key


def typed_text(raw: bytes) -> str:
    """Keys typed ahead, as the text of an input line: Backspace and Ctrl-U edit it, Enter is a line
    break (a trailing one dropped), any other control key is dropped."""
    out: list[str] = []
    for ch in raw.decode("utf-8", errors="ignore"):
        if ch in ("\x7f", "\b"):
            if out:
                out.pop()
        elif ch == "\x15":  # Ctrl-U: the line so far goes
            while out and out[-1] != "\n":
                out.pop()
        elif ch in ("\r", "\n"):
            out.append("\n")
        elif ch == "\t" or ch.isprintable():
            out.append(ch)
    return "".join(out).strip("\n")

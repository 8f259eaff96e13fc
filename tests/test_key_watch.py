"""Keys read while a turn runs (ui/key_watch.py), on a real pseudo-terminal: a lone Esc cancels, a
key sequence that starts with Esc (an arrow, Shift+Tab, a cursor report) does not, typed text is
kept for the next prompt, and a question gets the terminal back as it was."""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import threading
import time
from collections.abc import Iterator

import pytest

from agent_cli.ui.key_watch import TurnKeys, typed_text


@pytest.fixture
def pty_fds() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


class Escapes:
    def __init__(self) -> None:
        self.count = 0
        self.seen = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.seen.set()


def settle(fd: int | None = None) -> None:
    """Until the watcher has read what was typed on `fd` (however busy the machine), then 0.3 s more:
    longer than ESC_WAIT, for a wrong Esc to show. Without `fd` (nobody reads), the 0.3 s alone."""
    if fd is not None:
        deadline = time.monotonic() + 60
        while termios_pending(fd) and time.monotonic() < deadline:
            time.sleep(0.01)
    time.sleep(0.3)


def termios_pending(fd: int) -> int:
    """Bytes typed on the terminal and not read yet."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


def test_a_lone_esc_cancels_and_sequences_do_not(pty_fds: tuple[int, int]) -> None:
    master, slave = pty_fds
    escapes = Escapes()
    keys = TurnKeys(slave, escapes)
    with keys.watching():
        for sequence in (b"\x1b[A", b"\x1b[Z", b"\x1b[12;1R", b"\x1bOP", b"\x1bx"):
            os.write(master, sequence)
            settle(slave)
        assert escapes.count == 0, "an arrow, Shift+Tab, a cursor report, F1 and Alt+x are no Esc"
        os.write(master, b"\x1b")
        assert escapes.seen.wait(60), "a lone Esc cancels"
    assert escapes.count == 1
    assert keys.take_typed() == "", "nothing of the sequences is kept as text"


def test_text_typed_during_a_turn_is_kept_and_edited(pty_fds: tuple[int, int]) -> None:
    master, slave = pty_fds
    keys = TurnKeys(slave, Escapes())
    with keys.watching():
        os.write(master, b"run the testz\x7fs\r")
        os.write(master, "and then — fix ✓\x1b[D".encode())
        settle(slave)
    assert keys.take_typed() == "run the tests\nand then — fix ✓"
    assert keys.take_typed() == "", "taken once"


def test_the_terminal_is_as_it_was_after_and_during_a_question(pty_fds: tuple[int, int]) -> None:
    master, slave = pty_fds
    before = termios.tcgetattr(slave)
    escapes = Escapes()
    keys = TurnKeys(slave, escapes)
    with keys.watching():
        during = termios.tcgetattr(slave)
        assert not during[3] & termios.ICANON and not during[3] & termios.ECHO
        assert during[3] & termios.ISIG, "Ctrl-C still raises SIGINT"
        with keys.paused():
            assert termios.tcgetattr(slave) == before
            os.write(master, b"y\r")  # the question's answer: not read away by the watcher
            settle()
            assert os.read(slave, 10) == b"y\n"
        os.write(master, b"\x1b")
        assert escapes.seen.wait(60), "watching again after the question"
    assert termios.tcgetattr(slave) == before


def test_no_terminal_no_watch() -> None:
    read, write = os.pipe()
    try:
        keys = TurnKeys(read, Escapes())
        with keys.watching():
            os.write(write, b"\x1btyped")
        assert os.read(read, 10) == b"\x1btyped", "a pipe is left alone"
    finally:
        os.close(read)
        os.close(write)


def test_typed_text_drops_control_keys_and_ctrl_u_clears_the_line() -> None:
    assert typed_text(b"abc\x15de\x07f\x04") == "def"
    assert typed_text(b"one\rtwo\x15three\r") == "one\nthree"
    assert typed_text(b"\xff\xfeok") == "ok"

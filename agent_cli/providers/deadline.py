"""The whole-request deadline: a reply that is still arriving after `provider.timeout` is cut off.

The read timeout (`provider.stall_timeout`) only says how long the connection may stay silent;
a server that drips a byte at a time, or sends nothing but keep-alive pings, resets it for ever.
So each request also gets a deadline for the whole reply, streamed or not:

    with deadline.watch(seconds) as watch:   # in the thread making the request
        ... the SDK call; its responses pass `deadline.on_response` (an httpx2 response hook)
        watch.expired                         # True once the deadline passed

When it passes, a timer shuts the request's socket, which wakes the read blocked on it; the
adapter then raises what the reader got as a `StalledError` saying so (retried like a stall).
The SDK's HTTP client carries `on_response` as its one response hook; which request a response
belongs to is the thread's (a summary call runs in a worker thread of its own).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["DeadlineExceeded", "Watch", "on_response", "watch"]


class _PerThread(threading.local):
    """The deadline of the request the current thread is making, if any."""

    def __init__(self) -> None:
        self.watch: Watch | None = None

    def enter(self, watch: Watch) -> Watch | None:
        previous, self.watch = self.watch, watch
        return previous

    def leave(self, watch: Watch, previous: Watch | None) -> None:
        # A stream's generator may be closed after the next request began: leave that one's watch.
        if self.watch is watch:
            self.watch = previous


_current = _PerThread()


class DeadlineExceeded(Exception):
    """Raised by the response hook when the headers arrive after the deadline already passed."""


class Watch:
    """One request's deadline; `expire` runs on the timer's thread."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._expired = threading.Event()
        self._lock = threading.Lock()
        self._responses: list[Any] = []
        self._done = threading.Event()
        self._timer = threading.Thread(target=self._wait, name="reply-deadline", daemon=True)

    @property
    def expired(self) -> bool:
        return self._expired.is_set()

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        """The reply is complete (or abandoned): the deadline no longer applies. Its connection goes
        back to the pool, so from now on nothing may shut it."""
        with self._lock:
            self._done.set()
            self._responses.clear()

    def _wait(self) -> None:
        if not self._done.wait(self.seconds):
            self.expire()

    def adopt(self, response: Any) -> None:
        """A response of this request arrived (headers read, body still to come)."""
        with self._lock:
            if self._expired.is_set():
                raise DeadlineExceeded
            if not self._done.is_set():
                self._responses.append(response)

    def expire(self) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._expired.set()
            responses = list(self._responses)
        for response in responses:
            _shut(response)


def _shut(response: Any) -> None:
    """Shut the socket under `response` both ways: a read blocked on it returns at once."""
    stream = (getattr(response, "extensions", None) or {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def watch(seconds: float) -> Iterator[Watch]:
    """A deadline `seconds` from now for the requests this thread makes inside the block."""
    current = Watch(seconds)
    previous = _current.enter(current)
    current.start()
    try:
        yield current
    finally:
        current.cancel()
        _current.leave(current, previous)


def on_response(response: Any) -> None:
    """The HTTP client's response hook: hand the response to this thread's deadline, if any."""
    current = _current.watch
    if current is not None:
        current.adopt(response)

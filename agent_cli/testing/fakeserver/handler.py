"""The fake's HTTP side: routing a request to its API, and writing the outcome back.

An *outcome* is what the server decided for one request: a `Refusal` (an HTTP error in the API's
envelope), an `Answer` (events to send) or a `Found` (a plain JSON body, for the Models API). The
handler writes an answer as one JSON body or as a chunked SSE stream, breaking it as a Drop,
Truncate or StreamError item asks, trickling it (Drip), or sending only keep-alives (Pings).
It knows nothing of scripts or caches: it asks the `Decider` (the FakeModelServer) what to send.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from . import anthropic_api, openai_chat, responses_api
from .script import Drip, Drop, Fault, Pings, Reply, Stall, StreamError, Truncate
from .wire import JSON, WireApi

__all__ = ["Answer", "Decider", "Found", "Http", "Refusal"]


@dataclass(frozen=True)
class Refusal:
    fault: Fault


@dataclass(frozen=True)
class Answer:
    events: list[JSON]
    item: Reply | Drop | Truncate | StreamError | Stall | Drip | Pings
    stream: bool


@dataclass(frozen=True)
class Found:
    body: JSON


class Decider(Protocol):
    @property
    def apis(self) -> Sequence[WireApi]: ...

    def answer(self, api: WireApi, path: str, raw: bytes, headers: Message) -> Refusal | Answer: ...

    def look_up(self, path: str, headers: Message) -> Refusal | Found: ...

    def compact(self, path: str, raw: bytes, headers: Message) -> Refusal | Found: ...


class Http(ThreadingHTTPServer):
    """The HTTP server, holding the fake that decides each answer (the handler reaches it here)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], fake: Decider) -> None:
        super().__init__(address, Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (SDK pools closing, our own Drop faults) are normal here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Http

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `.requests` instead
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if not path.startswith("/v1/models/"):
            self._error(openai_chat, Fault(404, f"Unknown request URL: GET {path}", kind="unknown_url"))
            return
        outcome = self.server.fake.look_up(path, self.headers)
        if isinstance(outcome, Refusal):  # the Models API is Anthropic's
            self._error(anthropic_api, outcome.fault)
        else:
            self._send_json(200, outcome.body)

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        if path.endswith("/v1/responses/compact"):  # OpenAI's compaction: one JSON body, never a stream
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            found = self.server.fake.compact(path, raw, self.headers)
            if isinstance(found, Refusal):
                self._error(responses_api, found.fault)
            else:
                self._send_json(200, found.body)
            return
        api = next((a for a in self.server.fake.apis if path.endswith(a.PATH)), None)
        if api is None:
            # Before reading the body, as before the split; OpenAI's envelope has a code for it.
            self._error(openai_chat, Fault(404, f"Unknown request URL: POST {path}", kind="unknown_url"))
            return
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        outcome = self.server.fake.answer(api, path, raw, self.headers)
        if isinstance(outcome, Refusal):
            self._error(api, outcome.fault)
        elif outcome.stream:
            self._stream(api, outcome)
        else:
            self._whole(api, outcome)

    def _send_json(self, status: int, payload: JSON, headers: Mapping[str, str] = {}) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, api: WireApi, fault: Fault) -> None:
        if fault.raw is None:
            self._send_json(fault.status, api.error_body(fault), fault.headers)
            return
        data = fault.raw.encode()
        self.send_response(fault.status)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _whole(self, api: WireApi, answer: Answer) -> None:
        payload = api.message(answer.events, truncated=isinstance(answer.item, Truncate))
        if isinstance(answer.item, Drip | Pings):
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            if isinstance(answer.item, Drip):
                self._trickle(data, answer.item.interval, chunked=False)
            else:
                self._keep_alive(b" ", answer.item, chunked=False)  # JSON may begin with whitespace
            return
        if not isinstance(answer.item, Drop | Stall):
            self._send_json(200, payload)
            return
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        if isinstance(answer.item, Stall):
            self._go_quiet(answer.item.seconds)
        self._hang_up()

    def _stream(self, api: WireApi, answer: Answer) -> None:
        item = answer.item
        events = api.without_stop(answer.events) if isinstance(item, Truncate) else answer.events
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if isinstance(item, Pings):
            ping = api.frame({"type": "ping"}) if api is anthropic_api else ": ping\n\n"
            self._keep_alive(ping.encode(), item, chunked=True)
            return
        for n, event in enumerate(events):
            if isinstance(item, Drop | Stall) and n == item.after_events:
                if isinstance(item, Stall):
                    self._go_quiet(item.seconds)
                self._hang_up()
                return
            if isinstance(item, StreamError) and n == item.after_events:
                event = api.error_event(item.kind, item.message, event)
            data = api.frame(event).encode()
            if isinstance(item, Drip):
                if not self._trickle(data, item.interval, chunked=True):
                    return
                continue
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            if event.get("type") == "error" or "error" in event:
                break
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _trickle(self, data: bytes, interval: float, *, chunked: bool) -> bool:
        """Write `data` a byte at a time, `interval` seconds apart; False once the client hung up."""
        for i in range(len(data)):
            byte = data[i : i + 1]
            try:
                self.wfile.write(b"1\r\n%s\r\n" % byte if chunked else byte)
                self.wfile.flush()
            except OSError:
                self.close_connection = True
                return False
            time.sleep(interval)
        return True

    def _keep_alive(self, ping: bytes, item: Pings, *, chunked: bool) -> None:
        """Send `ping` every `item.interval` seconds for `item.seconds`, then hang up."""
        end = time.monotonic() + item.seconds
        while time.monotonic() < end:
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ping), ping) if chunked else ping)
                self.wfile.flush()
            except OSError:
                self.close_connection = True
                return
            time.sleep(item.interval)
        self._hang_up()

    def _go_quiet(self, seconds: float) -> None:
        """Send nothing for `seconds` with the connection open (what a read timeout exists for)."""
        with contextlib.suppress(OSError):
            self.wfile.flush()
        time.sleep(seconds)

    def _hang_up(self) -> None:
        """Close the socket without finishing the body: the client sees a broken transfer."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

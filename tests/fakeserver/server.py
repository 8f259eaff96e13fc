"""The fake model server: HTTP on 127.0.0.1 in a background thread, answering from a script.

Each POST is routed by its path to an API module (`APIS`), then, in order: the body is parsed
and the request recorded (with its estimated input tokens); a wrong key gets the API's 401; a
request the real API would reject gets its 400; a prompt estimated above the context window gets
the API's overflow error; only then is the next script item taken. The answer is an outcome
value, a refusal (an HTTP error) or events to send, and the handler writes it: as one JSON body or
as a chunked SSE stream, breaking it as a Drop, Truncate or StreamError item asks.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import anthropic_api, openai_chat
from .prompt_cache import PromptCache, prompt_text
from .script import Drop, Fault, Reply, ScriptItem, StreamError, Truncate
from .wire import JSON, WireApi, arguments, blocks

__all__ = ["APIS", "FakeModelServer", "RecordedRequest", "chars_over_four", "last_user_text"]

APIS: tuple[WireApi, ...] = (anthropic_api, openai_chat)


@dataclass(frozen=True)
class RecordedRequest:
    api: str  # the API module's NAME: "anthropic", "openai"
    path: str
    body: JSON
    headers: dict[str, str]  # lower-case names; authorization and x-api-key removed
    input_tokens: int = 0


def chars_over_four(text: str) -> int:
    return (len(text) + 3) // 4


def last_user_text(recorded: RecordedRequest) -> str:
    """The text blocks of the request's last user message, joined by spaces."""
    for message in reversed(recorded.body.get("messages") or []):
        if message.get("role") == "user":
            return " ".join(
                str(b.get("text", "")) for b in blocks(message.get("content")) if b.get("type") == "text"
            )
    return ""


@dataclass(frozen=True)
class _Refusal:
    fault: Fault


@dataclass(frozen=True)
class _Answer:
    events: list[JSON]
    item: Reply | Drop | Truncate | StreamError
    stream: bool


class FakeModelServer:
    """The fake, in a background thread. Use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        port: int = 0,
        context_window: int | None = None,
        counter: Callable[[str], int] = chars_over_four,
        responder: Callable[[RecordedRequest], ScriptItem] | None = None,
        default: Reply | None = None,
        echo: bool = False,
        api_key: str | None = None,
        chunk_chars: int = 12,
    ) -> None:
        self.context_window = context_window
        self.counter = counter
        self.responder = responder
        self.default = default
        self.echo = echo
        self.api_key = api_key  # when set, other keys get each API's real 401
        self.chunk_chars = chunk_chars
        self._port = port
        self._lock = threading.Lock()
        self._queue: deque[ScriptItem] = deque()
        self._requests: list[RecordedRequest] = []
        self._cache = PromptCache()
        self._http: _Http | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle and addresses ----------------------------------------------

    def start(self) -> FakeModelServer:
        self._http = _Http(("127.0.0.1", self._port), _Handler)
        self._http.fake = self
        self._port = self._http.server_address[1]
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self._http = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def anthropic_base_url(self) -> str:
        """Root URL: the Anthropic SDK appends /v1/messages."""
        return self.url

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    # -- scripting and inspection ------------------------------------------------

    def queue(self, *items: ScriptItem) -> FakeModelServer:
        with self._lock:
            self._queue.extend(items)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    def reset(self) -> None:
        """Forget queued items, recorded requests and the prompt cache."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
        self._cache.clear()

    # -- answering (called from handler threads) ---------------------------------------

    def _answer(self, api: WireApi, path: str, raw: bytes, headers: Message) -> _Refusal | _Answer:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return _Refusal(Fault(400, "The request body is not valid JSON."))
        units = api.units(body)
        estimate = self.counter(prompt_text(units))
        kept = {k.lower(): v for k, v in headers.items() if k.lower() not in ("authorization", "x-api-key")}
        recorded = RecordedRequest(api.NAME, path, body, kept, estimate)
        with self._lock:
            self._requests.append(recorded)
        key = headers.get("x-api-key") or (headers.get("authorization") or "").removeprefix("Bearer ")
        if self.api_key is not None and key != self.api_key:
            return _Refusal(api.auth_fault(key))
        problem = api.validate(body)
        if problem:
            return _Refusal(Fault(400, problem))
        if self.context_window is not None and estimate > self.context_window:
            return _Refusal(api.overflow_fault(estimate, self.context_window))
        item = self._next(recorded)
        if isinstance(item, Fault):
            return _Refusal(item)
        reply = item if isinstance(item, Reply) else item.reply
        # The prompt was read before a StreamError strikes, so the cache is written either way.
        fresh, read, write = (estimate, 0, 0)
        if api.CACHES_PROMPTS:
            fresh, read, write = self._cache.usage(units, self.counter)
        out = self.counter(reply.text + "".join(arguments(c) for c in reply.tool_calls)) or 1
        usage = {
            "input_tokens": fresh,
            "output_tokens": out,
            "cache_read_tokens": read,
            "cache_write_tokens": write,
        }
        usage.update(reply.usage or {})
        events = api.events(reply, usage, str(body.get("model", "")), self.chunk_chars)
        if isinstance(item, StreamError) and not body.get("stream"):
            status = 529 if item.kind == "overloaded_error" else 500
            return _Refusal(Fault(status, item.message, kind=item.kind))
        return _Answer(events, item, bool(body.get("stream")))

    def _next(self, recorded: RecordedRequest) -> ScriptItem:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(recorded)
        if self.default is not None:
            return self.default
        if self.echo:
            return Reply(f"echo: {last_user_text(recorded)}")
        return Fault(400, "FakeModelServer: no reply scripted for this request", kind="fake_unscripted")


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (SDK pools closing, our own Drop faults) are normal here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Http

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `.requests` instead
        pass

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        api = next((a for a in APIS if path.endswith(a.PATH)), None)
        if api is None:
            # Before reading the body, as before the split; OpenAI's envelope has a code for it.
            self._error(openai_chat, Fault(404, f"Unknown request URL: POST {path}", kind="unknown_url"))
            return
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        outcome = self.server.fake._answer(api, path, raw, self.headers)
        if isinstance(outcome, _Refusal):
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
        self._send_json(fault.status, api.error_body(fault), fault.headers)

    def _whole(self, api: WireApi, answer: _Answer) -> None:
        payload = api.message(answer.events, truncated=isinstance(answer.item, Truncate))
        if not isinstance(answer.item, Drop):
            self._send_json(200, payload)
            return
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._hang_up()

    def _stream(self, api: WireApi, answer: _Answer) -> None:
        item = answer.item
        events = api.without_stop(answer.events) if isinstance(item, Truncate) else answer.events
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for n, event in enumerate(events):
            if isinstance(item, Drop) and n == item.after_events:
                self._hang_up()
                return
            if isinstance(item, StreamError) and n == item.after_events:
                event = api.error_event(item.kind, item.message)
            data = api.frame(event).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            if event.get("type") == "error" or "error" in event:
                break
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _hang_up(self) -> None:
        """Close the socket without finishing the body: the client sees a broken transfer."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

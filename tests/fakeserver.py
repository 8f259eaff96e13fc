"""A scriptable fake of the Anthropic Messages API and OpenAI Chat Completions, over real HTTP.

For tests and benchmarks across the project: the real SDKs talk to it on
127.0.0.1, so streaming, retries, dropped connections and error parsing go
through the same code paths as in production.

    with FakeModelServer(context_window=50_000) as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})]),
            Fault(529),                      # the next request is overloaded
            Drop(),                          # then one dies mid-stream
            Reply("done"),
        )
        provider = AnthropicProvider("claude-sonnet-4-5", api_key="k", base_url=server.anthropic_base_url)
        ...
        assert server.requests[0].body["messages"][0]["role"] == "user"

Each request takes the next queued item; when the queue is empty the
`responder` (a function of the RecordedRequest) answers, then `default`, then
an echo of the last user text if `echo=True`, else a 400 saying nothing was
scripted (a 400, so a missing script fails fast instead of being retried).

Like the real APIs it rejects, before consuming the queue: a prompt estimated
above `context_window` (each API's real overflow error), a tool_use without
its tool_result and an orphan tool_result, empty text blocks, more than four
cache_control breakpoints. Usage reports input tokens = the estimate
(`counter`, chars/4 by default). Anthropic prompt caching is simulated: a
request's prefix up to each `cache_control` breakpoint is written to the cache,
and a later request reads the longest cached prefix it starts with, at block
boundaries, as the real cache does.

Standalone, for terminal tests:
    python tests/fakeserver.py --port 8765 [--script FILE.json] [--echo] [--reply TEXT] [--context-window N]
A script file is a JSON list of items: {"text": ..., "tool_calls": [{"name": ..., "input": {...}}]},
{"fault": {"status": 529}}, {"drop": {}}, {"truncate": {}}, {"stream_error": {"kind": "api_error"}}.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, TypeAlias

__all__ = [
    "Drop",
    "FakeModelServer",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "StreamError",
    "ToolCallSpec",
    "Truncate",
    "load_script",
    "strip_cache_control",
]

Api: TypeAlias = Literal["anthropic", "openai"]
JSON: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call the fake model makes. `raw_arguments` sends that text verbatim (e.g. broken JSON)."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None


@dataclass(frozen=True)
class Reply:
    """One answer. `stop` is neutral ("end_turn", "tool_use", "max_tokens", "refusal") or the API's own word;
    `usage` overrides any of input_tokens, output_tokens, cache_read_tokens, cache_write_tokens."""

    text: str = ""
    tool_calls: Sequence[ToolCallSpec] = ()
    stop: str | None = None
    usage: Mapping[str, int] | None = None


@dataclass(frozen=True)
class Fault:
    """An HTTP error in the API's own envelope.

    `kind` overrides the error type (Anthropic) or code (OpenAI); `headers` are sent as given (retry-after).
    """

    status: int
    message: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    kind: str | None = None


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly after `after_events` stream events (half the body when not streaming)."""

    after_events: int = 3
    reply: Reply = Reply("This answer will be cut off half way through, so nobody may keep it.")


@dataclass(frozen=True)
class Truncate:
    """End the stream cleanly but without the stop/finish reason (and without usage)."""

    reply: Reply = Reply("This answer ends early without saying why it stopped.")


@dataclass(frozen=True)
class StreamError:
    """An error event inside a 200 stream after `after_events` events (Anthropic `event: error`,
    OpenAI `data: {"error": ...}`), then a clean end. Not streaming: the same as a 529/500 Fault."""

    kind: str = "overloaded_error"
    message: str = "Overloaded"
    after_events: int = 3
    reply: Reply = Reply("This answer is interrupted by an error event.")


ScriptItem: TypeAlias = Reply | Fault | Drop | Truncate | StreamError


@dataclass(frozen=True)
class RecordedRequest:
    api: Api
    path: str
    body: JSON
    headers: dict[str, str]  # lower-case names; authorization and x-api-key removed
    input_tokens: int = 0


def script_item(data: Mapping[str, Any]) -> ScriptItem:
    """One script item from its JSON form (see the module docstring)."""
    if "fault" in data:
        f = data["fault"]
        return Fault(int(f["status"]), str(f.get("message", "")), dict(f.get("headers") or {}), f.get("kind"))
    if "drop" in data:
        return Drop(int((data["drop"] or {}).get("after_events", 3)))
    if "truncate" in data:
        return Truncate()
    if "stream_error" in data:
        e = data["stream_error"] or {}
        return StreamError(str(e.get("kind", "overloaded_error")), str(e.get("message", "Overloaded")))
    calls = [ToolCallSpec(str(c["name"]), dict(c.get("input") or {})) for c in data.get("tool_calls") or []]
    return Reply(str(data.get("text", "")), calls, data.get("stop"), data.get("usage"))


def load_script(path: str) -> list[ScriptItem]:
    with open(path, encoding="utf-8") as handle:
        return [script_item(item) for item in json.load(handle)]


def chars_over_four(text: str) -> int:
    return (len(text) + 3) // 4


_STOPS = {  # neutral -> (anthropic, openai)
    "end_turn": ("end_turn", "stop"),
    "tool_use": ("tool_use", "tool_calls"),
    "max_tokens": ("max_tokens", "length"),
    "refusal": ("refusal", "content_filter"),
    "stop_sequence": ("stop_sequence", "stop"),
}
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    401: "invalid x-api-key",
    403: "permission denied",
    413: "Request exceeds the maximum size",
    429: "Rate limit exceeded, please retry later",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    529: "Overloaded",
}


def strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def _blocks(content: Any) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _unit_text(unit: JSON) -> str:
    """The part of a block or tool that costs tokens."""
    if unit.get("type") == "text" or ("text" in unit and "type" not in unit):
        return str(unit.get("text", ""))
    if unit.get("type") == "tool_result":
        content = unit.get("content")
        return content if isinstance(content, str) else "".join(_unit_text(b) for b in _blocks(content))
    return json.dumps(strip_cache_control(unit), sort_keys=True)


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (SDK pools closing, our own Drop faults) are normal here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


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
        self._cache: set[str] = set()
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

    # -- decisions (called from handler threads) ---------------------------------------

    def _next(self, recorded: RecordedRequest) -> ScriptItem:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(recorded)
        if self.default is not None:
            return self.default
        if self.echo:
            return Reply(f"echo: {_last_user_text(recorded)}")
        return Fault(400, "FakeModelServer: no reply scripted for this request", kind="fake_unscripted")

    def _units(self, api: Api, body: JSON) -> list[JSON]:
        """The prompt as cacheable units, in the API's prefix order (tools, system, messages)."""
        units: list[JSON] = []
        if api == "anthropic":
            units += [dict(t) for t in body.get("tools") or []]
            system = body.get("system")
            units += _blocks(system) if system else []
            for message in body.get("messages") or []:
                units += [{**b, "_role": message.get("role")} for b in _blocks(message.get("content"))]
            return units
        units += [dict(t) for t in body.get("tools") or []]
        for message in body.get("messages") or []:
            text = message.get("content")
            if text:
                units.append({"type": "text", "text": text if isinstance(text, str) else json.dumps(text)})
            if message.get("tool_calls"):
                units.append({"type": "tool_calls", "calls": message["tool_calls"]})
        return units

    def _usage(self, api: Api, units: list[JSON]) -> tuple[int, int, int]:
        """(uncached input, cache read, cache write) for one request; updates the cache."""
        texts = [_unit_text(u) for u in units]
        total = self.counter("".join(texts))
        breakpoints = [i for i, u in enumerate(units) if "cache_control" in u]
        if api != "anthropic" or not breakpoints:
            return total, 0, 0
        hashes, running = [], hashlib.sha256()
        for unit in units:
            running.update(json.dumps(strip_cache_control(unit), sort_keys=True).encode())
            hashes.append(running.copy().hexdigest())
        last = breakpoints[-1]
        with self._lock:
            hit = max((i for i in range(last + 1) if hashes[i] in self._cache), default=-1)
            self._cache.update(hashes[i] for i in breakpoints)
        read = self.counter("".join(texts[: hit + 1])) if hit >= 0 else 0
        write = self.counter("".join(texts[: last + 1])) - read
        return total - read - write, read, write


def _last_user_text(recorded: RecordedRequest) -> str:
    for message in reversed(recorded.body.get("messages") or []):
        if message.get("role") == "user":
            return " ".join(
                str(b.get("text", "")) for b in _blocks(message.get("content")) if b.get("type") == "text"
            )
    return ""


def _validate_anthropic(body: JSON) -> str | None:
    messages = body.get("messages")
    if not messages:
        return "messages: at least one message is required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    marks = sum(1 for u in [*_blocks(body.get("system")), *(body.get("tools") or [])] if "cache_control" in u)
    previous_uses: set[str] = set()
    for i, message in enumerate(messages):
        blocks = _blocks(message.get("content"))
        marks += sum(1 for b in blocks if "cache_control" in b)
        if any(b.get("type") == "text" and not str(b.get("text", "")).strip() for b in blocks):
            return "messages: text content blocks must be non-empty"
        results = {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"}
        for j, block in enumerate(blocks):
            if block.get("type") == "tool_result" and str(block.get("tool_use_id")) not in previous_uses:
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
        missing = sorted(previous_uses - results)
        if missing:
            return (
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."
            )
        previous_uses = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
    if previous_uses:
        return (
            f"messages.{len(messages)}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(sorted(previous_uses))}."
        )
    if marks > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {marks}."
    return None


def _validate_openai(body: JSON) -> str | None:
    messages = body.get("messages") or []
    if not messages:
        return "[] is too short - 'messages'"
    open_calls: set[str] = set()
    answering = False
    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if not answering or call_id not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'."
                )
            open_calls.discard(call_id)
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(sorted(open_calls))}"
            )
        open_calls = {str(c.get("id")) for c in message.get("tool_calls") or []}
        answering = bool(open_calls)
    if open_calls:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: "
            f"{', '.join(sorted(open_calls))}"
        )
    return None


def _stop_word(api: Api, reply: Reply) -> str:
    neutral = reply.stop or ("tool_use" if reply.tool_calls else "end_turn")
    pair = _STOPS.get(neutral)
    return neutral if pair is None else pair[0 if api == "anthropic" else 1]


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def _arguments(call: ToolCallSpec) -> str:
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(dict(call.input))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Http

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `.requests` instead
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        path = self.path.split("?")[0]
        api: Api
        if path.endswith("/v1/messages"):
            api = "anthropic"
        elif path.endswith("/chat/completions"):
            api = "openai"
        else:
            self._error("openai", Fault(404, f"Unknown request URL: POST {path}", kind="unknown_url"))
            return
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._error(api, Fault(400, "The request body is not valid JSON."))
            return
        headers = {
            k.lower(): v for k, v in self.headers.items() if k.lower() not in ("authorization", "x-api-key")
        }
        units = fake._units(api, body)
        estimate = fake.counter("".join(_unit_text(u) for u in units))
        recorded = RecordedRequest(api, path, body, headers, estimate)
        with fake._lock:
            fake._requests.append(recorded)
        key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix(
            "Bearer "
        )
        if fake.api_key is not None and key != fake.api_key:
            message = (
                "invalid x-api-key" if api == "anthropic" else f"Incorrect API key provided: {key[:4]}****."
            )
            self._error(api, Fault(401, message, kind=None if api == "anthropic" else "invalid_api_key"))
            return
        problem = _validate_anthropic(body) if api == "anthropic" else _validate_openai(body)
        if problem:
            self._error(api, Fault(400, problem))
            return
        window = fake.context_window
        if window is not None and estimate > window:
            if api == "anthropic":
                self._error(api, Fault(400, f"prompt is too long: {estimate} tokens > {window} maximum"))
            else:
                self._error(
                    api,
                    Fault(
                        400,
                        f"This model's maximum context length is {window} tokens. However, "
                        f"your messages resulted in {estimate} tokens. Please reduce the length "
                        "of the messages.",
                        kind="context_length_exceeded",
                    ),
                )
            return
        item = fake._next(recorded)
        if isinstance(item, Fault):
            self._error(api, item)
            return
        reply = item if isinstance(item, Reply) else item.reply
        fresh, read, write = fake._usage(api, units)
        out = fake.counter(reply.text + "".join(_arguments(c) for c in reply.tool_calls)) or 1
        usage = {
            "input_tokens": fresh,
            "output_tokens": out,
            "cache_read_tokens": read,
            "cache_write_tokens": write,
        }
        usage.update(reply.usage or {})
        model = str(body.get("model", ""))
        if api == "anthropic":
            events = _anthropic_events(reply, usage, model, fake.chunk_chars)
        else:
            events = _openai_events(reply, usage, model, fake.chunk_chars)
        if isinstance(item, StreamError) and not body.get("stream"):
            status = 529 if item.kind == "overloaded_error" else 500
            self._error(api, Fault(status, item.message, kind=item.kind))
        elif not body.get("stream"):
            self._whole(api, events, item)
        else:
            self._stream(api, events, item)

    # -- writing ------------------------------------------------------------------

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

    def _error(self, api: Api, fault: Fault) -> None:
        message = fault.message or _DEFAULT_MESSAGES.get(fault.status, f"HTTP {fault.status}")
        if api == "openai" and fault.status == 401 and not fault.message:
            message = "Incorrect API key provided."
        if api == "anthropic":
            kind = fault.kind or _ANTHROPIC_TYPES.get(
                fault.status, "api_error" if fault.status >= 500 else "invalid_request_error"
            )
            payload: JSON = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            kind_type = (
                "server_error"
                if fault.status >= 500
                else ("requests" if fault.status == 429 else "invalid_request_error")
            )
            code = fault.kind or ("rate_limit_exceeded" if fault.status == 429 else None)
            param = "messages" if code == "context_length_exceeded" else None
            payload = {"error": {"message": message, "type": kind_type, "param": param, "code": code}}
        self._send_json(fault.status, payload, fault.headers)

    def _whole(self, api: Api, events: list[JSON], item: ScriptItem) -> None:
        payload = _anthropic_message(events) if api == "anthropic" else _openai_message(events)
        if isinstance(item, Truncate):
            if api == "anthropic":
                payload["stop_reason"] = None
            else:
                payload["choices"][0]["finish_reason"] = None
        if not isinstance(item, Drop):
            self._send_json(200, payload)
            return
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._hang_up()

    def _stream(self, api: Api, events: list[JSON], item: ScriptItem) -> None:
        if isinstance(item, Truncate):
            final = {"message_delta", "message_stop"} if api == "anthropic" else set()
            events = [e for e in events if e.get("type") not in final]
            if api == "openai":
                events = [
                    e
                    for e in events
                    if e != {"done": True}
                    and not e.get("usage")
                    and not any(c.get("finish_reason") for c in e.get("choices") or [])
                ]
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
                error = {"type": item.kind, "message": item.message}
                event = {"type": "error", "error": error} if api == "anthropic" else {"error": error}
            if api == "anthropic":
                frame = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            else:
                frame = "data: [DONE]\n\n" if event == {"done": True} else f"data: {json.dumps(event)}\n\n"
            data = frame.encode()
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


def _anthropic_events(reply: Reply, usage: Mapping[str, int], model: str, size: int) -> list[JSON]:
    events: list[JSON] = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "cache_creation_input_tokens": usage["cache_write_tokens"],
                    "cache_read_input_tokens": usage["cache_read_tokens"],
                    "output_tokens": 1,
                },
            },
        }
    ]
    index = 0
    if reply.text or not reply.tool_calls:
        events.append(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        )
        events.append({"type": "ping"})
        events += [
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
            for piece in _pieces(reply.text, size)
        ]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for offset, call in enumerate(reply.tool_calls):
        at = index + offset
        block = {
            "type": "tool_use",
            "id": call.id or f"toolu_{uuid.uuid4().hex[:24]}",
            "name": call.name,
            "input": {},
        }
        events.append({"type": "content_block_start", "index": at, "content_block": block})
        events += [
            {
                "type": "content_block_delta",
                "index": at,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in ["", *_pieces(_arguments(call), size)]
        ]
        events.append({"type": "content_block_stop", "index": at})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_word("anthropic", reply), "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return events


def _anthropic_message(events: list[JSON]) -> JSON:
    message: JSON = dict(events[0]["message"])
    blocks: dict[int, JSON] = {}
    for event in events:
        if event["type"] == "content_block_start":
            blocks[event["index"]] = {**event["content_block"], "_json": ""}
        elif event["type"] == "content_block_delta":
            delta, block = event["delta"], blocks[event["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["_json"] += delta["partial_json"]
        elif event["type"] == "message_delta":
            message["stop_reason"] = event["delta"]["stop_reason"]
            message["usage"] = {**message["usage"], **event["usage"]}
    content = []
    for _, block in sorted(blocks.items()):
        raw = block.pop("_json")
        if block["type"] == "tool_use":
            try:
                block["input"] = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                block["input"] = {"_raw": raw}  # the real API never sends broken input when not streaming
        content.append(block)
    message["content"] = content
    return message


def _openai_events(reply: Reply, usage: Mapping[str, int], model: str, size: int) -> list[JSON]:
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "usage": None,
    }

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": piece}) for piece in _pieces(reply.text, size)]
    for index, call in enumerate(reply.tool_calls):
        pieces = _pieces(_arguments(call), size) or [""]
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.id or f"call_{uuid.uuid4().hex[:24]}",
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}) for piece in pieces
        ]
    events.append(chunk({}, _stop_word("openai", reply)))
    prompt = usage["input_tokens"] + usage["cache_read_tokens"] + usage["cache_write_tokens"]
    events.append(
        {
            **base,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": usage["output_tokens"],
                "total_tokens": prompt + usage["output_tokens"],
                "prompt_tokens_details": {"cached_tokens": usage["cache_read_tokens"], "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
        }
    )
    events.append({"done": True})
    return events


def _openai_message(events: list[JSON]) -> JSON:
    text, finish, usage = "", None, None
    calls: dict[int, JSON] = {}
    for event in events:
        if event.get("usage"):
            usage = event["usage"]
        for choice in event.get("choices") or []:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    call["index"],
                    {"id": call.get("id"), "type": "function", "function": {"name": "", "arguments": ""}},
                )
                slot["function"]["name"] += call.get("function", {}).get("name", "")
                slot["function"]["arguments"] += call.get("function", {}).get("arguments", "")
            finish = choice.get("finish_reason") or finish
    message: JSON = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": events[0]["id"],
        "object": "chat.completion",
        "created": events[0]["created"],
        "model": events[0]["model"],
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake Anthropic + OpenAI model server for tests.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON list of replies/faults, answered in order")
    parser.add_argument("--echo", action="store_true", help="answer 'echo: <last user text>' when unscripted")
    parser.add_argument("--reply", help="fixed answer when unscripted")
    parser.add_argument("--context-window", type=int, default=None)
    args = parser.parse_args(argv)
    server = FakeModelServer(
        port=args.port,
        context_window=args.context_window,
        echo=args.echo,
        default=Reply(args.reply) if args.reply is not None else None,
    )
    if args.script:
        server.queue(*load_script(args.script))
    server.start()
    print(f"fakeserver listening on {server.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

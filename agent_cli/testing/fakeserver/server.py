"""The fake model server: HTTP on 127.0.0.1 in a background thread, answering from a script.

Each POST is routed by its path to an API module (`APIS`), then, in order: the body is parsed;
the API admits it (what its model reads, or the 4xx the real API gives); the request is recorded,
with its estimated input tokens and how much replayed reasoning the model read or the API dropped;
a wrong key gets the API's 401; a request the API refused gets that refusal; a prompt estimated
above the context window gets the API's overflow error (inside a 200 stream, where the API has
that form and `overflow_in_stream` asks for it); only then is the next script item taken. The
answer is an outcome value that `handler` writes. A GET of /v1/models/{id} answers from the
`models` table, as Anthropic's Models API does, and is recorded apart (`model_lookups`).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import unquote

from . import anthropic_api, openai_chat, responses_api
from .compaction import anthropic_compaction_events, default_summary, responses_compacted
from .handler import Answer, Found, Http, Refusal
from .images import counted, image_fault
from .prompt_cache import PromptCache, prompt_text
from .script import Fault, Reply, ScriptItem, StreamError
from .wire import JSON, Admission, WireApi, arguments, blocks

__all__ = ["APIS", "DEFAULT_KEY", "FakeModelServer", "RecordedRequest", "chars_over_four", "last_user_text"]

APIS: tuple[WireApi, ...] = (anthropic_api, openai_chat, responses_api)
# Fixed, so seals from one server stay good on the next (a resumed session), as real ones do.
DEFAULT_KEY = b"fakeserver signing key"


@dataclass(frozen=True)
class RecordedRequest:
    api: str  # the API module's NAME: "anthropic", "openai", "openai-responses"; "models" for a lookup
    path: str
    body: JSON
    headers: dict[str, str]  # lower-case names; authorization and x-api-key removed
    input_tokens: int = 0
    reasoning_accepted: int = 0  # replayed thinking blocks / reasoning items the model read
    reasoning_withheld: int = 0  # replayed ones the API dropped without an error


def chars_over_four(text: str) -> int:
    return (len(text) + 3) // 4


def last_user_text(recorded: RecordedRequest) -> str:
    """The text of the request's last user message (text blocks or input_text parts), joined by spaces."""
    body = recorded.body
    if isinstance(body.get("input"), str):
        return str(body["input"])
    turns = body.get("messages") or body.get("input") or []
    for message in reversed(turns):
        if message.get("role") == "user":
            return " ".join(
                str(b.get("text", ""))
                for b in blocks(message.get("content"))
                if b.get("type") in ("text", "input_text")
            )
    return ""


def _user_texts(turns: list[Any]) -> list[str]:
    """The text of each user message (Anthropic messages or Responses input items), in order."""
    texts = []
    for turn in turns:
        if isinstance(turn, dict) and turn.get("role") == "user":
            parts = blocks(turn.get("content"))
            texts.append(
                " ".join(str(b.get("text", "")) for b in parts if b.get("type") in ("text", "input_text"))
            )
    return texts


def _kept(headers: Message) -> dict[str, str]:
    """The headers worth recording: lower-case names, without the key."""
    return {k.lower(): v for k, v in headers.items() if k.lower() not in ("authorization", "x-api-key")}


def display_name(model: str) -> str:
    """ "claude-opus-5-5" -> "Claude Opus 5.5"."""
    words: list[str] = []
    for part in model.split("-"):
        if part.isdigit() and words and words[-1][-1:].isdigit():
            words[-1] += f".{part}"
        else:
            words.append(part.capitalize())
    return " ".join(words)


@dataclass(frozen=True)
class _Settings:
    """What the constructor was given, kept so reset() can put it back."""

    context_window: int | None
    counter: Callable[[str], int]
    responder: Callable[[RecordedRequest], ScriptItem] | None
    default: Reply | None
    echo: bool
    api_key: str | None
    chunk_chars: int
    models: Mapping[str, tuple[int, int]]
    overflow_in_stream: bool
    signing_key: bytes


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
        models: Mapping[str, tuple[int, int]] | None = None,
        overflow_in_stream: bool = False,
        signing_key: bytes = DEFAULT_KEY,
    ) -> None:
        self._built = _Settings(
            context_window=context_window,
            counter=counter,
            responder=responder,
            default=default,
            echo=echo,
            api_key=api_key,
            chunk_chars=chunk_chars,
            models=dict(models or {}),
            overflow_in_stream=overflow_in_stream,
            signing_key=signing_key,
        )
        self._settle(self._built)
        self.apis = APIS
        self._port = port
        self._lock = threading.Lock()
        self._queue: deque[ScriptItem] = deque()
        self._requests: list[RecordedRequest] = []
        self._lookups: list[RecordedRequest] = []
        self._cache = PromptCache()
        self._paused: set[str] = set()  # what replies that paused their turn said (WireApi.paused_key)
        self._http: Http | None = None
        self._thread: threading.Thread | None = None

    def _settle(self, built: _Settings) -> None:
        # Public and settable: a test may change one between requests; reset() puts them back.
        self.context_window = built.context_window
        self.counter = built.counter
        self.responder = built.responder
        self.default = built.default
        self.echo = built.echo
        self.api_key = built.api_key  # when set, other keys get each API's real 401
        self.chunk_chars = built.chunk_chars
        self.models = dict(built.models)  # the Models API: id -> (max_input_tokens, max_tokens)
        self.overflow_in_stream = built.overflow_in_stream  # Responses: overflow as response.failed
        self.signing_key = built.signing_key
        # What the providers' own compaction writes (`compaction`): given the user's texts, the summary.
        self.compactor: Callable[[list[str]], str] = default_summary

    # -- lifecycle and addresses ----------------------------------------------

    def start(self) -> FakeModelServer:
        self._http = Http(("127.0.0.1", self._port), self)
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

    @property
    def model_lookups(self) -> list[RecordedRequest]:
        """The Models API requests (GET /v1/models/{id}), in order."""
        with self._lock:
            return list(self._lookups)

    def reset(self) -> None:
        """Back to as built, still listening: forget queued items, recorded requests and the prompt
        cache, and put back the settings the constructor was given."""
        self._settle(self._built)
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._lookups.clear()
            self._paused.clear()
        self._cache.clear()

    # -- answering (called from handler threads) ---------------------------------------

    def answer(self, api: WireApi, path: str, raw: bytes, headers: Message) -> Refusal | Answer:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return Refusal(Fault(400, "The request body is not valid JSON."))
        kept = _kept(headers)
        with self._lock:
            paused = frozenset(self._paused)
        admitted = api.admit(body, kept, self.signing_key, paused)
        if not isinstance(admitted, Fault):
            admitted = image_fault(api.NAME, body) or admitted
        seen = admitted if isinstance(admitted, Admission) else Admission(body, kept, self.signing_key)
        units = api.units(counted(api.NAME, seen.body))  # an image costs its tokens, not its base64
        estimate = self.counter(prompt_text(units))
        recorded = RecordedRequest(api.NAME, path, body, kept, estimate, seen.accepted, seen.withheld)
        with self._lock:
            self._requests.append(recorded)
        key = headers.get("x-api-key") or (headers.get("authorization") or "").removeprefix("Bearer ")
        if self.api_key is not None and key != self.api_key:
            return Refusal(api.auth_fault(key))
        if isinstance(admitted, Fault):
            return Refusal(admitted)
        if self.context_window is not None and estimate > self.context_window:
            fault = api.overflow_fault(estimate, self.context_window)
            in_stream = None
            if self.overflow_in_stream and body.get("stream"):
                in_stream = api.overflow_events(fault, seen)
            # No script item is taken: the Reply only says "stream it as it is".
            return Answer(in_stream, Reply(), True) if in_stream else Refusal(fault)
        if api is anthropic_api and body.get("compaction") is not None:
            # The API's own summary: no script item is taken (`compaction`).
            summary = self.compactor(_user_texts(body.get("messages") or []))
            spent = {"input_tokens": estimate, "output_tokens": self.counter(summary) or 1}
            events = anthropic_compaction_events(body, self.signing_key, summary, spent)
            return Answer(events, Reply(), bool(body.get("stream")))
        item = self._next(recorded)
        if isinstance(item, Fault):
            return Refusal(item)
        reply = item if isinstance(item, Reply) else item.reply
        # The prompt was read before a StreamError strikes, so the cache is written either way.
        fresh, read, write = (estimate, 0, 0)
        if api.CACHING == "breakpoints":
            fresh, read, write = self._cache.usage(units, self.counter, str(body.get("model", "")))
        elif api.CACHING == "automatic":
            fresh, read, write = self._cache.automatic(units, self.counter, str(body.get("model", "")))
        out = self.counter(reply.text + "".join(arguments(c) for c in reply.tool_calls)) or 1
        reasoning = reply.reasoning_tokens if seen.thinking else 0
        usage: dict[str, Any] = {
            "input_tokens": fresh,
            "output_tokens": out + reasoning,
            "cache_read_tokens": read,
            "cache_write_tokens": write,
            "reasoning_tokens": reasoning,
        }
        usage.update(reply.usage or {})
        events = api.events(reply, seen, usage, self.chunk_chars)
        paused_key = api.paused_key(seen.body, events)
        if paused_key is not None:
            with self._lock:
                self._paused.add(paused_key)
        if isinstance(item, StreamError) and not body.get("stream"):
            status = 529 if item.kind == "overloaded_error" else 500
            return Refusal(Fault(status, item.message, kind=item.kind))
        return Answer(events, item, bool(body.get("stream")))

    def compact(self, path: str, raw: bytes, headers: Message) -> Refusal | Found:
        """OpenAI's `POST /v1/responses/compact`: the user's messages and one compaction item
        (`compaction`), checked as a `/responses` request's input is. No script item is taken."""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return Refusal(Fault(400, "The request body is not valid JSON."))
        kept = _kept(headers)
        admitted = responses_api.admit(body, kept, self.signing_key)
        seen = admitted if isinstance(admitted, Admission) else Admission(body, kept, self.signing_key)
        estimate = self.counter(prompt_text(responses_api.units(seen.body)))
        with self._lock:
            self._requests.append(RecordedRequest(responses_api.NAME, path, body, kept, estimate))
        key = headers.get("x-api-key") or (headers.get("authorization") or "").removeprefix("Bearer ")
        if self.api_key is not None and key != self.api_key:
            return Refusal(responses_api.auth_fault(key))
        if isinstance(admitted, Fault):
            return Refusal(admitted)
        if not body.get("model"):
            return Refusal(
                Fault(400, "Missing required parameter: 'model'.", kind="missing_required_parameter")
            )
        if self.context_window is not None and estimate > self.context_window:
            return Refusal(responses_api.overflow_fault(estimate, self.context_window))
        items = body.get("input")
        summary = self.compactor(
            _user_texts(items if isinstance(items, list) else [{"role": "user", "content": items}])
        )
        usage = {"input_tokens": estimate, "output_tokens": self.counter(summary) or 1}
        return Found(responses_compacted(body, self.signing_key, summary, usage))

    def look_up(self, path: str, headers: Message) -> Refusal | Found:
        """The Models API: GET /v1/models/{id} from the `models` table, else Anthropic's 404."""
        model = unquote(path.removeprefix("/v1/models/"))
        with self._lock:
            self._lookups.append(RecordedRequest("models", path, {}, _kept(headers)))
        if model not in self.models:
            return Refusal(Fault(404, f"model: {model}", kind="not_found_error"))
        window, output = self.models[model]
        return Found(
            {
                "type": "model",
                "id": model,
                "display_name": display_name(model),
                "created_at": "2026-01-01T00:00:00Z",
                "max_input_tokens": window,
                "max_tokens": output,
            }
        )

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

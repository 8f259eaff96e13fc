"""The shape every SDK-backed adapter shares: a lazy client, one request, its stream assembled.

    SDKProvider.stream(request)
        -> wire = to_wire(request)
        -> one SDK call (streamed: each event fed to an assembler; else one response body)
        -> TextDelta / ThinkingDelta ... then exactly one Completion
        SDK and transport exceptions are raised as the error tree's members (errors.py).

Two clocks bound a request: the read timeout (`stall`: this long with no byte at all) and the
whole-request deadline (`timeout`: the whole reply, however it trickles in; `deadline.py`). A
server that drips a byte at a time or sends only pings passes the first and is cut by the second;
both are a `StalledError`, retried twice.

An adapter (anthropic.py, openai.py, openai_responses.py) subclasses it with its wire
translation, its assembler, the SDK call and its error classification (`sdk_errors.py`, shared),
and says how it is built from the settings and the resolved model (`build`); the SDK is imported
only when the first request is made (or `load_sdk` is called). The SDK's own retries are off:
`providers.retry` retries, including a stream that dies half way.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, Protocol, Self

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ProviderError, StalledError, TransientError
from agent_cli.core.images import ImageBlock, image_note
from agent_cli.core.messages import Block, Message, NativeRecord, TextBlock, ToolResult, Usage
from agent_cli.core.requests import Completion, Request, StreamEvent, TextDelta, ThinkingDelta
from agent_cli.providers.errors import translate_errors, unreachable
from agent_cli.providers.registry import Wire
from agent_cli.providers.resolve import ModelChoice

CONNECT_SECONDS = 10.0
# Anthropic sends a ping every few seconds and both APIs stream thinking as it happens: this long
# with no byte at all means the connection is dead, not that the model is thinking.
STALL_SECONDS = 90.0

__all__ = ["Assembler", "SDKProvider"]


class Assembler(Protocol):
    """Builds one Completion from stream events (as dicts). `feed` returns a delta to show, if any;
    `finish` raises TransientError when the stream never said why it stopped."""

    def feed(self, event: Mapping[str, Any]) -> TextDelta | ThinkingDelta | None: ...

    def finish(self) -> Completion: ...


def without_images(request: Request) -> Request:
    """`request` with each image as a line naming it: what a model without image input is sent (an
    image in the history, from another model before `/model`, would otherwise be a 400)."""
    if not any(m.images for m in request.messages):
        return request
    messages = tuple(_imageless(m) if m.images else m for m in request.messages)
    return dataclasses.replace(request, messages=messages)


def _imageless(message: Message) -> Message:
    blocks: list[Block] = []
    for b in message.content:
        if isinstance(b, ImageBlock):
            blocks.append(TextBlock(image_note(b)))
        elif isinstance(b, ToolResult) and b.images:
            notes = "\n".join(image_note(i) for i in b.images)
            blocks.append(dataclasses.replace(b, content=f"{b.content}\n{notes}", images=()))
        else:
            blocks.append(b)
    return message.replace(blocks)


class SDKProvider(ABC):
    name: ClassVar[str]  # the provider's name in the registry

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str,
        timeout: float = 1800.0,
        streaming: bool = True,
        stall: float = STALL_SECONDS,
        images: bool = True,
    ) -> None:
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._stall = stall
        self.streaming = streaming
        self._client: Any = None
        self._said: set[str] = set()  # the kinds of note already passed on (each is said once)
        self.images = images  # the model takes images; if not, each is sent as a line naming it

    @property
    def model(self) -> str:
        return self._model

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        return translate_errors(self._events(request), self._translate)

    def compact(self, request: Request, instructions: str) -> Iterator[StreamEvent]:
        """The provider's own compaction of `request`'s messages (`context.summarizer = "native"`):
        one Completion whose message holds the provider's record (a `NativeRecord`) and its readable
        text. Only an adapter whose API has one overrides `_compact`."""
        return translate_errors(self._compaction(request, instructions), self._translate)

    def _compaction(self, request: Request, instructions: str) -> Iterator[StreamEvent]:
        from agent_cli.providers.deadline import watch

        with watch(self._timeout) as deadline:
            try:
                record, usage = self._compact(request, instructions)
            except Exception as exc:
                if deadline.expired:
                    raise self._too_long() from exc
                raise
        message = Message.of("assistant", (record, TextBlock(record.text)))
        yield Completion(message, "end_turn", usage, self._model)

    def _compact(self, request: Request, instructions: str) -> tuple[NativeRecord, Usage]:
        raise NotImplementedError(f"{self.name}: this API has no compaction of its own")

    def _whole_reply_timeouts(self) -> Any:
        """A reply that is not streamed (a compaction) is silent until it is whole: no stall limit,
        only the deadline."""
        import httpx2

        return httpx2.Timeout(self._timeout, connect=CONNECT_SECONDS, read=self._timeout)

    def _translate(self, exc: BaseException) -> ProviderError | None:
        """The SDK's error as ours; nothing listening at the base URL is said as such."""
        error = self._classify(exc)
        if isinstance(error, StalledError) and self.streaming:
            return StalledError(
                f"{self.name}: the stream stalled: nothing received for {self._stall:g} s "
                "(provider.stall_timeout)"
            )
        if error is None or isinstance(error, TransientError):
            return unreachable(self.name, self._base_url, exc) or error
        return error

    def _timeouts(self) -> Any:
        """Connecting gets 10 s; a stream that sends nothing for `stall` seconds has stalled (a reply
        that is not streamed may be silent until it is whole). The whole reply is bounded by the
        deadline (`timeout`), which httpx2 has no setting for: see `deadline.py`."""
        import httpx2

        read = min(self._stall, self._timeout) if self.streaming else self._timeout
        return httpx2.Timeout(self._timeout, connect=CONNECT_SECONDS, read=read)

    def _http_client(self, factory: Callable[..., Any]) -> Any:
        """The SDK's own HTTP client (`factory`: its DefaultHttpxClient, keeping its socket options and
        proxies), with the response hook that lets the deadline shut a reply that takes too long."""
        from agent_cli.providers.deadline import on_response

        return factory(timeout=self._timeouts(), event_hooks={"response": [on_response]})

    def _client_options(self, http_factory: Callable[..., Any]) -> dict[str, Any]:
        """What every SDK client is made with: the key and endpoint, our timeouts, no SDK retries
        (`retry.py` retries), and the SDK's HTTP client with the deadline's hook."""
        return {
            "api_key": self._api_key,
            "base_url": self._base_url,
            "timeout": self._timeouts(),
            "max_retries": 0,
            "http_client": self._http_client(http_factory),
        }

    def _too_long(self) -> StalledError:
        return StalledError(
            f"{self.name}: the reply took longer than {self._timeout:g} s in all and was cut off "
            "(provider.timeout)"
        )

    def _sdk(self) -> Any:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def _events(self, request: Request) -> Iterator[StreamEvent]:
        from agent_cli.providers.deadline import watch

        wire = self._to_wire(request if self.images else without_images(request))
        with watch(self._timeout) as deadline:
            try:
                for event in self._reply(wire):
                    if isinstance(event, Completion):
                        deadline.cancel()  # whole: the caller may stop here, leaving this generator open
                    yield event
            except Exception as exc:  # whatever the cut-off read raised, the deadline is the cause
                if deadline.expired:
                    raise self._too_long() from exc
                raise

    def _reply(self, wire: dict[str, Any]) -> Iterator[StreamEvent]:
        if not self.streaming:
            yield self._once(self._from_wire(self._dump(self._create(wire, stream=False))))
            return
        assembler = self._assembler()
        with self._create(wire, stream=True) as events:
            for event in events:
                delta = assembler.feed(self._dump(event))
                if delta is not None:
                    yield delta
        yield self._once(assembler.finish())

    def _once(self, completion: Completion) -> Completion:
        """The completion with only the notes of a kind not said before (the kind: up to the "(")."""
        if not completion.notes:
            return completion
        fresh = []
        for note in completion.notes:
            kind = note.split(" (", 1)[0]
            if kind not in self._said:
                self._said.add(kind)
                fresh.append(note)
        return dataclasses.replace(completion, notes=tuple(fresh))

    def _dump(self, event: Any) -> Mapping[str, Any]:
        """A response or stream event (an SDK object) as a plain dict with the wire's field names.

        A body that is not JSON (a proxy's HTML page sent with 200) reaches here as text: it is
        a transient fault, retried like a stream that ends early."""
        if isinstance(event, str | bytes):
            text = event.decode("utf-8", "replace") if isinstance(event, bytes) else event
            start = " ".join(text.split())[:60]
            raise TransientError(f"{self.name}: the reply is not JSON (it starts {start!r})")
        return self._as_dict(event)

    def _as_dict(self, event: Any) -> Mapping[str, Any]:
        # Without serializer warnings: a block or item of a type this SDK does not know yet is kept
        # as sent and the wire module skips it; pydantic would print a page of warnings per event.
        return dict(event.model_dump(warnings=False))

    # -- what each adapter supplies ----------------------------------------------

    @classmethod
    @abstractmethod
    def build(
        cls,
        settings: ProviderSettings,
        model: ModelChoice,
        *,
        wire: Wire,
        streaming: bool,
        web_search: bool = False,
    ) -> Self:
        """The adapter for `model` under `settings`, speaking `wire` (one of this adapter's);
        `web_search`: offer the provider's own search where the model has one (`server_search.py`)."""

    @staticmethod
    @abstractmethod
    def load_sdk() -> None:
        """Import the SDK (about a second on a small machine); later imports are free."""

    @classmethod
    def query_limits(cls, settings: ProviderSettings, model: str) -> tuple[int, int] | None:
        """(window, max output) from the provider's Models API, for a model the table does not know;
        None when its API does not say (the default)."""
        return None

    @abstractmethod
    def _new_client(self) -> Any:
        """The SDK client, with its retries off (imports the SDK)."""

    @abstractmethod
    def _to_wire(self, request: Request) -> dict[str, Any]:
        """The SDK call's keyword arguments (without `stream`)."""

    @abstractmethod
    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        """Make the call: a response (`model_dump()`-able) or a stream of events (a context manager)."""

    @abstractmethod
    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        """A Completion from a non-streamed response body."""

    @abstractmethod
    def _assembler(self) -> Assembler: ...

    @staticmethod
    @abstractmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        """The error-tree member for an exception from the SDK or its transport, or None (a bug)."""

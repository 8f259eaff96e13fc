"""The Anthropic Messages API adapter: the SDK call, and its errors as the error tree.

The only module importing `anthropic` (lazily, inside functions). The wire
translation is `anthropic_wire.py` (pure); the shape of the call is
`sdk_client.SDKProvider`; SDK exceptions climb the ladder shared with the OpenAI
adapters (`sdk_errors.py`). The SDK's own retries are off: `providers.retry`
retries, including a stream that dies half way, which the SDK never retries.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ProviderError
from agent_cli.core.messages import NativeRecord, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.anthropic_wire import (
    COMPACT_BETA,
    StreamAssembler,
    ThinkingConfig,
    from_wire,
    reply_usage,
    to_wire,
)
from agent_cli.providers.cache_marks import WrittenPrefixes
from agent_cli.providers.errors import body_message
from agent_cli.providers.native_support import native_compaction_gap
from agent_cli.providers.native_wire import anthropic_compaction_wire, anthropic_record
from agent_cli.providers.registry import ANTHROPIC, Wire
from agent_cli.providers.resolve import ModelChoice
from agent_cli.providers.sdk_client import STALL_SECONDS, SDKProvider
from agent_cli.providers.sdk_errors import classify_sdk_error
from agent_cli.providers.server_search import web_search_gap

__all__ = ["AnthropicProvider", "classify", "load_sdk", "query_limits"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


def load_sdk() -> None:
    """Import the SDK (about a second on a small machine) and the HTTP transport its first client
    imports; later imports are free."""
    import anthropic  # noqa: F401
    import httpcore2  # noqa: F401
    import httpx2  # noqa: F401


# -- errors -------------------------------------------------------------------


def _detail(exc: Any) -> tuple[str, str | None]:
    """The human part of the error's body, and its type (`overloaded_error`, ...)."""
    api_message = getattr(exc, "api_message", None) or ""
    return body_message(exc.body, api_message) or api_message, getattr(exc, "type", None)


def classify(exc: BaseException) -> ProviderError | None:
    """The error-tree member for an exception from the SDK or its transport, or None."""
    import anthropic

    return classify_sdk_error(exc, anthropic, provider=ANTHROPIC.name, detail=_detail)


# -- provider -----------------------------------------------------------------


class AnthropicProvider(SDKProvider):
    """`Provider` for the Anthropic Messages API (or anything serving it at `base_url`)."""

    name = ANTHROPIC.name

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 1800.0,
        stall: float = STALL_SECONDS,
        prompt_caching: bool = True,
        streaming: bool = True,
        thinking: ThinkingConfig | None = None,
        compaction: bool = True,
        web_search: bool = False,
        images: bool = True,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout=timeout,
            streaming=streaming,
            stall=stall,
            images=images,
        )
        self.prompt_caching = prompt_caching
        self.thinking = thinking
        self.compaction = compaction  # the model reads compaction blocks (`native_support`)
        self.web_search = web_search  # the provider's search tool is offered (`server_search`)
        self._written = WrittenPrefixes()  # what this session's requests cached: for the next's marks

    @classmethod
    def build(
        cls,
        settings: ProviderSettings,
        model: ModelChoice,
        *,
        wire: Wire,
        streaming: bool,
        web_search: bool = False,
    ) -> AnthropicProvider:
        thinking = ThinkingConfig.for_model(model.accepts, effort=model.effort, display=settings.display)
        return cls(
            model.name,
            api_key=settings.api_key or "",
            base_url=settings.base_url,
            timeout=settings.timeout,
            stall=settings.stall_timeout,
            prompt_caching=settings.prompt_caching,
            streaming=streaming,
            thinking=thinking,
            compaction=native_compaction_gap(ANTHROPIC.name, wire, model.name) is None,
            web_search=web_search and web_search_gap(ANTHROPIC.name, wire, model.name) is None,
            images=model.accepts.images,
        )

    @staticmethod
    def load_sdk() -> None:
        load_sdk()

    @classmethod
    def query_limits(cls, settings: ProviderSettings, model: str) -> tuple[int, int] | None:
        if not settings.api_key:
            return None
        return query_limits(model, api_key=settings.api_key, base_url=settings.base_url)

    def _new_client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(**self._client_options(anthropic.DefaultHttpxClient))

    def _to_wire(self, request: Request) -> dict[str, Any]:
        return to_wire(
            request,
            self._model,
            caching=self.prompt_caching,
            thinking=self.thinking,
            compaction=self.compaction,
            web_search=self.web_search,
            written=self._written,
            at=time.monotonic(),
        )

    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        return (
            self._sdk().messages.create(**wire, stream=True)
            if stream
            else self._sdk().messages.create(**wire)
        )

    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        return from_wire(body, self._model)

    def _compact(self, request: Request, instructions: str) -> tuple[NativeRecord, Usage]:
        """On-demand compaction: the reply's JSON as it came (the SDK's models would drop fields a
        newer API adds to the block, and the block must go back byte for byte)."""
        wire = anthropic_compaction_wire(self._to_wire(request), instructions, COMPACT_BETA)
        raw = self._sdk().messages.with_raw_response.create(**wire, timeout=self._whole_reply_timeouts())
        body = raw.http_response.json()
        return anthropic_record(body), reply_usage(body.get("usage"))

    def _assembler(self) -> StreamAssembler:
        return StreamAssembler(self._model)

    @staticmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        return classify(exc)


def query_limits(
    model: str, *, api_key: str, base_url: str | None, timeout: float = 10.0
) -> tuple[int, int] | None:
    """(context window, max output) as the Models API reports them for `model`, or None.

    For a model the table does not know: `GET /v1/models/{id}` answers with
    `max_input_tokens` and `max_tokens`. Any failure means "not known".
    """
    import anthropic

    try:
        client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url or DEFAULT_BASE_URL, timeout=timeout, max_retries=0
        )
        info = client.models.retrieve(model).model_dump()
    except Exception:  # the table's family default stands in
        return None
    window, output = info.get("max_input_tokens"), info.get("max_tokens")
    if isinstance(window, int) and isinstance(output, int) and window > 0 and output > 0:
        return window, output
    return None

"""The Anthropic Messages API adapter: the SDK call, and its errors as the error tree.

The only module importing `anthropic` (lazily, inside functions). The wire
translation is `anthropic_wire.py` (pure); the shape of the call is
`sdk_client.SDKProvider`. The SDK's own retries are off: `providers.retry`
retries, including a stream that dies half way, which the SDK never retries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_cli.core.errors import ProviderError, StalledError, TransientError
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.anthropic_wire import StreamAssembler, ThinkingConfig, from_wire, to_wire
from agent_cli.providers.errors import body_message, classify_http
from agent_cli.providers.sdk_client import STALL_SECONDS, SDKProvider

__all__ = ["AnthropicProvider", "load_sdk", "query_limits"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


def load_sdk() -> None:
    """Import the SDK (about a second on a small machine); later imports are free."""
    import anthropic  # noqa: F401
    import httpx2  # noqa: F401


# -- errors -------------------------------------------------------------------


def _classify(exc: BaseException) -> ProviderError | None:
    """The error-tree member for an exception from the SDK or its transport, or None."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        # An SSE `error` event arrives on a 200 response: the body's type decides.
        status = exc.status_code if exc.status_code >= 400 else None
        message = body_message(exc.body, exc.api_message or "") or exc.api_message or ""
        return classify_http(status, message, exc.response.headers, code=exc.type, provider="anthropic")
    if isinstance(exc, anthropic.APITimeoutError):
        return StalledError("anthropic: the request timed out (no answer in time)")
    if isinstance(exc, anthropic.APIConnectionError):
        return TransientError(f"anthropic: connection failed: {exc.message}")
    if isinstance(exc, httpx2.TimeoutException):
        return StalledError("anthropic: the stream stalled (nothing received for a while)")
    if isinstance(exc, httpx2.RequestError):
        return TransientError(f"anthropic: connection lost mid-stream ({type(exc).__name__})")
    if isinstance(exc, json.JSONDecodeError):
        return TransientError("anthropic: the stream sent a malformed event")
    return None


# -- provider -----------------------------------------------------------------


class AnthropicProvider(SDKProvider):
    """`Provider` for the Anthropic Messages API (or anything serving it at `base_url`)."""

    name = "anthropic"

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
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout=timeout,
            streaming=streaming,
            stall=stall,
        )
        self.prompt_caching = prompt_caching
        self.thinking = thinking

    def _new_client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            timeout=self._timeouts(),
            max_retries=0,
            http_client=self._http_client(anthropic.DefaultHttpxClient),
        )

    def _to_wire(self, request: Request) -> dict[str, Any]:
        return to_wire(request, self._model, caching=self.prompt_caching, thinking=self.thinking)

    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        return (
            self._sdk().messages.create(**wire, stream=True)
            if stream
            else self._sdk().messages.create(**wire)
        )

    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        return from_wire(body, self._model)

    def _assembler(self) -> StreamAssembler:
        return StreamAssembler(self._model)

    @staticmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        return _classify(exc)


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

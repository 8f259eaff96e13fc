"""The SDK error ladder: an exception from either SDK, or the HTTP layer under it, as the error tree's member.

Both SDKs (`anthropic` 2.x, `openai` 3.x) are generated from one template: the same exception
classes under the same names, on the same transport (`httpx2`). So one ladder serves both, rung
by rung, most specific first:

    sdk.APIStatusError      an HTTP error status (or an SSE `error` event on a 200)  classify_http
    sdk.APITimeoutError     no answer in time                                      StalledError
    sdk.APIConnectionError  the connection failed                                  TransientError
    sdk.APIError            an error object inside a stream, no status             classify_http; a
                                                                                   fatal one retried
    httpx2.TimeoutException the stream stalled (a read timed out mid-stream)        StalledError
    httpx2.RequestError     the connection was lost mid-stream                     TransientError
    json.JSONDecodeError    a malformed stream event                               TransientError
    anything else           a bug, not a provider failure                          None (raised as is)

The ladder imports no SDK: the adapter that owns one (anthropic.py, openai.py) passes the module
in, with `detail`, how that SDK's error says what went wrong (its message and error code).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

from agent_cli.core.errors import FatalProviderError, ProviderError, StalledError, TransientError
from agent_cli.providers.errors import classify_http

__all__ = ["Detail", "classify_sdk_error"]

# (message, code) of one SDK error: the human part of its body and its error type or code.
Detail = Callable[[Any], tuple[str, str | None]]


def classify_sdk_error(
    exc: BaseException, sdk: ModuleType, *, provider: str, detail: Detail
) -> ProviderError | None:
    """The error-tree member for `exc`, raised by `sdk` or its transport, or None (see the table)."""
    import httpx2

    if isinstance(exc, sdk.APIStatusError):
        # An SSE `error` event arrives on a 200 response: the body's type decides.
        status = exc.status_code if exc.status_code >= 400 else None
        message, code = detail(exc)
        return classify_http(status, message, exc.response.headers, code=code, provider=provider)
    if isinstance(exc, sdk.APITimeoutError):
        return StalledError(f"{provider}: the request timed out (no answer in time)")
    if isinstance(exc, sdk.APIConnectionError):
        return TransientError(f"{provider}: connection failed: {exc.message}")
    if isinstance(exc, sdk.APIError):
        # An error object inside a stream (no HTTP status): retry unless it says overflow/auth.
        message, code = detail(exc)
        error = classify_http(None, message, {}, code=code, provider=provider)
        return TransientError(str(error)) if isinstance(error, FatalProviderError) else error
    if isinstance(exc, httpx2.TimeoutException):
        return StalledError(f"{provider}: the stream stalled (nothing received for a while)")
    if isinstance(exc, httpx2.RequestError):
        return TransientError(f"{provider}: connection lost mid-stream ({type(exc).__name__})")
    if isinstance(exc, json.JSONDecodeError):
        return TransientError(f"{provider}: the stream sent a malformed event")
    return None

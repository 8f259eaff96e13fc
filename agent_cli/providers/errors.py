"""Classify a failed provider request into the error tree, once, from plain values.

Both adapters reduce an SDK exception to `(status, message, headers, code)` and
call `classify_http`; nothing here imports an SDK, reads a clock by default or
does I/O, so the whole table is tested directly.

    status  code / text                                   -> error
    ------  --------------------------------------------  -------------------------
    413     (any)                                         ContextOverflowError
    any     an overflow phrase or `context_length_exceeded` ContextOverflowError
            (except 429 and 5xx: a gateway's "request too large" rate limit
            or outage is not an overflow)
    429     rate_limit_error / rate_limit_exceeded         RateLimitError (+ retry_after)
    529     overloaded_error                               OverloadedError
    5xx 408 409  api_error / server_error                  TransientError
    400     a thinking block bound elsewhere / bad signature ThinkingRejectedError
    401 403 authentication_error / permission_error        AuthError (names the env var)
    else                                                   FatalProviderError

`status` is None for an error that arrived inside a stream (an SSE `error`
event); the `code` (the body's error type or code) decides then.
"""

from __future__ import annotations

import email.utils
import re
import socket
import time
from collections.abc import Callable, Iterator, Mapping

from agent_cli.core.errors import (
    AuthError,
    ContextOverflowError,
    FatalProviderError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    ThinkingRejectedError,
    TransientError,
    UnreachableError,
)
from agent_cli.core.requests import StreamEvent
from agent_cli.providers.registry import PROVIDERS

__all__ = [
    "OVERFLOW_PHRASES",
    "body_message",
    "classify_http",
    "is_overflow",
    "one_line",
    "parse_overflow_counts",
    "parse_retry_after",
    "translate_errors",
    "unreachable",
]

# Lower-case substrings that mean "the prompt does not fit", from the real APIs
# and the compatible servers people run (vLLM, llama.cpp, Ollama, gateways).
OVERFLOW_PHRASES = (
    "prompt is too long",
    "maximum context",
    "context length",
    "context_length_exceeded",
    "context window",
    "too many tokens",
    "reduce the length",
    "request too large",
    "input length and `max_tokens` exceed",
    "input length and max_tokens exceed",
    "exceeds the available context size",
    "context size has been exceeded",
)

_OVERFLOW_CODES = frozenset(
    {"context_length_exceeded", "request_too_large", "string_above_max_length", "exceed_context_size_error"}
)
_RATE_CODES = frozenset({"rate_limit_error", "rate_limit_exceeded", "requests", "tokens"})
_OVERLOADED_CODES = frozenset({"overloaded_error"})
_TRANSIENT_CODES = frozenset({"api_error", "server_error", "timeout_error", "internal_server_error"})
_AUTH_CODES = frozenset({"authentication_error", "permission_error", "invalid_api_key"})

# Claude's answers to a thinking block that no longer matches its conversation (preserved thinking).
_THINKING_PHRASES = (
    "bound to a different conversation",
    "Invalid `signature` in `thinking` block",
    "blocks in the latest assistant message cannot be modified",
)

_MAX_MESSAGE = 300
_NUM = r"(\d[\d,]*)"
# Each pattern yields (tokens, limit); a None group means the text does not say.
_COUNT_PATTERNS: tuple[tuple[re.Pattern[str], int | None, int | None], ...] = (
    # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    (re.compile(_NUM + r"\s*tokens?\s*>\s*" + _NUM + r"\s*maximum"), 1, 2),
    # llama.cpp: "request (2031 tokens) exceeds the available context size (512 tokens)"
    (re.compile(r"request \(" + _NUM + r" tokens?\) exceeds the available context size \(" + _NUM), 1, 2),
    # Anthropic (older): "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
    (re.compile(_NUM + r"\s*\+\s*" + _NUM + r"\s*>\s*" + _NUM), 1, 3),
)
_LIMIT_PATTERNS = (
    re.compile(r"maximum context length is " + _NUM),
    re.compile(r"context (?:window|length|size)(?: of| is)? " + _NUM),
    re.compile(r"maximum of " + _NUM + r" tokens"),
)
_TOKENS_PATTERNS = (
    re.compile(r"resulted in " + _NUM + r" tokens"),
    re.compile(r"requested " + _NUM + r" tokens"),
    re.compile(r"prompt (?:has|contains|is) " + _NUM + r" tokens"),
)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def parse_overflow_counts(text: str) -> tuple[int | None, int | None]:
    """`(tokens, limit)` from an overflow error's text; None where the text does not say."""
    for pattern, tokens_group, limit_group in _COUNT_PATTERNS:
        found = pattern.search(text)
        if found:
            tokens = _int(found.group(tokens_group)) if tokens_group else None
            limit = _int(found.group(limit_group)) if limit_group else None
            return tokens, limit
    tokens = limit = None
    lowered = text.lower()
    for pattern in _LIMIT_PATTERNS:
        found = pattern.search(lowered)
        if found:
            limit = _int(found.group(1))
            break
    for pattern in _TOKENS_PATTERNS:
        found = pattern.search(lowered)
        if found:
            tokens = _int(found.group(1))
            break
    return tokens, limit


def is_overflow(status: int | None, message: str, code: str | None = None) -> bool:
    """Whether the error says the prompt did not fit the model's window."""
    if status == 413:
        return True
    if status is not None and (status == 429 or status >= 500):
        return False
    if code is not None and code.lower() in _OVERFLOW_CODES:
        return True
    lowered = message.lower()
    return any(phrase in lowered for phrase in OVERFLOW_PHRASES)


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date).

    `now` (epoch seconds) is only consulted for the HTTP-date form; it defaults
    to the wall clock so callers with a live response need not pass it.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def one_line(text: str, limit: int = _MAX_MESSAGE) -> str:
    """Whitespace collapsed and cut to `limit` characters, so errors print as one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def body_message(body: object, fallback: str = "") -> str:
    """The human part of an error body (`error.message`, `message`, `detail`), never the JSON dump."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            text = inner.get("message")
            if isinstance(text, str) and text:
                return text
        if isinstance(inner, str) and inner:
            return inner
        for key in ("message", "detail"):
            text = body.get(key)
            if isinstance(text, str) and text:
                return text
    if isinstance(body, str) and body and not body.lstrip().startswith(("{", "[")):
        return body
    return fallback


def classify_http(
    status: int | None,
    message: str,
    headers: Mapping[str, str],
    *,
    code: str | None = None,
    provider: str | None = None,
    now: float | None = None,
) -> ProviderError:
    """The error-tree member for one failed request. See the module table."""
    text = one_line(message) or "no error message"
    where = f"{provider} " if provider else ""
    label = f"HTTP {status}" if status is not None else "stream error"
    kind = (code or "").lower()

    if is_overflow(status, message, code):
        tokens, limit = parse_overflow_counts(message)
        return ContextOverflowError(
            f"{where}context overflow ({label}): {text}", status=status, tokens=tokens, limit=limit
        )
    if status == 429 or (status is None and kind in _RATE_CODES):
        retry_after = parse_retry_after(headers, now=now)
        return RateLimitError(
            f"{where}rate limited ({label}): {text}", status=status, retry_after=retry_after
        )
    if status == 529 or kind in _OVERLOADED_CODES:
        retry_after = parse_retry_after(headers, now=now)
        return OverloadedError(f"{where}overloaded ({label}): {text}", status=status, retry_after=retry_after)
    if (status is not None and (status >= 500 or status in (408, 409))) or (
        status is None and kind in _TRANSIENT_CODES
    ):
        retry_after = parse_retry_after(headers, now=now)
        return TransientError(
            f"{where}server error ({label}): {text}", status=status, retry_after=retry_after
        )
    if status == 400 and any(phrase in message for phrase in _THINKING_PHRASES):
        return ThinkingRejectedError(f"{where}thinking block refused ({label}): {text}", status=status)
    if status in (401, 403) or (status is None and kind in _AUTH_CODES):
        entry = PROVIDERS.get(provider or "")
        env = entry.api_key_env if entry is not None else "the API key variable"
        return AuthError(
            f"{where}authentication failed ({label}): {text}; check {env} or provider.api_key",
            status=status,
        )
    return FatalProviderError(f"{where}request failed ({label}): {text}", status=status)


def translate_errors(
    events: Iterator[StreamEvent], classify: Callable[[BaseException], ProviderError | None]
) -> Iterator[StreamEvent]:
    """`events`, with SDK and transport exceptions raised as the error tree's members.

    Exceptions `classify` does not know (bugs, not provider failures) go up unchanged.
    """
    try:
        yield from events
    except ProviderError:
        raise
    except Exception as exc:
        error = classify(exc)
        if error is None:
            raise
        raise error from exc


def unreachable(provider: str, base_url: str, exc: BaseException) -> UnreachableError | None:
    """An UnreachableError when what `exc` was caused by says nothing answers at `base_url`
    (connection refused, no such host, the connect timed out), else None."""
    cause: BaseException | None = exc
    for _ in range(10):
        if cause is None:
            return None
        reason = _why_unreachable(cause)
        if reason:
            return UnreachableError(
                f"{provider}: cannot connect to {base_url} ({reason}); check the base URL and that the "
                "server is running"
            )
        cause = cause.__cause__ or cause.__context__
    return None


def _why_unreachable(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "no such host"
    if type(exc).__name__ == "ConnectTimeout":
        return "the connection timed out"
    return ""

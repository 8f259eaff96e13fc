"""The error table: every overflow phrase, status, retry-after form and count parse."""

from __future__ import annotations

import email.utils

import pytest

from agent_cli.core.errors import (
    AuthError,
    ContextOverflowError,
    FatalProviderError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    TransientError,
)
from agent_cli.providers.errors import (
    body_message,
    classify_http,
    one_line,
    parse_overflow_counts,
    parse_retry_after,
)

OVERFLOWS = [
    (400, "prompt is too long: 208310 tokens > 200000 maximum", None, 208310, 200000),
    (
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 "
        "tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
        130000,
        128000,
    ),
    (400, "Invalid request", "context_length_exceeded", None, None),
    (413, "Request Entity Too Large", None, None, None),
    (400, "exceeds maximum context for this model", None, None, None),
    (400, "input exceeds the model's context length", None, None, None),
    (400, "too many tokens in the request", None, None, None),
    (400, "please reduce the length of the prompt", None, None, None),
    (400, "request too large for this model", None, None, None),
    (
        400,
        "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length",
        None,
        197000,
        200000,
    ),
    (
        400,
        "request (2031 tokens) exceeds the available context size (512 tokens), try increasing it",
        "exceed_context_size_error",
        2031,
        512,
    ),
    (
        400,
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion).",
        None,
        5000,
        4096,
    ),
    (None, "prompt is too long: 1,200 tokens > 1,000 maximum", None, 1200, 1000),
]


@pytest.mark.parametrize(("status", "message", "code", "tokens", "limit"), OVERFLOWS)
def test_overflow_is_recognised_with_counts(
    status: int | None, message: str, code: str | None, tokens: int | None, limit: int | None
) -> None:
    error = classify_http(status, message, {}, code=code, provider="anthropic")
    assert type(error) is ContextOverflowError
    assert (error.tokens, error.limit) == (tokens, limit)
    assert not error.retryable
    assert error.status == status


@pytest.mark.parametrize(
    ("status", "message", "code", "expected"),
    [
        (429, "Rate limit exceeded", "rate_limit_error", RateLimitError),
        (429, "Request too large for gpt-4o on tokens per min (TPM)", "rate_limit_exceeded", RateLimitError),
        (529, "Overloaded", "overloaded_error", OverloadedError),
        (None, "Overloaded", "overloaded_error", OverloadedError),
        (500, "Internal server error", "api_error", TransientError),
        (502, "Bad gateway", None, TransientError),
        (503, "maximum context length service unavailable", None, TransientError),
        (408, "Request timeout", None, TransientError),
        (409, "Conflict", None, TransientError),
        (None, "Internal error", "api_error", TransientError),
        (401, "invalid x-api-key", "authentication_error", AuthError),
        (403, "permission denied", "permission_error", AuthError),
        (400, "messages.0: unexpected `tool_use_id`", "invalid_request_error", FatalProviderError),
        (404, "model not found", "not_found_error", FatalProviderError),
        (422, "unprocessable", None, FatalProviderError),
        (None, "something odd", None, FatalProviderError),
    ],
)
def test_status_and_code_pick_the_class(
    status: int | None, message: str, code: str | None, expected: type[ProviderError]
) -> None:
    error = classify_http(status, message, {}, code=code, provider="openai")
    assert type(error) is expected
    assert error.retryable == (expected in (RateLimitError, OverloadedError, TransientError))


@pytest.mark.parametrize(
    ("provider", "env"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
def test_auth_error_names_the_env_var(provider: str, env: str) -> None:
    error = classify_http(401, "invalid x-api-key", {}, provider=provider)
    assert env in str(error)


NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "junk", "retry-after": "9"}, 9.0),
        ({"retry-after": email.utils.formatdate(NOW + 30, usegmt=True)}, 30.0),
        ({"retry-after": email.utils.formatdate(NOW - 30, usegmt=True)}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected
    error = classify_http(429, "slow down", headers, now=NOW)
    assert isinstance(error, RateLimitError)
    assert error.retry_after == expected


def test_overloaded_keeps_retry_after() -> None:
    error = classify_http(529, "Overloaded", {"retry-after": "3"})
    assert isinstance(error, OverloadedError)
    assert error.retry_after == 3.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("prompt is too long: 208310 tokens > 200000 maximum", (208310, 200000)),
        ("This model's maximum context length is 8192 tokens.", (None, 8192)),
        ("your messages resulted in 9000 tokens", (9000, None)),
        ("nothing here", (None, None)),
    ],
)
def test_parse_overflow_counts(text: str, expected: tuple[int | None, int | None]) -> None:
    assert parse_overflow_counts(text) == expected


def test_messages_are_one_readable_line() -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": "boom\n  with\tdetails"}}
    message = body_message(body, "Error code: 500 - {'type': 'error', ...}")
    error = classify_http(500, message, {}, provider="anthropic")
    assert str(error) == "anthropic server error (HTTP 500): boom with details"
    long = classify_http(400, "x" * 5000, {})
    assert "\n" not in str(long) and len(str(long)) < 400


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"error": {"message": "inner"}}, "inner"),
        ({"error": "flat"}, "flat"),
        ({"message": "top"}, "top"),
        ({"detail": "fastapi"}, "fastapi"),
        ("plain text body", "plain text body"),
        ('{"not": "parsed"}', "fallback"),
        (None, "fallback"),
    ],
)
def test_body_message(body: object, expected: str) -> None:
    assert body_message(body, "fallback") == expected


def test_one_line_cuts() -> None:
    assert one_line("a\n\nb", 10) == "a b"
    assert one_line("abcdefghijkl", 5) == "abcd…"

"""The error table: every overflow phrase, status, retry-after form and count parse."""

from __future__ import annotations

import email.utils
import json
import typing
from typing import Any

import pytest

from agent_cli.core.errors import (
    AuthError,
    ContextOverflowError,
    FatalProviderError,
    OverloadedError,
    ProviderError,
    ProviderErrorKind,
    RateLimitError,
    StalledError,
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


# -- the SDK error ladder, shared by the adapters --------------------------------------------------


def _sdk_errors(sdk: Any) -> list[tuple[BaseException, type[ProviderError] | None]]:
    """One real exception of each rung, as `sdk` raises it, and the member it must become."""
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/x")

    def status(code: int, kind: str, message: str) -> BaseException:
        body = {"type": "error", "error": {"type": kind, "message": message}}
        response = httpx2.Response(code, request=request, json=body)
        return sdk.APIStatusError(f"Error code: {code}", response=response, body=body)

    return [
        (status(429, "rate_limit_error", "slow down"), RateLimitError),
        (status(529, "overloaded_error", "Overloaded"), OverloadedError),
        (status(500, "api_error", "boom"), TransientError),
        (status(401, "authentication_error", "invalid x-api-key"), AuthError),
        (
            status(400, "invalid_request_error", "prompt is too long: 9 tokens > 5 maximum"),
            ContextOverflowError,
        ),
        (status(400, "invalid_request_error", "messages: bad"), FatalProviderError),
        (sdk.APITimeoutError(request=request), StalledError),
        (sdk.APIConnectionError(request=request), TransientError),
        (sdk.APIError("stream error", request, body={"message": "stream error"}), TransientError),
        (httpx2.ReadTimeout("read timed out", request=request), StalledError),
        (httpx2.RemoteProtocolError("peer closed connection", request=request), TransientError),
        (json.JSONDecodeError("Expecting value", "{", 1), TransientError),
        (ValueError("a bug, not a provider failure"), None),
    ]


def _adapters() -> list[tuple[str, Any, Any]]:
    import anthropic
    import openai

    from agent_cli.providers import anthropic as anthropic_adapter
    from agent_cli.providers import openai as openai_adapter

    return [
        ("anthropic", anthropic, anthropic_adapter.classify),
        ("openai", openai, openai_adapter.classify),
    ]


@pytest.mark.parametrize("adapter", [0, 1], ids=["anthropic", "openai"])
def test_the_sdk_ladder_maps_each_exception_the_same_for_both_adapters(adapter: int) -> None:
    name, sdk, classify = _adapters()[adapter]
    for exc, expected in _sdk_errors(sdk):
        error = classify(exc)
        assert (type(error) if error is not None else None) is expected, (name, type(exc).__name__)
        if error is not None:
            assert str(error).startswith(name), str(error)
    # The same rung for the same class name, whichever SDK raised it.
    kinds = {n: [type(classify(e)) for e, _ in _sdk_errors(sdk)] for n, sdk, classify in _adapters()}
    assert kinds["anthropic"] == kinds["openai"]


def test_an_sse_error_event_on_a_200_is_classified_by_its_type() -> None:
    import anthropic
    import httpx2

    from agent_cli.providers import anthropic as anthropic_adapter

    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/messages")
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    exc = anthropic.APIStatusError("x", response=httpx2.Response(200, request=request, json=body), body=body)
    error = anthropic_adapter.classify(exc)
    assert isinstance(error, OverloadedError) and error.status is None


def _subclasses(cls: type[ProviderError]) -> list[type[ProviderError]]:
    return [cls] + [s for sub in cls.__subclasses__() for s in _subclasses(sub)]


def test_every_provider_error_has_a_kind_from_the_fixed_set() -> None:
    classes = _subclasses(ProviderError)
    # The kind is the class's name: what the loop's ErrorEvent has always said.
    assert all(cls.kind == cls.__name__ for cls in classes)
    assert {cls.kind for cls in classes} == set(typing.get_args(ProviderErrorKind))


def _drawn_tree(doc: str) -> dict[str, str]:
    """class -> the class it is drawn under, read from a docstring's drawn tree (`├──`, `└──`)."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        words = line.split()
        name = next((w for w in words if w.isidentifier()), None)
        if name is None or not name.endswith("Error"):
            continue
        column = line.index(name)
        while stack and stack[-1][0] >= column:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((column, name))
    return parents


def test_drawn_tree_reader() -> None:
    doc = "  AError  base\n  ├── BError   b\n  │   └── CError  c\n  └── DError  d\n"
    assert _drawn_tree(doc) == {"BError": "AError", "CError": "BError", "DError": "AError"}


def test_the_drawn_error_tree_is_the_class_tree() -> None:
    """core/errors.py's docstring draws every error class under its own base."""
    from agent_cli.core import errors

    classes = {
        name: cls
        for name, cls in vars(errors).items()
        if isinstance(cls, type) and issubclass(cls, errors.AgentError) and cls is not errors.AgentError
    }
    assert _drawn_tree(errors.__doc__ or "") == {name: cls.__base__.__name__ for name, cls in classes.items()}

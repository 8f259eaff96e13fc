"""The three wires through the real SDKs against llmock, an independent third-party fake of the APIs.

Anthropic Messages, OpenAI Chat Completions and the OpenAI Responses API (`/v1/responses`).

llmock is scripted per test through its pytest fixture; tool mode is off so an
unscripted request can never invent a tool call.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.core.errors import (
    AuthError,
    ContextOverflowError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    TransientError,
)
from agent_cli.core.messages import Message, ToolResult
from agent_cli.core.requests import Completion, Request, TextDelta, ToolSpec
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.base import Provider
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.openai_responses import OpenAIResponsesProvider
from agent_cli.providers.responses_wire import ReasoningConfig
from agent_cli.providers.retry import RetryPolicy, stream_with_retry
from agent_cli.providers.sdk_client import SDKProvider

TOOLS = (
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
)
REQUEST = Request("You are terse.", (Message.user("What is in a.py?"),), TOOLS, max_tokens=256)
CASES = [(api, streaming) for api in ("anthropic", "openai", "responses") for streaming in (True, False)]
IDS = [f"{api}-{'stream' if s else 'whole'}" for api, s in CASES]


@pytest.fixture
def mock(llmock: Any) -> Any:
    return llmock.tool_mode("off")


def make(mock: Any, api: str, streaming: bool) -> SDKProvider:
    if api == "anthropic":
        return AnthropicProvider(
            "claude-sonnet-4-6", api_key="test", base_url=mock.base_url("anthropic"), streaming=streaming
        )
    if api == "responses":
        return OpenAIResponsesProvider(
            "gpt-6.2-sol",
            api_key="test",
            base_url=mock.base_url("openai"),
            streaming=streaming,
            reasoning=ReasoningConfig("high"),
        )
    return OpenAIProvider("gpt-4.1", api_key="test", base_url=mock.base_url("openai"), streaming=streaming)


@pytest.fixture(params=CASES, ids=IDS)
def provider(request: pytest.FixtureRequest, mock: Any) -> SDKProvider:
    return make(mock, *request.param)


@pytest.fixture(params=["anthropic", "openai", "responses"])
def streamer(request: pytest.FixtureRequest, mock: Any) -> SDKProvider:
    return make(mock, request.param, True)


def complete(provider: Provider, request: Request = REQUEST) -> tuple[str, Completion]:
    events = list(provider.stream(request))
    completions = [e for e in events if isinstance(e, Completion)]
    assert len(completions) == 1 and events[-1] is completions[0]
    return "".join(e.text for e in events if isinstance(e, TextDelta)), completions[0]


def test_text_reply_and_usage(provider: SDKProvider, mock: Any) -> None:
    mock.reply("The file defines one function.")
    shown, done = complete(provider)
    assert done.message.text == "The file defines one function."
    assert done.stop_reason == "end_turn"
    assert shown == (done.message.text if provider.streaming else "")
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    assert mock.last_request.stream == provider.streaming


def test_tool_call_round_trip(provider: SDKProvider, mock: Any) -> None:
    mock.call_tool("read_file", {"path": "a.py"}).reply("It defines main().")
    _, first = complete(provider)
    assert first.stop_reason == "tool_use"
    (call,) = first.message.tool_uses
    assert (call.name, dict(call.input)) == ("read_file", {"path": "a.py"})
    follow = Request(
        REQUEST.system,
        (*REQUEST.messages, first.message, Message.of("user", [ToolResult(call.id, "def main()")])),
        TOOLS,
    )
    _, second = complete(provider, follow)
    assert second.message.text == "It defines main()."
    body = mock.last_request.body
    assert call.id in str(body.get("messages") or body["input"])


@pytest.mark.parametrize(
    ("status", "options", "expected"),
    [
        (429, {"retry_after": 2}, RateLimitError),
        (529, {}, OverloadedError),
        (500, {}, TransientError),
        (502, {}, TransientError),
        (401, {}, AuthError),
    ],
)
def test_http_errors(
    provider: Provider, mock: Any, status: int, options: dict[str, Any], expected: type[ProviderError]
) -> None:
    mock.fail(status, **options)
    with pytest.raises(expected) as raised:
        list(provider.stream(REQUEST))
    assert type(raised.value) is expected
    if status == 429:
        assert raised.value.retry_after == 2.0
    assert "\n" not in str(raised.value)


def test_503_is_retryable(provider: Provider, mock: Any) -> None:
    # llmock labels an Anthropic 503 `overloaded_error`; the body's type wins, either way it is retried.
    mock.fail(503)
    with pytest.raises((TransientError, OverloadedError)) as raised:
        list(provider.stream(REQUEST))
    assert raised.value.retryable


def test_overflow_from_the_context_window(provider: Provider, mock: Any) -> None:
    mock.limits(context_window=100)
    big = Request("s", (Message.user("word " * 400),), TOOLS)
    with pytest.raises(ContextOverflowError) as raised:
        list(provider.stream(big))
    assert raised.value.limit == 100
    assert raised.value.tokens is not None and raised.value.tokens > 100


def test_anthropic_overflow_text(mock: Any) -> None:
    mock.fail(400, message="prompt is too long: 208310 tokens > 200000 maximum")
    with pytest.raises(ContextOverflowError) as raised:
        list(make(mock, "anthropic", True).stream(REQUEST))
    assert (raised.value.tokens, raised.value.limit) == (208310, 200000)


def test_openai_overflow_code(mock: Any) -> None:
    mock.context_overflow()
    with pytest.raises(ContextOverflowError):
        list(make(mock, "openai", True).stream(REQUEST))


@pytest.mark.parametrize("streaming", [True, False])
def test_responses_overflow_text(mock: Any, streaming: bool) -> None:
    text = "Your input exceeds the context window of this model. Please adjust your input and try again."
    mock.fail(400, code="context_length_exceeded", message=text)
    with pytest.raises(ContextOverflowError) as raised:
        list(make(mock, "responses", streaming).stream(REQUEST))
    assert "exceeds the context window" in str(raised.value)


def test_responses_request_is_stateless_with_encrypted_reasoning(mock: Any) -> None:
    mock.reply("ok")
    complete(make(mock, "responses", True))
    body = mock.last_request.body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["instructions"] == "You are terse."
    assert body["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": "Read a file",
        "parameters": dict(TOOLS[0].input_schema),
        "strict": False,
    }


@pytest.mark.parametrize("fault", ["disconnect", "truncate", "corrupt"])
def test_broken_streams_are_transient_and_keep_nothing(streamer: Provider, mock: Any, fault: str) -> None:
    mock.reply("A long answer that will not arrive in one piece, sadly.")
    getattr(mock, fault)(after_chunks=3)  # past the ping, which the Anthropic SDK skips unread
    seen: list[object] = []
    with pytest.raises(TransientError):
        for event in streamer.stream(REQUEST):
            seen.append(event)
    assert not any(isinstance(e, Completion) for e in seen)


def test_stalled_stream_times_out_as_transient(mock: Any) -> None:
    mock.reply("slow").stall(after_chunks=1, seconds=5)
    provider = OpenAIProvider("gpt-4.1", api_key="test", base_url=mock.base_url("openai"), timeout=0.5)
    with pytest.raises(TransientError):
        list(provider.stream(REQUEST))


def test_retries_survive_four_faults_in_a_row(streamer: Provider, mock: Any) -> None:
    mock.rate_limit(retry_after=0.01).fail(529).fail(500)
    # A reply and a stream fault land on the same request: the dropped one consumes the first reply.
    mock.reply("This one is cut off half way.").disconnect(after_chunks=3)
    mock.reply("Survived.")
    slept: list[float] = []
    events = list(stream_with_retry(streamer, REQUEST, policy=RetryPolicy(6, 0.0, 0.0), sleep=slept.append))
    done = events[-1]
    assert isinstance(done, Completion) and done.message.text == "Survived."
    assert sum(isinstance(e, Completion) for e in events) == 1
    assert len(slept) == 4
    assert len(mock.requests) == 5

"""Both adapters through the real SDKs over HTTP against agent_cli/testing/fakeserver/, plus pure wire
translation."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import (
    AuthError,
    ConfigError,
    ContextOverflowError,
    FatalProviderError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    TransientError,
)
from agent_cli.core.events import RetryEvent
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse, tool_arguments
from agent_cli.core.requests import Completion, Request, RequestOptions, TextDelta, ToolSpec
from agent_cli.providers import anthropic as anthropic_adapter
from agent_cli.providers import chat_wire
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.base import Provider
from agent_cli.providers.factory import create_provider
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.registry import ANTHROPIC, OPENAI
from agent_cli.providers.resolve import resolve_model
from agent_cli.providers.retry import RetryPolicy, stream_with_retry
from agent_cli.testing.fakeserver import (
    Drop,
    FakeModelServer,
    Fault,
    RecordedRequest,
    Reply,
    ScriptItem,
    StreamError,
    ToolCallSpec,
    Truncate,
    load_script,
)

# The SDK warns that the default model is deprecated; the factory test uses it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

TOOLS = (
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
)
REQUEST = Request("You are terse.", (Message.user("What is in a.py?"),), TOOLS, max_tokens=256)
FAST = RetryPolicy(max_retries=6, base_delay=0.0, max_delay=0.0)


CASES = [("anthropic", True), ("anthropic", False), ("openai", True), ("openai", False)]


@pytest.fixture(params=CASES, ids=[f"{api}-{'stream' if s else 'whole'}" for api, s in CASES])
def provider(
    request: pytest.FixtureRequest, fake_server: FakeModelServer
) -> AnthropicProvider | OpenAIProvider:
    api, streaming = request.param
    if api == "anthropic":
        return AnthropicProvider(
            "claude-sonnet-4-6", api_key="k", base_url=fake_server.anthropic_base_url, streaming=streaming
        )
    return OpenAIProvider("gpt-4.1", api_key="k", base_url=fake_server.openai_base_url, streaming=streaming)


def completion_of(provider: Provider, request: Request = REQUEST) -> tuple[list[TextDelta], Completion]:
    events = list(provider.stream(request))
    assert isinstance(events[-1], Completion)
    assert sum(isinstance(e, Completion) for e in events) == 1
    return [e for e in events if isinstance(e, TextDelta)], events[-1]


# -- over HTTP -------------------------------------------------------------------------------------


def test_text_reply(provider: AnthropicProvider | OpenAIProvider, fake_server: FakeModelServer) -> None:
    fake_server.queue(Reply("Just a docstring and one function."))
    deltas, done = completion_of(provider)
    assert done.message.text == "Just a docstring and one function."
    assert done.stop_reason == "end_turn"
    streaming = provider.streaming
    assert ("".join(d.text for d in deltas) == done.message.text) if streaming else deltas == []
    assert len(deltas) > 1 or not streaming
    recorded = fake_server.last_request
    assert recorded.body["model"] == provider.model
    assert bool(recorded.body.get("stream")) == streaming
    assert done.usage.prompt_tokens == recorded.input_tokens > 0
    assert done.usage.output_tokens > 0
    assert "authorization" not in recorded.headers and "x-api-key" not in recorded.headers


def test_tool_call_round_trip(provider: Provider, fake_server: FakeModelServer) -> None:
    fake_server.queue(
        Reply("Let me look.", tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})]),
        Reply("It defines main()."),
    )
    _, first = completion_of(provider)
    assert first.stop_reason == "tool_use"
    (call,) = first.message.tool_uses
    assert (call.name, dict(call.input)) == ("read_file", {"path": "a.py"})
    assert first.message.text == "Let me look."
    follow_up = Request(
        REQUEST.system,
        (*REQUEST.messages, first.message, Message.of("user", [ToolResult(call.id, "def main(): ...")])),
        TOOLS,
    )
    _, second = completion_of(provider, follow_up)
    assert second.message.text == "It defines main()."
    body = fake_server.last_request.body
    if fake_server.last_request.api == "anthropic":
        assert body["messages"][1]["content"][1]["id"] == call.id
        assert body["messages"][2]["content"][0]["tool_use_id"] == call.id
    else:
        assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.py"}'
        assert body["messages"][3] == {"role": "tool", "tool_call_id": call.id, "content": "def main(): ..."}


def test_several_tool_calls_keep_their_order(provider: Provider, fake_server: FakeModelServer) -> None:
    calls = [ToolCallSpec("read_file", {"path": f"{n}.py", "long": "x" * 40}) for n in range(3)]
    fake_server.queue(Reply(tool_calls=calls))
    _, done = completion_of(provider)
    assert [u.input["path"] for u in done.message.tool_uses] == ["0.py", "1.py", "2.py"]
    assert done.message.text == ""


@pytest.mark.parametrize(
    ("fault", "expected", "retry_after"),
    [
        (Fault(429, headers={"retry-after": "3"}), RateLimitError, 3.0),
        (Fault(429, headers={"retry-after-ms": "1500"}), RateLimitError, 1.5),
        (Fault(529), OverloadedError, None),
        (Fault(500), TransientError, None),
        (Fault(503), TransientError, None),
        (Fault(401), AuthError, None),
        (Fault(400, "messages: something else is wrong"), FatalProviderError, None),
    ],
)
def test_http_errors_are_classified(
    provider: Provider,
    fake_server: FakeModelServer,
    fault: Fault,
    expected: type[ProviderError],
    retry_after: float | None,
) -> None:
    fake_server.queue(fault)
    with pytest.raises(expected) as raised:
        list(provider.stream(REQUEST))
    assert type(raised.value) is expected
    assert raised.value.retry_after == retry_after
    assert "\n" not in str(raised.value) and "{" not in str(raised.value)


def test_overflow_from_the_context_window(provider: Provider, fake_server: FakeModelServer) -> None:
    fake_server.context_window = 50
    fake_server.queue(Reply("never sent"))
    big = Request("s", (Message.user("word " * 200),), TOOLS)
    with pytest.raises(ContextOverflowError) as raised:
        list(provider.stream(big))
    assert raised.value.limit == 50
    assert raised.value.tokens == fake_server.last_request.input_tokens > 50
    assert fake_server.pending == 1  # an overflow does not consume the script


@pytest.mark.parametrize(
    "fault", [Drop(), Drop(after_events=1), Truncate()], ids=["drop", "drop-early", "truncate"]
)
def test_broken_streams_raise_transient_and_keep_nothing(
    provider: Provider, fake_server: FakeModelServer, fault: ScriptItem
) -> None:
    fake_server.queue(fault)
    seen: list[object] = []
    with pytest.raises(TransientError):
        for event in provider.stream(REQUEST):
            seen.append(event)
    assert not any(isinstance(e, Completion) for e in seen)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (StreamError("overloaded_error", "Overloaded"), OverloadedError),
        (StreamError("api_error", "boom"), TransientError),
    ],
)
def test_error_events_inside_a_stream_are_retryable(
    provider: Provider, fake_server: FakeModelServer, fault: StreamError, expected: type[ProviderError]
) -> None:
    fake_server.queue(fault)
    with pytest.raises(expected) as raised:
        list(provider.stream(REQUEST))
    assert raised.value.retryable


def test_retries_survive_429_529_500_drop_truncate_in_a_row(
    provider: Provider, fake_server: FakeModelServer
) -> None:
    fake_server.queue(
        Fault(429, headers={"retry-after": "0"}),
        Fault(529),
        Fault(500),
        Drop(),
        Truncate(),
        Reply("Finally, the whole answer."),
    )
    slept: list[float] = []
    items = list(stream_with_retry(provider, REQUEST, policy=FAST, sleep=slept.append))
    retries = [e for e in items if isinstance(e, RetryEvent)]
    events = [e for e in items if not isinstance(e, RetryEvent)]
    completions = [e for e in events if isinstance(e, Completion)]
    assert len(completions) == 1 and events[-1] is completions[0]
    assert completions[0].message.text == "Finally, the whole answer."
    assert [r.attempt for r in retries] == [1, 2, 3, 4, 5]
    assert len(fake_server.requests) == 6


def test_retries_exhausted_raise_the_last_error(provider: Provider, fake_server: FakeModelServer) -> None:
    fake_server.queue(*[Fault(529)] * 3)
    with pytest.raises(OverloadedError):
        list(stream_with_retry(provider, REQUEST, policy=RetryPolicy(2, 0.0, 0.0), sleep=lambda _: None))
    assert len(fake_server.requests) == 3


def test_server_rejects_unpaired_tool_calls_like_the_real_apis(
    provider: Provider, fake_server: FakeModelServer
) -> None:
    orphan = Request("s", (Message.user("hi"), Message.of("user", [ToolResult("toolu_gone", "x")])))
    dangling = Request("s", (Message.user("hi"), Message.of("assistant", [ToolUse("t1", "read_file", {})])))
    for request, needle in ((orphan, "toolu_gone"), (dangling, "t1")):
        fake_server.queue(Reply("unused"))
        with pytest.raises(FatalProviderError) as raised:
            list(provider.stream(request))
        # OpenAI's real orphan message names no id; Anthropic's always does.
        assert needle in str(raised.value) or "role 'tool' must be a response" in str(raised.value)
    assert fake_server.pending == 2


def test_responder_answers_when_the_queue_is_empty(provider: Provider, fake_server: FakeModelServer) -> None:
    seen: list[RecordedRequest] = []

    def respond(recorded: RecordedRequest) -> Reply:
        seen.append(recorded)
        return Reply(f"request {len(seen)}")

    fake_server.responder = respond
    assert completion_of(provider)[1].message.text == "request 1"
    assert completion_of(provider)[1].message.text == "request 2"
    assert seen[0].api == fake_server.last_request.api


# -- Anthropic specifics ---------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [True, False])
def test_anthropic_usage_reports_cache_reads_and_writes(
    fake_server: FakeModelServer, streaming: bool
) -> None:
    provider = AnthropicProvider(
        "claude-sonnet-4-6", api_key="k", base_url=fake_server.anthropic_base_url, streaming=streaming
    )
    system = "You are a careful coding agent. " * 40
    fake_server.queue(Reply("first"), Reply("second"))
    first = Request(system, (Message.user("one"),), TOOLS)
    _, done1 = completion_of(provider, first)
    assert done1.usage.cache_read_tokens == 0 and done1.usage.cache_write_tokens > 300
    second = Request(system, (*first.messages, done1.message, Message.user("two")), TOOLS)
    _, done2 = completion_of(provider, second)
    assert done2.usage.cache_read_tokens == done1.usage.prompt_tokens
    assert done2.usage.cache_write_tokens > 0
    assert done2.usage.prompt_tokens == fake_server.last_request.input_tokens


def _cleared_twice(provider: AnthropicProvider, system: str, *, anchored: bool) -> tuple[int, int]:
    """Two requests around an L1-style clear of the oldest result: the second's (cache read, write)."""
    body = "def handler(value):\n    return value * 2  # a line of the file\n" * 60
    history = [Message.user("Read the three files. The task, in detail: " + "explain each handler. " * 100)]
    for n in (1, 2, 3):
        use = ToolUse(f"c{n}", "read_file", {"path": f"m{n}.py"})
        history += [
            Message.of("assistant", [ToolUse(use.id, use.name, use.input)]),
            Message.of("user", [ToolResult(use.id, body)]),
        ]
    history.append(Message.user("now explain them"))
    first = Request(
        system, tuple(history), TOOLS, options=RequestOptions(cache_anchor=1 if anchored else None)
    )
    completion_of(provider, first)
    stub = Message.of("user", [ToolResult("c1", "[cleared to save context: read_file m1.py]")])
    cleared = (*history[:2], stub, *history[3:])
    second = Request(system, cleared, TOOLS, options=RequestOptions(cache_anchor=3 if anchored else None))
    _, done = completion_of(provider, second)
    return done.usage.cache_read_tokens, done.usage.cache_write_tokens


def test_anthropic_a_clear_reads_back_the_prefix_the_engine_anchored(fake_server: FakeModelServer) -> None:
    provider = AnthropicProvider("claude-sonnet-4-6", api_key="k", base_url=fake_server.anthropic_base_url)
    fake_server.queue(Reply("one"), Reply("two"), Reply("three"), Reply("four"))
    read, write = _cleared_twice(provider, "Agent A. " * 80, anchored=True)
    plain_read, plain_write = _cleared_twice(provider, "Agent B. " * 80, anchored=False)
    # Without the mark only the system and tools are read back: every message is written again.
    task = fake_server.counter("Read the three files. The task, in detail: " + "explain each handler. " * 100)
    assert read - plain_read >= task and plain_write - write >= task
    assert json.dumps(fake_server.last_request.body).count("cache_control") == 3  # unanchored: no 4th mark


def test_anthropic_without_caching_sends_no_breakpoints(fake_server: FakeModelServer) -> None:
    provider = AnthropicProvider(
        "m", api_key="k", base_url=fake_server.anthropic_base_url, prompt_caching=False
    )
    fake_server.queue(Reply("a"))
    _, done = completion_of(provider)
    assert "cache_control" not in json.dumps(fake_server.last_request.body)
    assert done.usage.cache_read_tokens == done.usage.cache_write_tokens == 0


# -- OpenAI specifics ------------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [True, False])
def test_openai_invalid_tool_arguments_become_raw(fake_server: FakeModelServer, streaming: bool) -> None:
    provider = OpenAIProvider(
        "gpt-4.1", api_key="k", base_url=fake_server.openai_base_url, streaming=streaming
    )
    fake_server.queue(Reply(tool_calls=[ToolCallSpec("read_file", raw_arguments='{"path": "a.py"')]))
    _, done = completion_of(provider)
    (call,) = done.message.tool_uses
    assert dict(call.input) == {"_raw": '{"path": "a.py"'}
    assert done.stop_reason == "tool_use"


def test_openai_usage_subtracts_cached_tokens(fake_server: FakeModelServer) -> None:
    provider = OpenAIProvider("gpt-4.1", api_key="k", base_url=fake_server.openai_base_url)
    fake_server.queue(Reply("hi", usage={"input_tokens": 100, "cache_read_tokens": 900, "output_tokens": 5}))
    _, done = completion_of(provider)
    assert (done.usage.input_tokens, done.usage.cache_read_tokens, done.usage.output_tokens) == (100, 900, 5)


def test_openai_max_tokens_parameter_is_the_wires(fake_server: FakeModelServer) -> None:
    compatible = chat_wire.to_wire(REQUEST, "m", wire="chat-compatible")
    assert compatible["max_tokens"] == 256 and "max_completion_tokens" not in compatible
    official = chat_wire.to_wire(REQUEST, "m", wire="chat")
    assert official["max_completion_tokens"] == 256 and "max_tokens" not in official
    provider = OpenAIProvider("gpt-4.1", api_key="k", base_url=fake_server.openai_base_url)
    assert provider.wire == "chat-compatible"  # built directly at a base URL: a compatible fake_server
    fake_server.queue(Reply("x"))
    completion_of(provider)
    assert fake_server.last_request.body["max_tokens"] == 256
    assert fake_server.last_request.body["stream_options"] == {"include_usage": True}
    assert OpenAIProvider("gpt-4.1", api_key="k").wire == "chat"


@pytest.mark.parametrize(
    ("wire", "field", "other"),
    [
        ("chat", "max_completion_tokens", "max_tokens"),
        ("chat-compatible", "max_tokens", "max_completion_tokens"),
    ],
)
def test_the_wire_not_the_base_url_decides_the_output_cap_field(
    fake_server: FakeModelServer, wire: str, field: str, other: str
) -> None:
    # Both at the same base URL: the wire the factory resolved is what the request follows.
    provider = OpenAIProvider("gpt-4.1", api_key="k", base_url=fake_server.openai_base_url, wire=wire)  # type: ignore[arg-type]
    fake_server.queue(Reply("x"))
    completion_of(provider)
    assert fake_server.last_request.body[field] == 256 and other not in fake_server.last_request.body


# -- pure wire translation --------------------------------------------------------------------------


CONVERSATION = (
    Message.of("user", [SummaryBlock("Earlier we fixed the parser.", "t.jsonl")]),
    Message.assistant("Understood."),
    Message.user("Now read a.py"),
    Message.user(""),
    Message.of("assistant", [TextBlock("Reading."), ToolUse("c1", "read_file", {"path": "a.py"})]),
    Message.of("user", [ToolResult("c1", "no such file", is_error=True)]),
    Message.user("Then stop."),
)


def test_anthropic_to_wire() -> None:
    request = Request("sys", CONVERSATION, TOOLS, max_tokens=99, options=RequestOptions(tool_choice="none"))
    wire = anthropic_adapter.to_wire(request, "claude", caching=True)
    messages = wire["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"] == [{"type": "text", "text": "Earlier we fixed the parser."}]
    assert messages[2]["content"] == [{"type": "text", "text": "Now read a.py"}]  # empty text dropped, merged
    assert messages[4]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "no such file",
        "is_error": True,
    }
    assert messages[4]["content"][1]["cache_control"] == {"type": "ephemeral"}
    assert wire["system"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]
    assert wire["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert wire["tool_choice"] == {"type": "none"} and wire["max_tokens"] == 99
    assert json.dumps(wire).count("cache_control") == 3
    plain = anthropic_adapter.to_wire(Request("", CONVERSATION), "claude", caching=False)
    assert "system" not in plain and "tools" not in plain and "cache_control" not in json.dumps(plain)


def test_anthropic_marks_the_engine_anchor_only_where_a_turn_ends_with_it() -> None:
    def marks(anchor: int) -> list[tuple[int, int]]:
        request = Request("sys", CONVERSATION, TOOLS, options=RequestOptions(cache_anchor=anchor))
        wire = anthropic_adapter.to_wire(request, "claude", caching=True)
        return [
            (t, b)
            for t, turn in enumerate(wire["messages"])
            for b, block in enumerate(turn["content"])
            if "cache_control" in block
        ]

    assert marks(1) == [(1, 0), (4, 1)]  # the acknowledgement's turn, and the last block
    assert marks(4) == [(3, 1), (4, 1)]  # the call's turn: its last block, the tool use
    assert marks(2) == [(2, 0), (4, 1)]  # the empty message after it adds nothing to its turn
    assert marks(5) == [(4, 1)]  # the result shares its turn with "Then stop.": not a stable end
    assert marks(6) == [(4, 1)]  # the last message is marked anyway
    request = Request("sys", CONVERSATION, TOOLS, options=RequestOptions(cache_anchor=4))
    assert json.dumps(anthropic_adapter.to_wire(request, "claude", caching=True)).count("cache_control") == 4


def test_anthropic_puts_tool_results_first_in_a_merged_user_turn() -> None:
    messages = (
        Message.of("assistant", [ToolUse("c1", "read_file", {})]),
        Message.user("by the way, hurry"),
        Message.of("user", [ToolResult("c1", "ok")]),
    )
    wire = anthropic_adapter.to_wire(Request("", messages), "m", caching=False)
    assert [b["type"] for b in wire["messages"][1]["content"]] == ["tool_result", "text"]


def test_openai_to_wire() -> None:
    request = Request("sys", CONVERSATION, TOOLS, options=RequestOptions(tool_choice="none"))
    wire = chat_wire.to_wire(request, "gpt")
    assert wire["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Earlier we fixed the parser."},
        {"role": "assistant", "content": "Understood."},
        {"role": "user", "content": "Now read a.py"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: no such file"},
        {"role": "user", "content": "Then stop."},
    ]
    assert wire["tool_choice"] == "none" and wire["max_completion_tokens"] == 8192
    assert wire["tools"][0]["function"]["parameters"]["properties"]["path"] == {"type": "string"}


@pytest.mark.parametrize(
    ("content", "expected"), [("boom", "Error: boom"), ("Error: boom", "Error: boom"), ("error 2", "error 2")]
)
def test_openai_error_results_say_so_once(content: str, expected: str) -> None:
    wire = chat_wire.to_wire(
        Request(
            "",
            (
                Message.of("assistant", [ToolUse("c", "t", {})]),
                Message.of("user", [ToolResult("c", content, True)]),
            ),
        ),
        "m",
    )
    assert wire["messages"][-1]["content"] == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("", {}), ('{"a": 1}', {"a": 1}), ("[1, 2]", {"_raw": "[1, 2]"}), ("{oops", {"_raw": "{oops"})],
)
def test_openai_parse_arguments(raw: str, expected: dict[str, Any]) -> None:
    assert tool_arguments(raw) == expected


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
    ],
)
def test_openai_finish_reasons(finish: str, stop: str) -> None:
    assembler = chat_wire.ChunkAssembler()
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": finish}]})
    assert assembler.finish().stop_reason == stop


def test_assemblers_refuse_a_stream_without_a_stop_reason() -> None:
    chunks = chat_wire.ChunkAssembler()
    chunks.feed({"choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}]})
    with pytest.raises(TransientError):
        chunks.finish()
    events = anthropic_adapter.StreamAssembler()
    events.feed({"type": "message_start", "message": {"usage": {"input_tokens": 5}}})
    events.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ha"}}
    assert events.feed(delta) == TextDelta("ha")
    with pytest.raises(TransientError):
        events.finish()
    with pytest.raises(TransientError):
        anthropic_adapter.from_wire({"content": [], "stop_reason": None})


# -- factory ---------------------------------------------------------------------------------------


def test_factory_builds_each_adapter_with_defaults(fake_server: FakeModelServer) -> None:
    a_settings = ProviderSettings(name="anthropic", api_key="k", base_url=fake_server.anthropic_base_url)
    o_settings = ProviderSettings(name="openai", api_key="k", base_url=fake_server.openai_base_url)
    a = create_provider(a_settings, resolve_model(a_settings))
    o = create_provider(o_settings, resolve_model(o_settings), streaming=False)
    assert (a.name, a.model) == ("anthropic", ANTHROPIC.default_model)
    assert (o.name, o.model) == ("openai", OPENAI.default_model)
    fake_server.queue(Reply("from factory"))
    assert completion_of(o)[1].message.text == "from factory"


@pytest.mark.parametrize(("name", "env"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")])
def test_factory_names_the_missing_key(name: str, env: str) -> None:
    with pytest.raises(ConfigError) as raised:
        settings = ProviderSettings(name=name, api_key=None)  # type: ignore[arg-type]
        create_provider(settings, resolve_model(settings))
    assert str(raised.value) == f"{env} is not set: export it or set provider.api_key in the config"


# -- properties of the wire translation ------------------------------------------------------------

texts = st.sampled_from(["", " ", "hello", "summary of earlier work"])


@st.composite
def conversations(draw: st.DrawFn) -> tuple[Message, ...]:
    """Random valid conversations: text turns, tool rounds, summaries, split and empty messages."""
    messages: list[Message] = [Message.of("user", [SummaryBlock(draw(texts))])] if draw(st.booleans()) else []
    for round_no in range(draw(st.integers(1, 6))):
        messages.append(Message.user(draw(texts).strip() or "go"))
        if draw(st.booleans()):
            messages.append(Message.user(draw(texts)))  # the engine may leave two user messages in a row
        calls = [ToolUse(f"c{round_no}_{n}", "read_file", {"n": n}) for n in range(draw(st.integers(0, 3)))]
        messages.append(Message.of("assistant", [TextBlock(draw(texts)), *calls]))
        if calls:
            results = [ToolResult(c.id, draw(texts), draw(st.booleans())) for c in calls]
            messages.append(Message.of("user", results))
            messages.append(Message.assistant(draw(texts).strip() or "done"))
    return tuple(messages)


@given(conversations(), st.booleans())
def test_anthropic_wire_is_always_valid(messages: tuple[Message, ...], caching: bool) -> None:
    wire = anthropic_adapter.to_wire(Request("sys", messages, TOOLS), "m", caching=caching)
    roles = [m["role"] for m in wire["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))
    blocks = [b for m in wire["messages"] for b in m["content"]]
    assert all(b["text"].strip() for b in blocks if b["type"] == "text")
    assert json.dumps(wire).count("cache_control") == (3 if caching else 0)
    sent = sum(len(m.tool_uses) for m in messages)
    assert (
        sum(b["type"] == "tool_use" for b in blocks)
        == sum(b["type"] == "tool_result" for b in blocks)
        == sent
    )


@given(conversations())
def test_openai_wire_answers_every_tool_call_in_order(messages: tuple[Message, ...]) -> None:
    wire = chat_wire.to_wire(Request("sys", messages, TOOLS), "m")["messages"]
    assert wire[0]["role"] == "system"
    for i, message in enumerate(wire):
        if message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            following = wire[i + 1 : i + 1 + len(ids)]
            assert [m.get("tool_call_id") for m in following] == ids
        if message["role"] in ("user", "assistant") and not message.get("tool_calls"):
            assert message["content"]


def test_script_files_load(tmp_path: Any) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            [
                {"text": "hi", "tool_calls": [{"name": "read_file", "input": {"path": "a"}}]},
                {"fault": {"status": 429, "headers": {"retry-after": "1"}}},
                {"drop": {"after_events": 2}},
                {"truncate": {}},
                {"stream_error": {"kind": "api_error"}},
            ]
        )
    )
    items = load_script(str(path))
    assert items[0] == Reply("hi", [ToolCallSpec("read_file", {"path": "a"})])
    assert items[1] == Fault(429, "", {"retry-after": "1"})
    assert items[2] == Drop(2) and items[3] == Truncate() and isinstance(items[4], StreamError)


def test_reset_puts_back_what_the_server_was_built_with() -> None:
    """The conftest fixture shares one fake_server per module: a setting a test changed is back after."""
    fake = FakeModelServer(context_window=100, models={"m": (10, 5)})
    fake.context_window = 5
    fake.responder = lambda request: Reply("changed")
    fake.models["other"] = (1, 1)
    fake.queue(Reply("left over"))
    fake.reset()
    assert (fake.context_window, fake.responder, fake.models, fake.pending) == (100, None, {"m": (10, 5)}, 0)

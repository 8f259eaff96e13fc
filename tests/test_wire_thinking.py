"""The Anthropic wire with thinking (pure): what each model is sent, and thinking blocks in and out."""

from __future__ import annotations

import pytest

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.core.requests import Request, TextDelta, ThinkingDelta, ToolSpec
from agent_cli.core.thought_blocks import ReasoningBlock, RedactedThinkingBlock, ThinkingBlock
from agent_cli.providers.anthropic_wire import (
    BINDING_BETA,
    StreamAssembler,
    ThinkingConfig,
    from_wire,
    to_wire,
)
from agent_cli.providers.factory import create_provider
from agent_cli.providers.models import lookup
from agent_cli.providers.registry import wire_for
from agent_cli.providers.resolve import resolve_model

TOOLS = (ToolSpec("read_file", "Read a file", {"type": "object"}),)


def accepts(model: str):  # type: ignore[no-untyped-def]
    info = lookup(model)
    assert info is not None
    return info.accepts


@pytest.mark.parametrize(
    ("model", "effort", "display", "thinking", "sent_effort"),
    [
        ("claude-sonnet-5-5", None, "summarized", {"type": "adaptive", "display": "summarized"}, None),
        ("claude-opus-5-5", "xhigh", "omitted", {"type": "adaptive", "display": "omitted"}, "xhigh"),
        ("claude-haiku-5-5", "none", "summarized", {"type": "adaptive", "display": "summarized"}, None),
        ("claude-opus-4-8", "high", "summarized", {"type": "adaptive", "display": "summarized"}, "high"),
        ("claude-haiku-4-5", "high", "summarized", None, None),  # extended thinking only: nothing sent
    ],
)
def test_thinking_config_sends_only_what_the_model_takes(
    model: str, effort: str | None, display: str, thinking: dict[str, str] | None, sent_effort: str | None
) -> None:
    config = ThinkingConfig.for_model(accepts(model), effort=effort, display=display)
    wire = to_wire(Request("s", (Message.user("hi"),), TOOLS), model, caching=True, thinking=config)
    assert wire.get("thinking") == thinking
    assert wire.get("output_config") == ({"effort": sent_effort} if sent_effort else None)
    for never in ("temperature", "top_p", "top_k", "extra_headers"):
        assert never not in wire
    assert wire["messages"][-1]["role"] == "user"  # no prefill, ever


def test_drop_block_needs_and_sends_its_beta_header() -> None:
    config = ThinkingConfig.for_model(
        accepts("claude-sonnet-5-5"), effort=None, display=None, drop_invalid=True
    )
    wire = to_wire(Request("s", (Message.user("hi"),)), "claude-sonnet-5-5", caching=False, thinking=config)
    assert wire["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert wire["extra_headers"] == {"anthropic-beta": BINDING_BETA}


def test_thinking_blocks_go_back_unchanged_and_in_place() -> None:
    empty = ThinkingBlock("", "sig-empty")  # the default display returns no text: it still goes back
    redacted = RedactedThinkingBlock("opaque")
    foreign = ReasoningBlock("rs_1", "enc", ("an OpenAI summary",))
    use = ToolUse("toolu_1", "read_file", {"path": "a.py"})
    history = (
        Message.user("read a.py"),
        Message("assistant", (empty, redacted, foreign, TextBlock(""), use)),
        Message("user", (ToolResult("toolu_1", "x = 1"),)),
    )
    wire = to_wire(Request("s", history, TOOLS), "claude-sonnet-5-5", caching=True)
    assert wire["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "", "signature": "sig-empty"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    ]
    assert "cache_control" in wire["messages"][-1]["content"][-1]


def test_cache_marker_never_lands_on_a_thinking_block() -> None:
    history = (Message.user("hi"), Message("assistant", (TextBlock("ok"), ThinkingBlock("t", "s"))))
    wire = to_wire(Request("s", history), "claude-sonnet-5-5", caching=True)
    last = wire["messages"][-1]["content"]
    assert "cache_control" not in last[-1] and "cache_control" in last[0]


def test_stream_assembles_thinking_redacted_and_signatures() -> None:
    events = [
        {"type": "message_start", "message": {"model": "claude-sonnet-5-5", "usage": {"input_tokens": 50}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Read it "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "first."},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "DATA"},
        },
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Done."}},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 90, "output_tokens_details": {"thinking_tokens": 70}},
        },
    ]
    assembler = StreamAssembler()
    shown = [assembler.feed(e) for e in events]
    assert ThinkingDelta("Read it ") in shown and TextDelta("Done.") in shown
    done = assembler.finish()
    assert done.message.content == (
        ThinkingBlock("Read it first.", "SIG"),
        RedactedThinkingBlock("DATA"),
        TextBlock("Done."),
    )
    assert done.usage.reasoning_tokens == 70 and done.message.text == "Done."


def test_a_reply_that_filled_the_window_is_an_overflow() -> None:
    with pytest.raises(ContextOverflowError):
        from_wire(
            {"content": [{"type": "text", "text": "half"}], "stop_reason": "model_context_window_exceeded"}
        )
    assembler = StreamAssembler()
    assembler.feed({"type": "message_delta", "delta": {"stop_reason": "model_context_window_exceeded"}})
    with pytest.raises(ContextOverflowError):
        assembler.finish()


def test_non_streamed_reply_keeps_empty_thinking() -> None:
    body = {
        "content": [
            {"type": "thinking", "thinking": "", "signature": "S"},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    done = from_wire(body)
    assert done.message.thoughts == (ThinkingBlock("", "S"),) and done.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("settings", "wire", "kind"),
    [
        (ProviderSettings(name="anthropic", api_key="k"), "messages", "AnthropicProvider"),
        (ProviderSettings(name="openai", api_key="k"), "responses", "OpenAIResponsesProvider"),
        (
            ProviderSettings(name="openai", api_key="k", base_url="http://127.0.0.1:1/v1"),
            "chat-compatible",
            "OpenAIProvider",
        ),
        (
            ProviderSettings(name="openai", api_key="k", base_url="http://127.0.0.1:1/v1", wire="responses"),
            "responses",
            "OpenAIResponsesProvider",
        ),
        (ProviderSettings(name="openai", api_key="k", wire="chat"), "chat", "OpenAIProvider"),
        (
            ProviderSettings(name="openai", api_key="k", base_url="http://127.0.0.1:1/v1", wire="chat"),
            "chat-compatible",
            "OpenAIProvider",
        ),
        (ProviderSettings(name="anthropic", api_key="k", wire="chat"), "messages", "AnthropicProvider"),
    ],
)
def test_the_wire_follows_the_endpoint_unless_set(settings: ProviderSettings, wire: str, kind: str) -> None:
    assert wire_for(settings) == wire
    provider = create_provider(settings, resolve_model(settings))
    assert type(provider).__name__ == kind
    assert getattr(provider, "wire", wire) == wire  # the Chat Completions adapter keeps the wire it was given

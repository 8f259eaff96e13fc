"""The OpenAI Responses wire (pure): input items out, stream events and responses in."""

from __future__ import annotations

import pytest

from agent_cli.core.errors import ContextOverflowError, RateLimitError, TransientError
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.requests import Request, RequestOptions, TextDelta, ThinkingDelta, ToolSpec
from agent_cli.core.thought_blocks import ReasoningBlock, ThinkingBlock
from agent_cli.providers.responses_wire import ReasoningConfig, StreamAssembler, from_wire, to_wire

TOOLS = (
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
)
OVERFLOW = "Your input exceeds the context window of this model. Please adjust your input and try again."


def test_history_becomes_items_in_order_with_the_ids_the_api_gave() -> None:
    reasoning = ReasoningBlock("rs_1", "ENC", ("I will read a.py.",))
    use = ToolUse("call_1", "read_file", {"path": "a.py"}, item_id="fc_1")
    history = (
        Message("user", (SummaryBlock("record of earlier work"), TextBlock("go on"))),
        Message("assistant", (reasoning, TextBlock("Reading."), use)),
        Message("user", (ToolResult("call_1", "x = 1"),)),
        Message("assistant", (ThinkingBlock("claude's", "sig"), TextBlock("Done."))),
        Message("assistant", (ReasoningBlock("rs_2", "ENC2"),)),  # reasoning with nothing after it
    )
    wire = to_wire(Request("be brief", history, TOOLS, max_tokens=500), "gpt-6.2-sol")
    assert wire["instructions"] == "be brief" and wire["store"] is False and wire["max_output_tokens"] == 500
    assert wire["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "record of earlier work"},
                {"type": "input_text", "text": "go on"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",  # as the API returned it: the id is required (clients that dropped it got 400s)
            "summary": [{"type": "summary_text", "text": "I will read a.py."}],
            "encrypted_content": "ENC",
        },
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.py"}',
            "id": "fc_1",  # beside its reasoning item
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "x = 1"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
    ]
    assert wire["tools"][0]["strict"] is False and wire["tool_choice"] == "auto"
    assert "reasoning" not in wire and "include" not in wire


def test_a_call_loses_its_id_with_its_reasoning_and_reasoning_without_content_stays_home() -> None:
    use = ToolUse("call_1", "read_file", {"path": "a.py"}, item_id="fc_1")
    history = (
        Message.user("go"),
        Message("assistant", (ReasoningBlock("rs_1", ""), use)),  # no encrypted_content came back
        Message("user", (ToolResult("call_1", "x = 1"),)),
    )
    items = to_wire(Request("s", history, TOOLS), "gpt-6.2-sol")["input"]
    assert [i.get("type") for i in items] == ["message", "function_call", "function_call_output"]
    assert "id" not in items[1]  # its reasoning item is not sent, so neither is the id bound to it


def test_reasoning_and_summary_request_and_tool_choice_none() -> None:
    request = Request("s", (Message.user("summarize"),), TOOLS, options=RequestOptions(tool_choice="none"))
    wire = to_wire(request, "gpt-6.2-sol", reasoning=ReasoningConfig("high", summary=True))
    assert wire["reasoning"] == {"effort": "high", "summary": "auto"}
    assert wire["include"] == ["reasoning.encrypted_content"] and wire["tool_choice"] == "none"
    quiet = to_wire(request, "gpt-6.2-sol", reasoning=ReasoningConfig(None, summary=False))
    assert quiet["reasoning"] == {}


def events_for_a_tool_call() -> list[dict[str, object]]:
    reasoning = {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": None}
    done_reasoning = {
        **reasoning,
        "summary": [{"type": "summary_text", "text": "Read it."}],
        "encrypted_content": "ENC9",
    }
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "read_file", "arguments": ""}
    usage = {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens": 80,
        "output_tokens_details": {"reasoning_tokens": 50},
        "total_tokens": 1280,
    }
    return [
        {"type": "response.created", "response": {"model": "gpt-6.2-sol", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Read it."},
        {"type": "response.output_item.done", "output_index": 0, "item": done_reasoning},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '{"path":'},
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": ' "a.py"}'},
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**call, "arguments": '{"path": "a.py"}'},
        },
        {"type": "response.completed", "response": {"status": "completed", "usage": usage}},
    ]


def test_stream_assembles_reasoning_from_the_done_item_and_the_call() -> None:
    assembler = StreamAssembler("gpt-6.2-sol")
    shown = [assembler.feed(e) for e in events_for_a_tool_call()]
    assert ThinkingDelta("Read it.") in shown
    done = assembler.finish()
    assert done.message.content == (
        ReasoningBlock("rs_9", "ENC9", ("Read it.",)),
        ToolUse("call_9", "read_file", {"path": "a.py"}, item_id="fc_1"),
    )
    assert done.stop_reason == "tool_use"
    assert (done.usage.input_tokens, done.usage.cache_read_tokens, done.usage.reasoning_tokens) == (
        176,
        1024,
        50,
    )


def test_text_deltas_and_a_cut_stream() -> None:
    assembler = StreamAssembler()
    assert assembler.feed({"type": "response.output_text.delta", "delta": "Hel"}) == TextDelta("Hel")
    with pytest.raises(TransientError):
        assembler.finish()  # no response.completed: never a shorter answer


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"code": "context_length_exceeded", "message": OVERFLOW}, ContextOverflowError),
        (
            {"code": "rate_limit_exceeded", "message": "Rate limit reached. Please try again in 1.2s."},
            RateLimitError,
        ),
        ({"code": "server_error", "message": "oops"}, TransientError),
        ({"code": "weird", "message": "unknown failure"}, TransientError),  # Codex's reading: retry it
    ],
)
def test_a_failed_response_is_the_error_trees_member(error: dict[str, str], expected: type) -> None:
    assembler = StreamAssembler()
    with pytest.raises(expected):
        assembler.feed({"type": "response.failed", "response": {"status": "failed", "error": error}})
    with pytest.raises(expected):
        from_wire({"status": "failed", "error": error})


def test_incomplete_is_out_of_output_room() -> None:
    body = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "half an ans"}]}],
    }
    done = from_wire(body)
    assert done.stop_reason == "max_tokens" and done.message.text == "half an ans"

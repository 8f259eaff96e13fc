"""A summary request keeps the main requests' tools and `tool_choice` (issue 37, item 2), so the
model may answer it with a tool call: the call is asked once more with tool calls switched off, and
a model that still calls one leaves the digest to stand in. Over the fake model server, real HTTP.

Before the change the summary request sent `tool_choice: none` (so it read none of the cached
conversation), and a tool-call answer would have been taken as the record: its preamble text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_context_fakes import FRAME, assistant, filler, make_engine, user

from agent_cli.agent.summary_call import ProviderSummarizer
from agent_cli.context.summary_request import COMPACTION_TAG, SummaryFailed, span_request
from agent_cli.core.events import CompactEvent
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request

RECORD = "## Work state\nDone: read a.py and b.py. Next step: fix the parser."
PEEK = Reply("Let me look at the file first.", tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})])
SPAN = [user("fix the parser in a.py"), assistant("a.py holds the parser; b.py its tests."), user("go on")]


def summarizer(server: FakeModelServer) -> ProviderSummarizer:
    provider = AnthropicProvider("claude-sonnet-4-6", api_key="k", base_url=server.anthropic_base_url)
    return ProviderSummarizer(provider, policy=RetryPolicy(0), timeout=60)


def test_the_summary_request_has_the_main_tool_choice_and_ends_with_the_instruction(
    fake_server: FakeModelServer,
) -> None:
    fake_server.queue(Reply(RECORD))
    reply = summarizer(fake_server)(span_request(SPAN, FRAME, 600, None))
    assert reply.text == RECORD
    (sent,) = fake_server.requests
    body = sent.body
    assert "tool_choice" not in body and body["tools"]  # as a main request sends it: auto, the tools
    last = body["messages"][-1]["content"][-1]
    assert last["type"] == "text" and last["text"].startswith(COMPACTION_TAG + "\n")
    assert is_summary_request(body)  # the tagged form the checks recognise


def test_a_tool_call_answer_is_asked_again_with_tool_calls_off(fake_server: FakeModelServer) -> None:
    fake_server.queue(PEEK, Reply(RECORD))
    reply = summarizer(fake_server)(span_request(SPAN, FRAME, 600, None))
    assert reply.text == RECORD  # not the preamble of the call
    first, second = fake_server.requests
    assert "tool_choice" not in first.body and second.body["tool_choice"] == {"type": "none"}
    assert is_summary_request(first.body) and is_summary_request(second.body)
    assert second.body["messages"] == first.body["messages"]  # the same request otherwise
    assert reply.usage.output_tokens > 0 and reply.usage.input_tokens + reply.usage.cache_read_tokens + (
        reply.usage.cache_write_tokens
    ) >= first.input_tokens  # both calls' cost counted


def test_a_model_that_keeps_calling_tools_fails_the_call(fake_server: FakeModelServer) -> None:
    fake_server.queue(PEEK, PEEK)
    with pytest.raises(SummaryFailed, match="called a tool"):
        summarizer(fake_server)(span_request(SPAN, FRAME, 600, None))
    assert len(fake_server.requests) == 2


def test_the_digest_stands_in_when_the_model_only_calls_tools(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(PEEK, PEEK)
    engine, _, _ = make_engine(tmp_path, summarizer(fake_server))  # type: ignore[arg-type]
    history = []
    for i in range(14):
        history += [user(f"request {i}: explain part {i}"), assistant(f"answer {i}: {filler(4_000, str(i))}")]
    history.append(user("go on"))
    prepared = engine.prepare(history, FRAME)
    (event,) = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert event.layer == "summarize" and event.degraded  # the digest, not a tool call's preamble
    assert "Let me look at the file first." not in prepared.messages[0].text
    assert len(fake_server.requests) == 2

"""Native compaction: the fake's documented rules through the real SDKs over HTTP, the adapters' wire,
the record's round trip, the keep-tail thinking rule and the fallback where a model has none.

Sources of the rules (agent_cli/testing/fakeserver/compaction.py has them in full):
- Anthropic, on-demand compaction, beta `compact-2026-09-04`:
  platform.claude.com/docs/en/build-with-claude/compaction-keep-recent-turns,
  platform.claude.com/docs/en/build-with-claude/compaction-background (read 2026-12-02), and the
  `anthropic` 2.15 SDK (`BetaCompactionConfigParam`, `BetaCompactionBlock`, the `Compaction*Error`s,
  which the SDK raises from `error.details.error_code`).
- OpenAI, `POST /v1/responses/compact`: developers.openai.com/api/docs/guides/compaction (read
  2026-12-02) and the `openai` 3.57 SDK (`CompactedResponse`, `ResponseCompactionItem`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import anthropic.types as atypes
import openai
import pytest

from agent_cli.agent.native_summary import NativeCompactions, choose_summarizer, split_instruction
from agent_cli.agent.summary_call import ProviderSummarizer
from agent_cli.context.protocol import Frame
from agent_cli.context.summary_request import span_request
from agent_cli.core.messages import Message, NativeRecord, SummaryBlock, TextBlock
from agent_cli.core.requests import Completion, Request
from agent_cli.core.thinking import settle_thinking
from agent_cli.core.thought_blocks import ThinkingBlock
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.anthropic_wire import COMPACT_BETA, ThinkingConfig, to_wire
from agent_cli.providers.model_info import Accepts
from agent_cli.providers.native_support import native_compaction_gap
from agent_cli.providers.openai_responses import OpenAIResponsesProvider
from agent_cli.providers.responses_wire import input_items
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.fakeserver import FakeModelServer
from tests.e2e import agent_env, run_agent

OPUS = "claude-opus-5-5"
BETAS = [COMPACT_BETA]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(echo=True) as s:
        yield s


@pytest.fixture
def claude(server: FakeModelServer) -> anthropic.Anthropic:
    server.reset()
    return anthropic.Anthropic(api_key="k", base_url=server.anthropic_base_url, max_retries=0)


def compact(
    client: anthropic.Anthropic, messages: list[Any], tools: list[Any] | None = None
) -> dict[str, Any]:
    reply = client.beta.messages.create(
        model=OPUS,
        max_tokens=2000,
        messages=messages,
        compaction={"type": "summarize"},
        betas=BETAS,
        **({"tools": tools} if tools else {}),
    )
    assert reply.stop_reason == "compaction" and len(reply.content) == 1
    block = reply.content[0].model_dump(exclude_none=True)
    assert block["type"] == "compaction" and block["content"] and block["signature"]
    return block


def turn(client: anthropic.Anthropic, messages: list[Any], *, betas: list[str] = BETAS) -> Any:
    return client.beta.messages.create(model=OPUS, max_tokens=2000, messages=messages, betas=betas)


HISTORY = [
    {"role": "user", "content": "Name the entities of a recipe app."},
    {"role": "assistant", "content": "Recipe, Ingredient and Step."},
]


# -- Anthropic: the documented rules, through the SDK -----------------------------------------------


def test_a_block_sent_back_first_continues_the_conversation(claude: anthropic.Anthropic) -> None:
    block = compact(claude, HISTORY)
    reply = turn(
        claude, [{"role": "assistant", "content": [block]}, {"role": "user", "content": "And next?"}]
    )
    assert reply.stop_reason == "end_turn"


def test_an_altered_summary_is_refused(claude: anthropic.Anthropic) -> None:
    block = compact(claude, HISTORY)
    changed = {**block, "content": block["content"] + " (edited)"}
    with pytest.raises(atypes.CompactionContentMismatchError):
        turn(claude, [{"role": "assistant", "content": [changed]}, {"role": "user", "content": "Go on."}])


def test_a_forged_signature_or_encrypted_content_is_refused(claude: anthropic.Anthropic) -> None:
    block = compact(claude, HISTORY)
    for changed in (
        {**block, "signature": block["signature"][:-2] + "xx"},
        {**block, "encrypted_content": "AAAA"},
    ):
        with pytest.raises(atypes.CompactionSignatureInvalidError):
            turn(claude, [{"role": "assistant", "content": [changed]}, {"role": "user", "content": "Go on."}])


def test_a_block_not_first_or_twice_is_refused(claude: anthropic.Anthropic) -> None:
    block = compact(claude, HISTORY)
    late = [
        HISTORY[0],
        {"role": "assistant", "content": [{"type": "text", "text": "Recipe."}, block]},
        {"role": "user", "content": "Go on."},
    ]
    with pytest.raises(atypes.CompactionBlockMisplacedError):
        turn(claude, late)
    twice = [{"role": "assistant", "content": [block, block]}, {"role": "user", "content": "Go on."}]
    with pytest.raises(atypes.CompactionBlockAmbiguousError):
        turn(claude, twice)


def test_the_beta_header_is_required(claude: anthropic.Anthropic) -> None:
    block = compact(claude, HISTORY)
    with pytest.raises(anthropic.BadRequestError, match=COMPACT_BETA):
        turn(
            claude,
            [{"role": "assistant", "content": [block]}, {"role": "user", "content": "Go on."}],
            betas=[],
        )


def test_a_compaction_request_on_an_unanswered_tool_call_is_refused(claude: anthropic.Anthropic) -> None:
    open_call = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": "ls", "input": {}}]},
    ]
    with pytest.raises(atypes.CompactionIncompleteTurnError):
        claude.beta.messages.create(
            model=OPUS, max_tokens=100, messages=open_call, compaction={"type": "summarize"}, betas=BETAS
        )


def test_kept_turns_keep_their_thinking_behind_the_block(
    claude: anthropic.Anthropic, server: FakeModelServer
) -> None:
    """Keep-tail: summarize the older turns only, send the block, then the kept turns as they were,
    thinking included; it holds. Anything put between the block and them breaks it (a 400)."""
    first = [{"role": "user", "content": "Name the entities of a recipe app."}]
    a1 = turn(claude, first)
    history = [
        *first,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in a1.content]},
    ]
    kept_user = {"role": "user", "content": "Add a shopping list."}
    a2 = turn(claude, [*history, kept_user])
    kept = [
        kept_user,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in a2.content]},
    ]
    assert any(b["type"] == "thinking" for b in kept[1]["content"])
    block = compact(claude, history)
    follow = {"role": "user", "content": "Now the units."}
    reply = turn(claude, [{"role": "assistant", "content": [block]}, *kept, follow])
    assert reply.stop_reason == "end_turn" and server.last_request.reasoning_accepted == 1
    # Our words put between the block and the kept turns change their prefix: the thinking breaks.
    note = {"type": "text", "text": "(a note of ours)"}
    wedged = {"role": "user", "content": [note, {"type": "text", "text": kept_user["content"]}]}
    with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
        turn(claude, [{"role": "assistant", "content": [block]}, wedged, kept[1], follow])


# -- OpenAI: /responses/compact, through the SDK -----------------------------------------------------


def test_responses_compact_returns_the_users_messages_and_a_sealed_item(server: FakeModelServer) -> None:
    server.reset()
    client = openai.OpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
    items = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Plan a trip «à Paris»."}],
        },
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sure."}]},
    ]
    compacted = client.responses.compact(model="gpt-6-sol", input=items)
    output = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    assert compacted.object == "response.compaction"
    assert output[0]["role"] == "user" and output[0]["content"][0]["text"] == "Plan a trip «à Paris»."
    assert output[-1]["type"] == "compaction" and output[-1]["encrypted_content"]
    more = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go on."}]}
    assert (
        client.responses.create(model="gpt-6-sol", input=[*output, more], store=False).status == "completed"
    )
    forged = {**output[-1], "encrypted_content": output[-1]["encrypted_content"][:-3] + "abc"}
    with pytest.raises(openai.BadRequestError, match="could not be verified"):
        client.responses.create(model="gpt-6-sol", input=[*output[:-1], forged, more], store=False)


# -- the adapters and the record --------------------------------------------------------------------


def record_request() -> Request:
    span = [Message.user("Read «notes» — please."), Message.assistant("Done reading.")]
    frame = Frame(system="You are a test.", tools=())
    return span_request(span, frame, 500, None)


def completion(events: Iterator[Any]) -> Completion:
    found = [e for e in events if isinstance(e, Completion)]
    assert len(found) == 1
    return found[0]


def test_the_anthropic_adapter_compacts_and_sends_the_block_back_byte_for_byte(
    server: FakeModelServer,
) -> None:
    server.reset()
    thinking = ThinkingConfig.for_model(Accepts(thinking="adaptive"), effort=None, display=None)
    provider = AnthropicProvider(OPUS, api_key="k", base_url=server.anthropic_base_url, thinking=thinking)
    done = completion(NativeCompactions(provider).stream(record_request()))
    native = done.message.native
    assert native is not None and native.provider == "anthropic" and native.keeps_tail and native.readable
    asked = server.last_request.body
    assert asked["compaction"]["type"] == "summarize" and "Summarize" in asked["compaction"]["instructions"]
    assert [m["role"] for m in asked["messages"]] == ["user", "assistant"]  # the instruction is not a turn
    assert COMPACT_BETA in server.last_request.headers["anthropic-beta"]
    # In the session log and back: the same JSON text, and the same block on the wire.
    again = Message.from_json(json.loads(json.dumps(Message("user", (native,)).to_json())))
    assert again.native == native
    history = (again, Message.user("Next?"))
    wire = to_wire(Request("s", history, (), 100), OPUS, caching=True)
    sent = wire["messages"][0]
    assert sent["role"] == "assistant" and len(sent["content"]) == 1
    assert {k: v for k, v in sent["content"][0].items() if k != "cache_control"} == json.loads(native.wire)
    assert COMPACT_BETA in wire["extra_headers"]["anthropic-beta"]


def test_the_responses_adapter_compacts_and_sends_the_output_back_whole(server: FakeModelServer) -> None:
    server.reset()
    provider = OpenAIResponsesProvider("gpt-6-sol", api_key="k", base_url=server.openai_base_url)
    done = completion(NativeCompactions(provider).stream(record_request()))
    native = done.message.native
    assert native is not None and native.provider == "openai" and not native.readable
    assert server.last_request.path.endswith("/responses/compact")
    output = json.loads(native.wire)
    assert output[0]["content"][0]["text"] == "Read «notes» — please." and output[-1]["type"] == "compaction"
    carrier = Message("user", (SummaryBlock("our carrier", None),))
    items = input_items((Message("user", (native,)), Message.assistant("ok"), carrier))
    assert items[: len(output)] == output


def test_another_providers_record_is_not_sent() -> None:
    record = NativeRecord("openai", json.dumps([{"type": "compaction", "encrypted_content": "x"}]), "note")
    wire = to_wire(
        Request("s", (Message("user", (record,)), Message.user("hi")), (), 100), OPUS, caching=False
    )
    assert all(b.get("type") != "compaction" for m in wire["messages"] for b in m["content"])
    assert "extra_headers" not in wire


def test_the_instruction_goes_as_instructions_not_as_a_turn() -> None:
    request = record_request()
    messages, text = split_instruction(request.messages)
    assert [m.text for m in messages] == ["Read «notes» — please.", "Done reading."]
    assert text.startswith("Stop here and write no tool calls.")


# -- keep-tail thinking, the fallback, the setting ----------------------------------------------------


def test_a_keep_tail_record_leaves_the_kept_turns_thinking_alone() -> None:
    head = [Message.user("a"), Message.of("assistant", (ThinkingBlock("", "sig1"), TextBlock("b")))]
    kept = [Message.user("c"), Message.of("assistant", (ThinkingBlock("", "sig2"), TextBlock("d")))]
    carrier = Message("user", (SummaryBlock("carrier", None),))
    before = [*head, *kept]
    keeps = NativeRecord("anthropic", "{}", "summary", keeps_tail=True)
    after = [Message("user", (keeps,)), *kept, carrier]
    assert settle_thinking(before, after) == after
    plain = NativeRecord("openai", "[]", "note", readable=False)
    stripped = settle_thinking(before, [Message("user", (plain,)), *kept, carrier])
    assert not any(m.thoughts for m in stripped)
    # A kept turn changed after the record: its thinking goes, as after any change.
    edited = [Message("user", (keeps,)), Message.user("c, edited"), kept[1], carrier]
    assert not any(m.thoughts for m in settle_thinking(before, edited))


@pytest.mark.parametrize(
    ("provider", "wire", "model", "supported"),
    [
        ("anthropic", "messages", "claude-opus-5-5", True),
        ("anthropic", "messages", "claude-sonnet-4-6-20260101", True),
        ("anthropic", "messages", "claude-sonnet-4-5", False),
        ("anthropic", "messages", "claude-unknown-9", False),
        ("openai", "responses", "gpt-6-sol", True),
        ("openai", "chat", "gpt-6-sol", False),
        ("openai", "responses", "my-finetune", False),
    ],
)
def test_which_models_compact_natively(provider: str, wire: str, model: str, supported: bool) -> None:
    assert (native_compaction_gap(provider, wire, model) is None) is supported


def test_a_model_without_native_compaction_falls_back_with_one_line(server: FakeModelServer) -> None:
    provider = AnthropicProvider("claude-sonnet-4-5", api_key="k", base_url=server.anthropic_base_url)
    ordinary = ProviderSummarizer(provider, policy=RetryPolicy(), timeout=5)
    gap = native_compaction_gap("anthropic", "messages", "claude-sonnet-4-5")
    chosen, warning = choose_summarizer(ordinary, provider, gap, lambda p: ordinary)
    assert chosen is ordinary and warning is not None and "\n" not in warning and "native" in warning


def test_an_unknown_summarizer_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[context]\nsummarizer = "provider"\n')
    home = tmp_path / "home"
    home.mkdir()
    r = run_agent(["-p", "hi", "--config", str(cfg)], tmp_path, agent_env(home), timeout=60)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "context.summarizer" in lines[0] and '"native"' in lines[0]


def test_the_fallback_is_said_once_end_to_end(tmp_path: Path, server: FakeModelServer) -> None:
    server.reset()
    cfg = tmp_path / "config.toml"
    cfg.write_text('[context]\nsummarizer = "native"\n')
    home = tmp_path / "home"
    home.mkdir()
    env = agent_env(home, server, "anthropic")
    r = run_agent(
        ["-p", "hi", "--model", "claude-sonnet-4-5", "--config", str(cfg), "--output-format", "stream-json"],
        tmp_path,
        env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    said = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    warnings = [e["message"] for e in said if e["type"] == "warning" and "summarizer" in e["message"]]
    assert len(warnings) == 1 and "claude-sonnet-4-5" in warnings[0]


def test_a_model_that_cannot_read_the_block_gets_its_summary_as_text() -> None:
    """After /model to a Claude model the compaction pages do not list, the block is not sent (the
    API would refuse it); its readable summary goes as text in its place."""
    block = {"type": "compaction", "content": "The summary.", "signature": "s", "encrypted_content": "e"}
    record = NativeRecord("anthropic", json.dumps(block), "The summary.", keeps_tail=True)
    history = (Message("user", (record,)), Message.user("Next?"))
    wire = to_wire(Request("s", history, (), 100), "claude-sonnet-4-5", caching=False, compaction=False)
    blocks = [b for m in wire["messages"] for b in m["content"]]
    assert all(b["type"] == "text" for b in blocks) and "The summary." in blocks[0]["text"]
    assert "extra_headers" not in wire


def test_a_record_the_log_holds_redacted_comes_back_as_text(tmp_path: Path) -> None:
    """A secret in the provider's summary is redacted in the session log; the block could no longer
    be sent (its signature covers the text), so a resumed session carries its text as our record."""
    from agent_cli.store.redact import REDACTED, Redactor
    from agent_cli.store.session_log import SessionLog
    from agent_cli.store.sessions import load_session

    secret = "sk-ant-api03-" + "Q" * 40
    block = {"type": "compaction", "content": f"The key is {secret}.", "signature": "s"}
    record = NativeRecord("anthropic", json.dumps(block), block["content"], keeps_tail=True)
    clean = NativeRecord("anthropic", json.dumps({**block, "content": "No key."}), "No key.", keeps_tail=True)
    for native, kept in ((record, False), (clean, True)):
        log = SessionLog.create(tmp_path / ("a" if kept else "b"), redactor=Redactor([secret]), meta={})
        log.log_message(Message("user", (native,)))
        log.log_message(Message.user("next"))
        log.close()
        first = load_session(tmp_path / ("a" if kept else "b"), log.id).messages[0]
        if kept:
            assert first.native == native
        else:
            assert first.native is None and first.summary is not None
            assert REDACTED in first.summary.text and secret not in first.summary.text


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_record_is_the_providers_alone_then_the_kept_turns_then_our_carrier(provider: str) -> None:
    from agent_cli.config.settings import ContextSettings
    from agent_cli.context.condense import native_history
    from agent_cli.context.thresholds import compute_thresholds

    words = "Keep «these» words — exactly,\ttabs and all."
    span = [Message.user(words), Message.assistant("Noted.")]
    tail = [Message.user("Next step?"), Message.assistant("Working.")]
    openai = provider == "openai"  # its output holds the user's messages as sent
    native = NativeRecord(provider, "{}", "The summary.", readable=not openai, keeps_user_messages=openai)
    th = compute_thresholds(ContextSettings(), 200_000, 8_000)
    new = native_history(
        span, tail, native, ".transcripts/x/span-001.jsonl", thresholds=th, count_text=len, recall_hint='"x"'
    )
    assert new[0].content == (native,) and new[1:3] == tail
    carrier = new[3].summary
    assert carrier is not None and ".transcripts/x/span-001.jsonl" in carrier.text
    # Our carrier holds the user's words byte for byte, unless the provider's record holds them (OpenAI).
    assert ("The user's messages, verbatim" in carrier.text) is (provider == "anthropic")
    assert provider == "openai" or words in carrier.text


def test_a_kept_tail_that_opens_with_the_assistant_joins_the_blocks_turn(
    claude: anthropic.Anthropic, server: FakeModelServer
) -> None:
    """A cut after a tool round keeps a tail that opens with an assistant turn: it joins the block's
    assistant turn (consecutive turns of one role are one), and its thinking still holds."""
    from agent_cli.testing.fakeserver import Reply, ToolCallSpec

    def dump(reply: Any) -> list[dict[str, Any]]:
        return [b.model_dump(exclude_none=True) for b in reply.content]

    server.queue(Reply("Listing.", tool_calls=[ToolCallSpec("ls", {})]))
    tools = [{"name": "ls", "description": "list", "input_schema": {"type": "object", "properties": {}}}]
    u1 = {"role": "user", "content": "List the files."}
    a1 = claude.beta.messages.create(model=OPUS, max_tokens=500, messages=[u1], tools=tools, betas=BETAS)
    use = next(b for b in a1.content if b.type == "tool_use")
    u2 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "a.txt"}]}
    head = [u1, {"role": "assistant", "content": dump(a1)}, u2]
    a2 = claude.beta.messages.create(model=OPUS, max_tokens=500, messages=head, tools=tools, betas=BETAS)
    assert any(b["type"] == "thinking" for b in dump(a2))
    block = compact(claude, head, tools)
    joined = {"role": "assistant", "content": [block, *dump(a2)]}
    reply = claude.beta.messages.create(
        model=OPUS,
        max_tokens=500,
        messages=[joined, {"role": "user", "content": "Thanks."}],
        tools=tools,
        betas=BETAS,
    )
    assert reply.stop_reason == "end_turn" and server.last_request.reasoning_accepted == 1

"""The fake's Anthropic thinking rules, through the real SDK: what the 5.5 family and Fable answer,
how their thinking blocks stream, which replays the signature binding accepts, what they refuse,
usage, and the Models API. Each rule is stated as the providers' docs state it."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from agent_cli.testing.fakeserver import DEFAULT_THINKING, FakeModelServer, Reply, ToolCallSpec

OPUS, SONNET, HAIKU = "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"
THINKING_MODELS = [OPUS, SONNET, HAIKU, "claude-fable-5-1", "claude-fable-5-2"]
BINDING = "thinking-binding-controls-2026-08-01"
SYSTEM = "You are terse."
TOOLS: list[Any] = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
DROP = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}


def unbound(path: str, *, beta: bool = False) -> str:
    text = (
        f"{path}: Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
        'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )
    if not beta:
        text += (
            " That setting requires the `thinking-binding-controls-2026-08-01` value in the "
            "`anthropic-beta` header."
        )
    return text


FAKE_SERVER = {"models": {"claude-opus-6": (1_000_000, 128_000)}}  # the conftest fixture's server


@pytest.fixture
def client(fake_server: FakeModelServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake_server.anthropic_base_url, api_key="k", max_retries=0)


def create(client: anthropic.Anthropic, messages: list[Any], *, model: str = OPUS, **kw: Any) -> Any:
    """messages.create with this file's system prompt and tools, unless `kw` replaces them."""
    return client.messages.create(
        **{"model": model, "max_tokens": 1024, "system": SYSTEM, "tools": TOOLS, "messages": messages, **kw}
    )


def refusal(client: anthropic.Anthropic, messages: list[Any], **kw: Any) -> dict[str, Any]:
    """The error body of a request the fake must refuse with a 400."""
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(client, messages, **kw)
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict)
    error: dict[str, Any] = body["error"]
    assert error["type"] == "invalid_request_error"
    return error


def blocks_of(reply: Any) -> list[dict[str, Any]]:
    return [block.to_dict() for block in reply.content]


def tool_loop(
    client: anthropic.Anthropic, fake_server: FakeModelServer, turns: int = 3, *, model: str = OPUS
) -> list[dict[str, Any]]:
    """A tool loop of `turns` replies (each a thinking block, then a tool call) and its results.

    Messages: 0 the user's ask; 1, 3, 5 the replies (thinking at content.0); 2, 4, 6 the results.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read f0.py, f1.py and f2.py."}]
    for n in range(turns):
        fake_server.queue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"path": f"f{n}.py"}, id=f"toolu_{n}")])
        )
        reply = create(client, messages, model=model)
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"contents of f{n}.py"}
        messages += [
            {"role": "assistant", "content": blocks_of(reply)},
            {"role": "user", "content": [result]},
        ]
    return messages


def finish(client: anthropic.Anthropic, fake_server: FakeModelServer, messages: list[Any], **kw: Any) -> Any:
    fake_server.queue(Reply("done"))
    return create(client, messages, **kw)


# -- what a thinking model answers -----------------------------------------------------------------


@pytest.mark.parametrize("model", THINKING_MODELS)
def test_thinking_models_open_with_an_empty_signed_thinking_block(
    model: str, client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("It is short."))
    reply = create(client, [{"role": "user", "content": "What is in a.py?"}], model=model)
    first, second = blocks_of(reply)
    assert first["type"] == "thinking" and first["thinking"] == "" and len(first["signature"]) > 100
    assert second == {"type": "text", "text": "It is short."}


def test_older_models_reply_without_thinking(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("It is short."))
    reply = create(client, [{"role": "user", "content": "What is in a.py?"}], model="claude-sonnet-4-6")
    assert blocks_of(reply) == [{"type": "text", "text": "It is short."}]
    assert reply.usage.output_tokens_details is None


def test_summarized_display_returns_the_scripted_text(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("ok", thinking="Checking a.py first."), Reply("ok"))
    ask = [{"role": "user", "content": "What is in a.py?"}]
    shown = create(client, ask, thinking={"type": "adaptive", "display": "summarized"})
    assert blocks_of(shown)[0]["thinking"] == "Checking a.py first."
    default = create(client, ask, thinking={"type": "adaptive", "display": "summarized"})
    assert blocks_of(default)[0]["thinking"] == DEFAULT_THINKING


@pytest.mark.parametrize("display", ["omitted", "summarized"])
def test_a_streamed_thinking_block_is_start_deltas_one_signature_stop(
    display: str, client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("ok", thinking="Checking a.py first, then b.py."))
    stream = client.messages.create(
        model=OPUS,
        max_tokens=1024,
        messages=[{"role": "user", "content": "What is in a.py?"}],
        thinking={"type": "adaptive", "display": display},  # type: ignore[typeddict-item]
        stream=True,
    )
    events = [event.to_dict() for event in stream]
    first = [e for e in events if e.get("index") == 0]
    assert first[0]["type"] == "content_block_start"
    assert first[0]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert first[-1]["type"] == "content_block_stop"
    deltas = [e["delta"] for e in first if e["type"] == "content_block_delta"]
    signatures = [d for d in deltas if d["type"] == "signature_delta"]
    assert len(signatures) == 1 and deltas[-1] is signatures[0]
    text = "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta")
    if display == "omitted":
        assert [d["type"] for d in deltas] == ["signature_delta"]
    else:
        assert text == "Checking a.py first, then b.py." and len(deltas) > 2


def test_progress_blocks_precede_each_tool_call_and_replay(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    calls = [ToolCallSpec("read_file", {"path": p}, id=f"toolu_{p}") for p in ("a.py", "b.py")]
    fake_server.queue(Reply(tool_calls=calls, progress=["Reading a.py.", "Now b.py."]))
    ask: list[Any] = [{"role": "user", "content": "Read a.py and b.py."}]
    reply = create(client, ask, thinking={"type": "adaptive", "display": "summarized"})
    content = blocks_of(reply)
    assert [b["type"] for b in content] == ["thinking", "thinking", "tool_use", "thinking", "tool_use"]
    assert [content[1]["thinking"], content[3]["thinking"]] == ["Reading a.py.", "Now b.py."]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{p}", "content": p} for p in ("a.py", "b.py")]
    history = [*ask, {"role": "assistant", "content": content}, {"role": "user", "content": results}]
    finish(client, fake_server, history)
    assert fake_server.last_request.reasoning_accepted == 3
    del content[1]  # the middle one of three
    assert refusal(client, history)["message"] == unbound("messages.1.content.2")


def test_a_redacted_block_arrives_whole_and_replays(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("ok", redacted=True))
    ask: list[Any] = [{"role": "user", "content": "What is in a.py?"}]
    events = [e.to_dict() for e in create(client, ask, stream=True)]
    starts = [e for e in events if e["type"] == "content_block_start"]
    redacted = starts[1]["content_block"]
    assert redacted["type"] == "redacted_thinking" and len(redacted["data"]) > 100
    assert not [e for e in events if e["type"] == "content_block_delta" and e["index"] == 1]
    history = [
        *ask,
        {
            "role": "assistant",
            "content": [*[s["content_block"] for s in starts[:2]], {"type": "text", "text": "ok"}],
        },
        {"role": "user", "content": "And b.py?"},
    ]
    history[1]["content"][0]["signature"] = next(
        e["delta"]["signature"] for e in events if e.get("delta", {}).get("type") == "signature_delta"
    )
    finish(client, fake_server, history)
    assert fake_server.last_request.reasoning_accepted == 2
    redacted["data"] = "not a signature"
    assert refusal(client, history)["message"] == unbound("messages.1.content.1")


def test_haiku_without_thinking(client: anthropic.Anthropic, fake_server: FakeModelServer) -> None:
    fake_server.queue(Reply("ok"), Reply(tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})]))
    ask = [{"role": "user", "content": "What is in a.py?"}]
    off = create(client, ask, model=HAIKU, thinking={"type": "disabled"}, output_config={"effort": "high"})
    assert [b["type"] for b in blocks_of(off)] == ["text"]
    forced = create(client, ask, model=HAIKU, tool_choice={"type": "any"})
    assert [b["type"] for b in blocks_of(forced)] == ["tool_use"]


def test_context_window_stop_reason_is_scriptable(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("partial", stop="model_context_window_exceeded"))
    reply = create(client, [{"role": "user", "content": "Go on."}])
    assert reply.stop_reason == "model_context_window_exceeded"


# -- the signature binding -------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
def test_a_tool_loop_replayed_unchanged_is_accepted(
    streaming: bool, client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    assert [fake_server.requests[n].reasoning_accepted for n in range(3)] == [0, 1, 2]
    fake_server.queue(Reply("done"))
    if streaming:
        with client.messages.stream(
            model=OPUS, max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=history
        ) as stream:
            reply = stream.get_final_message()
    else:
        reply = create(client, history)
    assert reply.content[-1].text == "done"
    assert (
        fake_server.last_request.reasoning_accepted == 3 and fake_server.last_request.reasoning_withheld == 0
    )


def test_key_order_cache_marks_and_the_blocks_own_text_do_not_count(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    history[0]["content"] = [{"text": "Read f0.py, f1.py and f2.py.", "type": "text"}]  # str -> block
    history[2]["content"][0]["cache_control"] = {"type": "ephemeral"}
    history[3]["content"] = [dict(reversed(list(b.items()))) for b in history[3]["content"]]
    history[1]["content"][1]["caller"] = None  # as model_dump() sends it back: a null is no change
    history[5]["content"][0]["thinking"] = "Something I made up."
    finish(client, fake_server, history)
    assert fake_server.last_request.reasoning_accepted == 3


def edit_system(request: dict[str, Any], history: list[Any]) -> None:
    request["system"] = SYSTEM + " Today is Monday."


def add_tool(request: dict[str, Any], history: list[Any]) -> None:
    request["tools"] = [*TOOLS, {"name": "ls", "description": "List", "input_schema": {"type": "object"}}]


def edit_first_message(request: dict[str, Any], history: list[Any]) -> None:
    history[0]["content"] = "Read f0.py and f1.py."


def shorten_a_result(request: dict[str, Any], history: list[Any]) -> None:
    history[2]["content"][0]["content"] = "contents of f0"


def change_a_tool_input(request: dict[str, Any], history: list[Any]) -> None:
    history[1]["content"][1]["input"] = {"path": "other.py"}


def add_a_reminder(request: dict[str, Any], history: list[Any]) -> None:
    history[2]["content"].append({"type": "text", "text": "Remember: be brief."})


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (edit_system, "messages.1.content.0"),
        (add_tool, "messages.1.content.0"),
        (edit_first_message, "messages.1.content.0"),
        (shorten_a_result, "messages.3.content.0"),
        (change_a_tool_input, "messages.3.content.0"),
        (add_a_reminder, "messages.3.content.0"),
    ],
)
def test_an_edit_before_a_block_is_the_exact_400(
    edit: Any, path: str, client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    request: dict[str, Any] = {}
    edit(request, history)
    fake_server.queue(Reply("done"))
    assert refusal(client, history, **request)["message"] == unbound(path)
    assert fake_server.pending == 1  # refused before the script was read


def test_a_block_left_out_between_kept_blocks_is_400(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    del history[3]["content"][0]
    assert refusal(client, history)["message"] == unbound("messages.5.content.0")


def test_a_block_moved_to_another_turn_is_400(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    b, c = history[3]["content"][0], history[5]["content"][0]
    history[3]["content"][0], history[5]["content"][0] = c, b
    assert refusal(client, history)["message"] == unbound("messages.3.content.0")


@pytest.mark.parametrize(
    ("keep", "accepted"),
    [((), 0), ((3, 5), 2), ((1, 3), 2), ((5,), 1)],
    ids=["all-removed", "from-the-start", "from-the-end", "all-but-the-last"],
)
def test_removing_thinking_from_the_start_the_end_or_all_is_accepted(
    keep: tuple[int, ...], accepted: int, client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    for n in (1, 3, 5):
        if n not in keep:
            del history[n]["content"][0]
    assert finish(client, fake_server, history).content[-1].text == "done"
    assert fake_server.last_request.reasoning_accepted == accepted


def test_a_tampered_signature_is_the_400(client: anthropic.Anthropic, fake_server: FakeModelServer) -> None:
    history = tool_loop(client, fake_server, 1)
    signature = history[1]["content"][0]["signature"]
    history[1]["content"][0]["signature"] = (
        signature[:20] + ("A" if signature[20] != "A" else "B") + signature[21:]
    )
    assert refusal(client, history)["message"] == unbound("messages.1.content.0")
    history[1]["content"][0]["signature"] = ""
    assert refusal(client, history)["message"] == unbound("messages.1.content.0")


def test_with_the_beta_header_the_400_does_not_ask_for_it(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    edit_first_message({}, history)
    error = refusal(client, history, extra_headers={"anthropic-beta": BINDING})
    assert error["message"] == unbound("messages.1.content.0", beta=True)


@pytest.mark.parametrize("streaming", [False, True])
def test_drop_block_with_the_header_drops_and_reports(
    streaming: bool, client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    del history[3]["content"][0]  # B: now C fails, and is dropped
    fake_server.queue(Reply("done"))
    expected = [
        {"type": "thinking_dropped", "path": "messages.5.content.0", "reason": "prefix_binding_mismatch"}
    ]
    kw: dict[str, Any] = {"thinking": DROP, "betas": [BINDING]}
    if streaming:
        events = list(
            client.beta.messages.create(
                model=OPUS, max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=history, stream=True, **kw
            )
        )
        start = events[0].to_dict()
        assert start["message"]["input_transformations"] == expected
    else:
        reply = client.beta.messages.create(
            model=OPUS, max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=history, **kw
        )
        assert [t.to_dict() for t in reply.input_transformations or []] == expected
    recorded = fake_server.last_request
    assert (recorded.reasoning_accepted, recorded.reasoning_withheld) == (1, 1)


def test_drop_block_drops_every_later_block_and_they_cost_nothing(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    edit_first_message({}, history)  # A fails, so B and C go too
    fake_server.queue(Reply("done"))
    reply = client.beta.messages.create(
        model=OPUS,
        max_tokens=1024,
        system=SYSTEM,
        tools=TOOLS,
        messages=history,
        thinking=DROP,
        betas=[BINDING],
    )
    paths = [t.to_dict()["path"] for t in reply.input_transformations or []]
    assert paths == ["messages.1.content.0", "messages.3.content.0", "messages.5.content.0"]
    dropped = fake_server.last_request.input_tokens
    for n in (1, 3, 5):
        del history[n]["content"][0]
    finish(client, fake_server, history)
    assert dropped == fake_server.last_request.input_tokens  # the dropped blocks were not counted


def test_after_a_drop_every_later_block_goes_too(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    del history[3]["content"][0]  # B: C is dropped from now on
    fake_server.queue(Reply(tool_calls=[ToolCallSpec("read_file", {"path": "f3.py"}, id="toolu_3")]))
    kw: dict[str, Any] = {"thinking": DROP, "extra_headers": {"anthropic-beta": BINDING}}
    reply = create(client, history, **kw)  # D, written after the drop
    result = {"type": "tool_result", "tool_use_id": "toolu_3", "content": "contents of f3.py"}
    history += [{"role": "assistant", "content": blocks_of(reply)}, {"role": "user", "content": [result]}]
    finish(client, fake_server, history, **kw)
    recorded = fake_server.last_request
    assert (recorded.reasoning_accepted, recorded.reasoning_withheld) == (1, 2)


def test_block_binding_without_the_header_is_400(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    error = refusal(client, [{"role": "user", "content": "hi"}], thinking=DROP)
    assert error["message"].endswith("block_binding: Extra inputs are not permitted")


def test_another_models_blocks_are_dropped_silently(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server, 2, model=SONNET)
    reply = finish(client, fake_server, history)  # now on Opus 5.5
    assert reply.content[-1].text == "done"
    recorded = fake_server.last_request
    assert (recorded.reasoning_accepted, recorded.reasoning_withheld) == (0, 2)
    fake_server.queue(Reply("done"))
    beta = client.beta.messages.create(
        model=OPUS, max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=history, betas=[BINDING]
    )
    assert {t.to_dict()["reason"] for t in beta.input_transformations or []} == {"model_binding_mismatch"}


# -- what the 5.5 family refuses -------------------------------------------------------------------

CONTROL = 'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
REFUSALS = [
    (
        OPUS,
        {"thinking": {"type": "disabled"}},
        f'"thinking.type.disabled" is not supported for this model. {CONTROL}',
    ),
    (
        SONNET,
        {"thinking": {"type": "disabled"}},
        '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" for the '
        'lowest thinking setting, or "thinking.type.adaptive" and "output_config.effort" to control thinking '
        "behavior.",
    ),
    (
        "claude-fable-5-1",
        {"thinking": {"type": "disabled"}},
        '"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode '
        'when not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.',
    ),
    (
        HAIKU,
        {"thinking": {"type": "disabled"}, "output_config": {"effort": "xhigh"}},
        f'"thinking.type.disabled" is not supported for this model. {CONTROL}',
    ),
    (
        OPUS,
        {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        f'"thinking.type.enabled" is not supported for this model. {CONTROL}',
    ),
    (
        HAIKU,
        {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        f'"thinking.type.enabled" is not supported for this model. {CONTROL}',
    ),
    (OPUS, {"extra_body": {"temperature": 0.2}}, "`temperature` is deprecated for this model."),
    (SONNET, {"extra_body": {"top_p": 0.5}}, "`top_p` is deprecated for this model."),
    (HAIKU, {"extra_body": {"top_k": 5}}, "`top_k` is deprecated for this model."),
    (
        OPUS,
        {"tool_choice": {"type": "any"}},
        'tool_choice: type "tool" and "any" are not supported for this model.',
    ),
    (
        "claude-fable-5-1",
        {"tool_choice": {"type": "tool", "name": "read_file"}},
        'tool_choice: type "tool" and "any" are not supported for this model.',
    ),
    (OPUS, {"output_config": {"effort": "ultra"}}, "output_config.effort: Input should be"),
    (
        OPUS,
        {"thinking": {"type": "adaptive", "display": "verbose"}},
        "thinking.adaptive.display: Input should be",
    ),
    (
        OPUS,
        {"thinking": {"type": "adaptive", "display": "updates"}},
        "thinking.adaptive.display: Input should be",
    ),
]


@pytest.mark.parametrize(
    ("model", "kw", "message"), REFUSALS, ids=[f"{m}-{json.dumps(k)}" for m, k, _ in REFUSALS]
)
def test_what_the_thinking_models_refuse(
    model: str, kw: dict[str, Any], message: str, client: anthropic.Anthropic
) -> None:
    error = refusal(client, [{"role": "user", "content": "hi"}], model=model, **kw)
    assert error["message"].startswith(message)


@pytest.mark.parametrize("model", [OPUS, SONNET, HAIKU])
def test_a_prefill_is_refused(model: str, client: anthropic.Anthropic) -> None:
    prefill = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}]
    assert refusal(client, prefill, model=model)["message"] == (
        "This model does not support assistant message prefill. "
        "The conversation must end with a user message."
    )


@pytest.mark.parametrize(
    ("model", "kw"),
    [
        (OPUS, {"tool_choice": {"type": "none"}}),
        (OPUS, {"extra_body": {"temperature": 1}}),
        (HAIKU, {"thinking": {"type": "disabled"}, "output_config": {"effort": "low"}}),
        (
            OPUS,
            {
                "thinking": {"type": "adaptive", "display": "updates"},
                "extra_headers": {"anthropic-beta": "thinking-display-updates-2026-08-18"},
            },
        ),
        ("claude-sonnet-4-6", {"extra_body": {"temperature": 0.2}, "tool_choice": {"type": "any"}}),
    ],
)
def test_what_they_accept(
    model: str, kw: dict[str, Any], client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("ok"))
    assert create(client, [{"role": "user", "content": "hi"}], model=model, **kw).content[-1].text == "ok"


# -- usage and the prompt cache --------------------------------------------------------------------


def test_output_tokens_include_the_reasoning(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("x" * 40, reasoning_tokens=321), Reply("x" * 40, reasoning_tokens=321))
    ask = [{"role": "user", "content": "hi"}]
    thinking = create(client, ask)
    assert thinking.usage.output_tokens == 10 + 321
    assert thinking.usage.output_tokens_details.thinking_tokens == 321
    assert create(client, ask, model="claude-sonnet-4-6").usage.output_tokens == 10


def test_replayed_thinking_costs_about_a_fifth_of_its_signature(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server)
    finish(client, fake_server, history)
    with_thinking = fake_server.last_request.input_tokens
    signatures = sum(len(history[n]["content"][0]["signature"]) for n in (1, 3, 5))
    for n in (1, 3, 5):
        del history[n]["content"][0]
    finish(client, fake_server, history)
    assert abs((with_thinking - fake_server.last_request.input_tokens) - signatures / 5) <= 3
    assert 550 <= signatures / 5 <= 650  # three replies of 200 reasoning tokens each


def test_thinking_blocks_are_part_of_the_cached_prefix(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    history = tool_loop(client, fake_server, 2)

    def marked(messages: list[Any]) -> list[Any]:
        copy = json.loads(json.dumps(messages))
        copy[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
        return copy

    write = finish(client, fake_server, marked(history[:3])).usage.cache_creation_input_tokens
    read = finish(client, fake_server, marked(history)).usage.cache_read_input_tokens
    assert read == write > 50  # the first reply's thinking block is in the prefix read back
    del history[1]["content"][0]
    assert finish(client, fake_server, marked(history)).usage.cache_read_input_tokens == 0


# -- the Models API --------------------------------------------------------------------------------


def test_the_models_api_answers_from_the_table(
    client: anthropic.Anthropic, fake_server: FakeModelServer
) -> None:
    info = client.models.retrieve("claude-opus-6").to_dict(mode="json")
    assert info == {
        "type": "model",
        "id": "claude-opus-6",
        "display_name": "Claude Opus 6",
        "created_at": "2026-01-01T00:00:00Z",
        "max_input_tokens": 1_000_000,
        "max_tokens": 128_000,
    }
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.models.retrieve("claude-mystery-9")
    assert isinstance(caught.value.body, dict) and caught.value.body["error"]["type"] == "not_found_error"
    assert [r.path for r in fake_server.model_lookups] == [
        "/v1/models/claude-opus-6",
        "/v1/models/claude-mystery-9",
    ]
    assert fake_server.requests == []

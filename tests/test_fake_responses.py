"""The fake's OpenAI Responses API, through the real SDK: output items and stream events, usage and
automatic prompt caching, both overflow forms, the script's faults, how input items must pair up,
what the newest models refuse, and the encrypted reasoning round trip."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from agent_cli.testing.fakeserver import (
    Drop,
    FakeModelServer,
    Fault,
    Reply,
    StreamError,
    ToolCallSpec,
    Truncate,
)

SOL = "gpt-6.2-sol"
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "read_file",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        "strict": False,
    }
]
STATELESS: dict[str, Any] = {
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "reasoning": {"effort": "medium", "summary": "auto"},
}
OVERFLOW = "Your input exceeds the context window of this model. Please adjust your input and try again."


@pytest.fixture
def client(fake_server: FakeModelServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake_server.openai_base_url, api_key="k", max_retries=0)


def create(client: openai.OpenAI, input: Any, *, model: str = SOL, **kw: Any) -> Any:
    """responses.create with this file's instructions and tools, unless `kw` replaces them."""
    return client.responses.create(
        **{"model": model, "input": input, "instructions": "Be terse.", "tools": TOOLS, **kw}
    )


def events_of(client: openai.OpenAI, input: Any, **kw: Any) -> list[dict[str, Any]]:
    return [event.to_dict() for event in create(client, input, stream=True, **kw)]


def refusal(client: openai.OpenAI, input: Any, status: int = 400, **kw: Any) -> dict[str, Any]:
    with pytest.raises(openai.APIStatusError) as caught:
        create(client, input, **kw)
    assert caught.value.status_code == status
    body: dict[str, Any] = caught.value.response.json()  # the whole envelope (the SDK's .body is its inside)
    assert body["error"]["type"] == "invalid_request_error"
    return body


def tool_loop(client: openai.OpenAI, fake_server: FakeModelServer, turns: int = 2) -> list[dict[str, Any]]:
    """`turns` replies, each reasoning then calling a tool, with their outputs, as input items
    (the items as the SDK gives them back, ids included)."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "Read f0.py and f1.py."}]
    for n in range(turns):
        fake_server.queue(Reply(tool_calls=[ToolCallSpec("read_file", {"path": f"f{n}.py"}, id=f"call_{n}")]))
        reply = create(client, items, **STATELESS)
        items += [item.to_dict() for item in reply.output]
        items.append(
            {"type": "function_call_output", "call_id": f"call_{n}", "output": f"contents of f{n}.py"}
        )
    return items


def finish(client: openai.OpenAI, fake_server: FakeModelServer, items: Any, **kw: Any) -> Any:
    fake_server.queue(Reply("done"))
    return create(client, items, **{**STATELESS, **kw})


# -- replies ---------------------------------------------------------------------------------------


def test_a_plain_model_answers_with_one_message(client: openai.OpenAI, fake_server: FakeModelServer) -> None:
    fake_server.queue(Reply("It is short."))
    reply = create(client, "What is in a.py?", model="gpt-4.1")
    assert [item.type for item in reply.output] == ["message"]
    assert reply.output_text == "It is short." and reply.status == "completed"
    assert reply.output[0].id.startswith("msg_") and reply.id.startswith("resp_")
    assert reply.usage.output_tokens_details.reasoning_tokens == 0


@pytest.mark.parametrize(
    ("model", "kw"),
    [
        (SOL, {}),
        ("gpt-5", {}),
        ("o3", {}),
        ("gpt-6-sol", {"reasoning": {"effort": "low"}}),
        ("gpt-4.1", {"reasoning": {"effort": "low"}}),
    ],
)
def test_reasoning_models_open_with_a_reasoning_item(
    model: str, kw: dict[str, Any], client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("ok"))
    reply = create(client, "hi", model=model, **kw)
    reasoning, message = reply.output
    assert reasoning.type == "reasoning" and reasoning.id.startswith("rs_")
    assert reasoning.summary == [] and reasoning.encrypted_content is None  # neither asked for
    assert message.type == "message"
    assert reply.usage.output_tokens_details.reasoning_tokens == 200


def test_effort_none_means_no_reasoning_item(client: openai.OpenAI, fake_server: FakeModelServer) -> None:
    fake_server.queue(Reply("ok"))
    reply = create(client, "hi", model="gpt-6-sol", reasoning={"effort": "none"})
    assert [item.type for item in reply.output] == ["message"]


def test_summary_and_encrypted_content_when_asked(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("ok", thinking="Plan: read a.py."))
    reasoning = create(client, "hi", **STATELESS).output[0]
    assert [part.to_dict() for part in reasoning.summary] == [
        {"type": "summary_text", "text": "Plan: read a.py."}
    ]
    assert reasoning.encrypted_content and len(reasoning.encrypted_content) > 500


def test_the_stream_events_in_order(client: openai.OpenAI, fake_server: FakeModelServer) -> None:
    calls = [ToolCallSpec("read_file", {"path": p}) for p in ("a.py", "b.py")]
    fake_server.queue(
        Reply("Let me look at both files.", tool_calls=calls, thinking="Read both, then answer.")
    )
    events = events_of(client, "Read a.py and b.py.", **STATELESS)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    summary = ["response.reasoning_summary_text.delta"] * kinds.count("response.reasoning_summary_text.delta")
    text = ["response.output_text.delta"] * kinds.count("response.output_text.delta")
    assert summary and text and kinds.count("response.function_call_arguments.delta") >= 2
    assert kinds[: 4 + len(summary)] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        *summary,
    ]
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.output_item.added") == kinds.count("response.output_item.done") == 4
    for name in (
        "content_part.added",
        "output_text.done",
        "content_part.done",
        "reasoning_summary_part.done",
    ):
        assert kinds.count(f"response.{name}") == 1
    assert kinds.count("response.function_call_arguments.done") == 2
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert added[0]["encrypted_content"] is None and done[0]["encrypted_content"]
    assert [i["type"] for i in done] == ["reasoning", "message", "function_call", "function_call"]
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == done[1]["content"][0]["text"] == "Let me look at both files."
    arguments = "".join(
        e["delta"]
        for e in events
        if e["type"] == "response.function_call_arguments.delta" and e["output_index"] == 2
    )
    assert json.loads(arguments) == {"path": "a.py"} and done[2]["arguments"] == arguments
    assert done[2]["call_id"].startswith("call_") and done[2]["id"].startswith("fc_")
    final = events[-1]["response"]
    assert final["status"] == "completed" and final["output"] == done


def test_usage_counts_all_the_input_and_the_reasoning(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("x" * 40, reasoning_tokens=150))
    usage = create(client, "What is in a.py?").usage
    recorded = fake_server.last_request
    assert usage.input_tokens == recorded.input_tokens > 0
    assert usage.output_tokens == 10 + 150 and usage.output_tokens_details.reasoning_tokens == 150
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0


def test_automatic_prompt_caching_reads_the_longest_prefix_seen(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    long = "Follow the house style. " * 250  # about 1500 tokens
    first = [{"role": "user", "content": "What is in a.py?"}]
    fake_server.queue(Reply("A docstring."), Reply("Nothing."), Reply("x"), Reply("x"))
    assert create(client, first, instructions=long).usage.input_tokens_details.cached_tokens == 0
    seen = fake_server.last_request.input_tokens
    later = [
        *first,
        {"role": "assistant", "content": "A docstring."},
        {"role": "user", "content": "And b.py?"},
    ]
    usage = create(client, later, instructions=long).usage
    assert usage.input_tokens_details.cached_tokens == seen >= 1024
    assert usage.input_tokens == fake_server.last_request.input_tokens > seen
    create(client, first, instructions="Short.")
    again = create(client, first, instructions="Short.").usage
    assert again.input_tokens_details.cached_tokens == 0  # a prefix under 1024 tokens is not cached


@pytest.mark.parametrize("streaming", [False, True])
def test_a_length_stop_is_incomplete(
    streaming: bool, client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("It goes on and on", stop="max_tokens"))
    if streaming:
        events = events_of(client, "hi")
        assert events[-1]["type"] == "response.incomplete"
        final = events[-1]["response"]
    else:
        final = create(client, "hi").to_dict()
    assert final["status"] == "incomplete"
    assert final["incomplete_details"] == {"reason": "max_output_tokens"}


# -- overflow and faults ---------------------------------------------------------------------------


def test_overflow_is_a_400_counting_instructions_tools_and_input(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    with FakeModelServer(context_window=200) as small:
        tight = openai.OpenAI(base_url=small.openai_base_url, api_key="k", max_retries=0)
        small.queue(Reply("ok"))
        assert create(tight, "hi", instructions="Be terse.").output_text == "ok"
        body = refusal(tight, "hi", instructions="Be terse. " * 80)
    assert body == {
        "error": {
            "message": OVERFLOW,
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }


def test_overflow_inside_a_stream(fake_server: FakeModelServer) -> None:
    with FakeModelServer(context_window=50, overflow_in_stream=True) as small:
        tight = openai.OpenAI(base_url=small.openai_base_url, api_key="k", max_retries=0)
        events = events_of(tight, "x" * 400)
        assert [e["type"] for e in events] == ["response.created", "response.failed"]
        failed = events[1]["response"]
        assert failed["status"] == "failed"
        assert failed["error"] == {"code": "context_length_exceeded", "message": OVERFLOW}
        # Not streamed, it is the 400.
        assert refusal(tight, "x" * 400)["error"]["code"] == "context_length_exceeded"
        assert small.pending == 0 and len(small.requests) == 2


def test_the_script_faults_work_here_too(client: openai.OpenAI, fake_server: FakeModelServer) -> None:
    fake_server.queue(Fault(429, headers={"retry-after": "0"}), Fault(500), Fault(529))
    for error in (openai.RateLimitError, openai.InternalServerError, openai.APIStatusError):
        with pytest.raises(error) as caught:
            create(client, "hi")
    assert caught.value.status_code == 529
    fake_server.queue(Truncate())
    kinds = [e["type"] for e in events_of(client, "hi")]
    assert "response.output_item.done" in kinds
    assert "response.completed" not in kinds and "response.incomplete" not in kinds
    fake_server.queue(StreamError(after_events=4))
    events = events_of(client, "hi")
    assert len(events) == 5 and events[-1]["type"] == "error" and events[-1]["code"] == "server_error"
    assert events[-1]["sequence_number"] == 4
    fake_server.queue(Drop(after_events=4))
    seen: list[str] = []
    with pytest.raises(openai.APIConnectionError):  # the connection dies mid-stream
        for event in create(client, "hi", stream=True):
            seen.append(event.type)
    assert len(seen) == 4


# -- how items pair up -----------------------------------------------------------------------------


def test_an_output_without_its_call_is_400(client: openai.OpenAI) -> None:
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call_output", "call_id": "call_9", "output": "x"},
    ]
    error = refusal(client, items)["error"]
    assert error["message"] == "No tool call found for function call output with call_id call_9."
    assert (error["type"], error["param"]) == ("invalid_request_error", "input")


@pytest.mark.parametrize("then_user", [False, True])
def test_a_call_without_its_output_is_400(then_user: bool, client: openai.OpenAI) -> None:
    items: list[Any] = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
    ]
    if then_user:  # the output comes, but too late
        items += [
            {"role": "user", "content": "and?"},
            {"type": "function_call_output", "call_id": "call_1", "output": "x"},
        ]
    assert refusal(client, items)["error"]["message"] == "No tool output found for function call call_1."


def test_reasoning_by_reference_is_a_404_when_nothing_is_stored(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    items = tool_loop(client, fake_server, 1)
    del items[1]["encrypted_content"]
    assert refusal(client, items, 404, **STATELESS)["error"]["message"] == (
        f"Item with id '{items[1]['id']}' not found. Items are not persisted when `store` is set to false. "
        "Try again with `store` set to true, or remove this item from your input."
    )


def test_reasoning_without_its_following_item_is_400(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    items = tool_loop(client, fake_server, 1)
    reasoning = items[1]
    del items[2:]
    items.append({"role": "user", "content": "never mind"})
    assert refusal(client, items, **STATELESS)["error"]["message"] == (
        f"Item '{reasoning['id']}' of type 'reasoning' was provided without its required following item."
    )
    del reasoning["id"]  # the id is a required field
    error = refusal(client, items, **STATELESS)["error"]
    assert error["message"] == "Missing required parameter: 'input[1].id'."
    assert (error["code"], error["param"]) == ("missing_required_parameter", "input[1].id")


def test_a_call_with_its_id_needs_its_reasoning(client: openai.OpenAI, fake_server: FakeModelServer) -> None:
    items = tool_loop(client, fake_server, 1)
    reasoning = items.pop(1)
    call = items[1]
    assert refusal(client, items, **STATELESS)["error"]["message"] == (
        f"Item '{call['id']}' of type 'function_call' was provided without its required 'reasoning' item: "
        f"'{reasoning['id']}'."
    )
    del call["id"]  # without ids, as Codex sends them, dropping the reasoning is fine
    assert finish(client, fake_server, items).output_text == "done"


# -- what the newest models refuse -----------------------------------------------------------------


@pytest.mark.parametrize("model", ["gpt-6.2-sol", "gpt-6.2-astra", "gpt-6.1-sol"])
def test_effort_none_is_refused_by_the_newest_models(model: str, client: openai.OpenAI) -> None:
    error = refusal(client, "hi", model=model, reasoning={"effort": "none"})["error"]
    assert (
        error["message"] == "Unsupported value: 'reasoning.effort' does not support 'none' with this model."
    )
    assert error["param"] == "reasoning.effort"


@pytest.mark.parametrize("name", ["temperature", "top_p"])
def test_sampling_parameters_are_refused_by_gpt6(
    name: str, client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    error = refusal(client, "hi", **{name: 0.5})["error"]
    assert error["message"] == f"Unsupported parameter: '{name}' is not supported with this model."
    fake_server.queue(Reply("ok"), Reply("ok"))
    assert create(client, "hi", **{name: 1}).output_text == "ok"  # the default is fine
    assert create(client, "hi", model="gpt-4.1", **{name: 0.5}).output_text == "ok"


# -- the reasoning round trip ----------------------------------------------------------------------


@pytest.mark.parametrize("with_ids", [True, False])
def test_replayed_reasoning_is_accepted_and_counted(
    with_ids: bool, client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    items = tool_loop(client, fake_server)
    assert [r.reasoning_accepted for r in fake_server.requests] == [0, 1]
    if not with_ids:  # but the reasoning items' (required); a string and its input_text parts are one message
        items = [
            {k: v for k, v in item.items() if k not in ("id", "status") or item.get("type") == "reasoning"}
            for item in items
        ]
        items[0]["content"] = [{"type": "input_text", "text": items[0]["content"]}]
    reply = finish(client, fake_server, items)
    assert reply.output_text == "done" and reply.input_transformations is None
    assert (fake_server.last_request.reasoning_accepted, fake_server.last_request.reasoning_withheld) == (
        2,
        0,
    )


def test_reasoning_after_an_edit_is_withheld_silently(
    client: openai.OpenAI, fake_server: FakeModelServer
) -> None:
    items = tool_loop(client, fake_server)
    finish(client, fake_server, items)
    full = fake_server.last_request.input_tokens
    items[3]["output"] = "contents of f0"  # the first result, shortened: the second reasoning no longer holds
    reply = finish(client, fake_server, items)
    assert reply.output_text == "done"
    assert (fake_server.last_request.reasoning_accepted, fake_server.last_request.reasoning_withheld) == (
        1,
        1,
    )
    (withheld,) = [t.to_dict() for t in reply.input_transformations or []]
    assert withheld == {
        "id": items[4]["id"],
        "action": "removed",
        "type": "reasoning",
        "reason": "prefix_mismatch",
    }
    assert (
        full - fake_server.last_request.input_tokens > 150
    )  # the withheld reasoning is not read, so not counted


def test_another_models_reasoning_is_withheld(client: openai.OpenAI, fake_server: FakeModelServer) -> None:
    items = tool_loop(client, fake_server, 1)
    reply = finish(client, fake_server, items, model="gpt-6.1-terra")
    assert [t.reason for t in reply.input_transformations or []] == ["model_mismatch"]
    assert fake_server.last_request.reasoning_withheld == 1

"""Our own requests billed as the wire sends them (billing/wire_units.py over providers' to_wire)."""

from __future__ import annotations

from agent_cli.billing import AnthropicCache, AutomaticCache, Bill, CachePrices, CacheTerms
from agent_cli.billing.wire_units import anthropic_request, chat_request, responses_request
from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.core.requests import Request, RequestOptions, ToolSpec
from agent_cli.providers import anthropic_wire, chat_wire, responses_wire
from agent_cli.providers.model_info import cache_terms
from agent_cli.providers.model_names import keeps_prior_thinking
from agent_cli.providers.models import lookup

MODEL = "claude-opus-4-6"
TOOLS = (ToolSpec("read_file", "Read a file. " * 300, {"type": "object", "properties": {}}),)


def count(text: str) -> int:
    return len(text) // 4


def _history(turns: int) -> tuple[Message, ...]:
    messages = [Message.user("Read every file under src/.")]
    for i in range(turns):
        call = ToolUse(f"t{i}", "read_file", {"path": f"src/m{i}.py"})
        messages.append(Message("assistant", (call,)))
        messages.append(Message("user", (ToolResult(f"t{i}", f"line {i}\n" * 400),)))
    return tuple(messages)


def _cache() -> AnthropicCache:
    info = lookup(MODEL)
    assert info is not None
    return AnthropicCache({MODEL: cache_terms(info)})


def _bill(cache: AnthropicCache, request: Request, at: float) -> Bill:
    wire = anthropic_wire.to_wire(request, MODEL, caching=True)
    return cache.bill(anthropic_request(wire, count, at))


def test_a_growing_conversation_reads_the_last_write() -> None:
    cache = _cache()
    system = "You are a coding agent. " * 400
    first = _bill(cache, Request(system, _history(3), TOOLS), 0)
    second = _bill(cache, Request(system, _history(4), TOOLS), 5)
    assert first.read == 0 and first.write > 0
    assert second.read == first.prompt - first.input
    assert second.write == second.prompt - second.read - second.input


def test_a_summary_call_with_tool_choice_none_reads_only_tools_and_system() -> None:
    """The audit's bias: a summary request that sends `tool_choice: none` is a miss on the messages."""
    cache = _cache()
    system = "You are a coding agent. " * 1000  # tools and system above Opus 4.6's 4,096-token minimum
    history = _history(4)
    main = _bill(cache, Request(system, history, TOOLS), 0)
    ask = Message.user("Summarize the conversation so far.")
    summary = _bill(
        cache, Request(system, (*history, ask), TOOLS, options=RequestOptions(tool_choice="none")), 5
    )
    same_choice = _bill(_cache(), Request(system, history, TOOLS), 0)
    assert main == same_choice
    units = anthropic_request(
        anthropic_wire.to_wire(Request(system, history, TOOLS), MODEL, caching=True), count, 0
    )
    frame = sum(u.tokens for u in units.units if u.section != "messages")
    assert summary.read == frame  # tools and system only
    assert summary.write == summary.prompt - frame - summary.input  # the whole history written again
    cache = _cache()
    _bill(cache, Request(system, history, TOOLS), 0)
    kept = _bill(
        cache, Request(system, (*history, ask), TOOLS), 5
    )  # the same tool_choice: the history is read
    assert kept.read == main.prompt - main.input


def test_the_chat_wire_on_the_automatic_cache() -> None:
    cache = AutomaticCache({"gpt-5": CacheTerms(CachePrices(1.25, 0.125, 1.25, 1.25))})
    system = "You are a coding agent. " * 400
    wire1 = chat_wire.to_wire(Request(system, _history(2), TOOLS), "gpt-5")
    wire2 = chat_wire.to_wire(Request(system, _history(3), TOOLS), "gpt-5")
    cache.bill(chat_request(wire1, count, 0))
    second = cache.bill(chat_request(wire2, count, 5))
    assert second.read >= 1024 and second.read % 128 == 0
    assert second.write == 0


def test_a_responses_conversation_is_billed_by_openais_rule_at_the_models_prices() -> None:
    """The Responses wire through OpenAI's automatic cache (the long-session benchmark bills its runs
    so): the next request reads the previous one's prefix in 128-token steps, at the model's cached
    ratio; gpt-6.2-sol lists a cache-write price (1.25x its input), so what is not read is written;
    a clear of the first result sends everything after it again."""
    info = lookup("gpt-6.2-sol")
    assert info is not None
    cache = AutomaticCache({"gpt-6.2-sol": cache_terms(info)})
    system = "You are a coding agent. " * 400
    wire1 = responses_wire.to_wire(Request(system, _history(2), TOOLS), "gpt-6.2-sol")
    wire2 = responses_wire.to_wire(Request(system, _history(3), TOOLS), "gpt-6.2-sol")
    first = cache.bill(responses_request(wire1, count, 0))
    second = cache.bill(responses_request(wire2, count, 5))
    assert first.read == 0 and first.write == first.prompt  # everything sent new is written
    assert second.read >= 1024 and second.read % 128 == 0 and second.read > first.prompt - 128
    assert second.write == second.prompt - second.read and second.input == 0
    assert abs(second.usd - (second.read * 0.10 + second.write * 2.50) / 1e6) < 1e-12
    cleared = list(_history(3))
    cleared[2] = Message("user", (ToolResult("t0", "[cleared]"),))
    third = cache.bill(
        responses_request(
            responses_wire.to_wire(Request(system, tuple(cleared), TOOLS), "gpt-6.2-sol"), count, 10
        )
    )
    assert third.read <= count(system) + sum(count(str(t)) for t in wire1["tools"]) + 200


def _thinking_wire(model: str, *, turns: int) -> dict[str, object]:
    """A Messages payload with thinking: a tool step, its answer, then (turns=2) a new user turn.
    The breakpoints sit where Claude Code puts them: the system prompt and the newest block."""
    mark = {"type": "ephemeral"}
    system = [{"type": "text", "text": "You are a coding agent. " * 2000, "cache_control": mark}]
    step: list[dict[str, object]] = [
        {"role": "user", "content": "Fix the failing test."},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "The test fails on import. " * 100, "signature": "s1"},
                {"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "pytest -x"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "1 passed " * 300}],
        },
    ]
    if turns == 1:
        step[-1]["content"][0]["cache_control"] = mark  # type: ignore[index]
        return {"model": model, "system": system, "messages": step}
    answer = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "It passes now. " * 50, "signature": "s2"},
            {"type": "text", "text": "Fixed: the import was circular."},
        ],
    }
    ask = {"role": "user", "content": [{"type": "text", "text": "Run the linter.", "cache_control": mark}]}
    return {"model": model, "system": system, "messages": [*step, answer, ask]}


def test_a_new_user_turn_after_thinking_keeps_or_strips_it_as_the_model_does() -> None:
    """Opus 4.6 keeps earlier turns' thinking in context, so a new user turn reads the whole last
    write; Haiku 4.5 strips it once a non-tool-result user message arrives, so the prefix changes at
    the first thinking block and only the system prompt is read (platform.claude.com/docs/en/
    build-with-claude/prompt-caching, "What invalidates the cache", read 2026-12-05). Before the
    rule, both models read the whole prefix (the Haiku case failed: it read 13,337, not 12,000)."""
    for model, keeps in (("claude-opus-4-6", True), ("claude-haiku-4-5-20251001", False)):
        info = lookup(model)
        assert info is not None
        cache = AnthropicCache({model: cache_terms(info)})
        first = cache.bill(anthropic_request(_thinking_wire(model, turns=1), count, 0, keeps_prior_thinking))
        second = cache.bill(anthropic_request(_thinking_wire(model, turns=2), count, 5, keeps_prior_thinking))
        system = count("You are a coding agent. " * 2000)
        assert first.read == 0 and first.write == first.prompt - first.input
        if keeps:
            assert second.read == first.prompt - first.input, model
        else:
            assert second.read == system, model

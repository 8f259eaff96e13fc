"""After the engine edits history: strip the later thinking, or send it and let the API drop it?

    python benchmarks/thinking_binding.py

Claude 5.5 binds each thinking block to the conversation before it. When L1 clears an old tool
result, every later block no longer matches. Two ways to keep the request valid:

    strip       the engine removes the thinking of every turn after the first change (ours)
    drop_block  send it all, with thinking.block_binding.prefix_mismatch_behavior = "drop_block"
                (beta header thinking-binding-controls-2026-08-01): the API drops the failing
                block and every later one

Both through the real Anthropic adapter against the in-repo fake, which implements the documented
binding and prompt cache. A conversation of 8 tool rounds (signed thinking each), then L1 clears
the 4 oldest results, then 6 more rounds. Printed per way: thinking blocks the model read after the
edit (summed over the requests), cache reads and writes, input tokens, and bytes sent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.core.messages import Message, ToolResult  # noqa: E402
from agent_cli.core.requests import Completion, Request, ToolSpec  # noqa: E402
from agent_cli.core.thinking import settle_thinking  # noqa: E402
from agent_cli.providers.anthropic import AnthropicProvider  # noqa: E402
from agent_cli.providers.anthropic_wire import ThinkingConfig, to_wire  # noqa: E402
from agent_cli.providers.models import lookup  # noqa: E402
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec  # noqa: E402

MODEL = "claude-sonnet-5-5"
TOOLS = (
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
)
SYSTEM = "You are a coding agent working in the user's project. " * 60


def send(p: AnthropicProvider, history: list[Message], totals: dict[str, int]) -> Completion:
    request = Request(SYSTEM, tuple(history), TOOLS, max_tokens=2_000)
    assert p.thinking is not None
    totals["bytes"] += len(json.dumps(to_wire(request, MODEL, caching=True, thinking=p.thinking)))
    done = [e for e in p.stream(request) if isinstance(e, Completion)][-1]
    totals["cache_read"] += done.usage.cache_read_tokens
    totals["cache_write"] += done.usage.cache_write_tokens
    totals["input"] += done.usage.input_tokens + done.usage.cache_read_tokens + done.usage.cache_write_tokens
    return done


def round_trip(
    server: FakeModelServer, p: AnthropicProvider, history: list[Message], n: int, totals: dict[str, int]
) -> list[Message]:
    server.queue(
        Reply(
            f"notes on module {n} " * 120,
            tool_calls=[ToolCallSpec("read_file", {"path": f"m{n}.py"})],
            thinking=f"reading m{n}.py",
            reasoning_tokens=600,
        )
    )
    reply = send(p, history, totals).message
    (use,) = reply.tool_uses
    return [*history, reply, Message("user", (ToolResult(use.id, f"def f{n}(): pass  # " + "x" * 5_000),))]


def clear_oldest(history: list[Message], count: int) -> list[Message]:
    """L1's edit: the `count` oldest tool results become one-line stubs (thinking left as it was)."""
    out, cleared = [], 0
    for m in history:
        if m.tool_results and cleared < count:
            r = m.tool_results[0]
            m = m.replace(
                [ToolResult(r.tool_use_id, f"[cleared to save context: call recall({r.tool_use_id!r})]")]
            )
            cleared += 1
        out.append(m)
    return out


def run(way: str) -> dict[str, int]:
    info = lookup(MODEL)
    assert info is not None
    base = ThinkingConfig.for_model(info.accepts, effort=None, display="summarized")
    totals = {"read_after": 0, "cache_read": 0, "cache_write": 0, "input": 0, "bytes": 0}
    with FakeModelServer() as server:
        p = AnthropicProvider(MODEL, api_key="k", base_url=server.anthropic_base_url, thinking=base)
        history = [Message.user("read every module")]
        for n in range(8):
            history = round_trip(server, p, history, n, totals)
        edited = clear_oldest(history, 4)
        if way == "strip":
            history = settle_thinking(history, edited)
        else:
            history = edited
            drop = ThinkingConfig.for_model(
                info.accepts, effort=None, display="summarized", drop_invalid=True
            )
            p = AnthropicProvider(MODEL, api_key="k", base_url=server.anthropic_base_url, thinking=drop)
        after = len(server.requests)
        totals = {k: 0 for k in totals}  # what matters is from the edit on
        for n in range(8, 14):
            history = round_trip(server, p, history, n, totals)
        totals["read_after"] = sum(q.reasoning_accepted for q in server.requests[after:])
        totals["dropped"] = sum(q.reasoning_withheld for q in server.requests[after:])
        totals["requests"] = len(server.requests) - after
    return totals


def main() -> None:
    print("thinking after an edit: 8 signed rounds, L1 clears the 4 oldest results, then 6 more rounds")
    columns = ("thinking read", 13), ("dropped", 8), ("cache read", 11), ("cache write", 12), ("input", 8)
    print(f"  {'way':<11} " + " ".join(f"{name:>{width}}" for name, width in columns) + f" {'bytes':>9}")
    for way in ("strip", "drop_block"):
        t = run(way)
        figures = f"{t['read_after']:>13,} {t['dropped']:>8,} {t['cache_read']:>11,} {t['cache_write']:>12,}"
        print(f"  {way:<11} {figures} {t['input']:>8,} {t['bytes']:>9,}")


if __name__ == "__main__":
    main()

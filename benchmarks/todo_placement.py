"""Where the todo list rides, priced (issue 39, item 3): the bill of one session under Anthropic's
cache rule for each place the list could go.

    python benchmarks/todo_placement.py

The session: 30 requests of a tool loop (each adds a call and a ~1,500-token result), a 3,000-token
system prompt and 2,000 tokens of tools, the list (~120 tokens) written at request 3 and changed at
requests 8, 14, 20 and 26 (5 writes), one request every 20 seconds (inside the 5-minute TTL). Every
request goes through `providers.anthropic_wire.to_wire(..., caching=True)` (our breakpoints: the
system block, the last tool, the newest message) and is billed by `billing.AnthropicCache`.

Three placements:

- `system`: the list at the end of the system prompt (as the pins ride). A change rewrites the
  whole cache (system, then every message after it), and on Claude's thinking models it also unbinds
  every preserved thinking block (the loop strips them; not priced here).
- `note` (ours, context/protocol.py): in the newest user message when the list changes (todo_write's
  own result there), then left where it is. The prefix before it never changes.
- `every`: the list at the end of the newest user message of every request, not kept. The newest
  message carries the breakpoint, so every entry written ends with a list the next request no
  longer has there: each request misses back to the tools and system prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from agent_cli.billing import AnthropicCache, Bill
from agent_cli.billing.wire_units import anthropic_request
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.core.requests import Request, ToolSpec
from agent_cli.core.todos import TodoItem, todo_note
from agent_cli.providers import anthropic_wire
from agent_cli.providers.model_info import cache_terms
from agent_cli.providers.model_names import keeps_prior_thinking
from agent_cli.providers.models import lookup

__all__ = ["CHANGES", "MODEL", "REQUESTS", "Placement", "session_bill"]

MODEL = "claude-sonnet-4-5"
REQUESTS = 30
CHANGES = (3, 8, 14, 20, 26)  # the requests after which todo_write changed the list
SECONDS_APART = 20.0
Placement = Literal["none", "system", "note", "every"]

SYSTEM = "You are a coding agent. " * 500  # ~3,000 tokens
TOOLS = tuple(ToolSpec(f"tool{i}", "Does one thing. " * 125, {"type": "object"}) for i in range(4))


def count(text: str) -> int:
    return len(text) // 4


def _list(version: int) -> str:
    items = [TodoItem(f"Step {k}: change module m{k} and run its tests", "pending") for k in range(6)]
    done = [TodoItem(i.content, "completed") if n < version else i for n, i in enumerate(items)]
    return todo_note(done)


def _requests(placement: Placement) -> Sequence[Request]:
    history: list[Message] = [Message.user("Change every module and keep the tests green.")]
    version = 0
    out: list[Request] = []
    for n in range(REQUESTS):
        note = _list(version) if version else ""
        system = SYSTEM + ("\n\n" + note if placement == "system" and note else "")
        messages = list(history)
        if placement == "every" and note:
            last = messages[-1]
            messages[-1] = Message(last.role, (*last.content, TextBlock(note)))
        out.append(Request(system, tuple(messages), TOOLS))
        call = ToolUse(f"t{n}", "tool0", {"path": f"src/m{n}.py"})
        history.append(Message("assistant", (TextBlock(f"Working on step {n}."), call)))
        output = f"line {n} of the output\n" * 250
        if n + 1 in CHANGES:
            version += 1
            if placement == "note":  # todo_write's own result in the round carries the new list, once
                output += "\n\n" + _list(version)
        history.append(Message("user", (ToolResult(f"t{n}", output),)))
    return out


def session_bill(placement: Placement) -> Bill:
    info = lookup(MODEL)
    assert info is not None
    cache = AnthropicCache({MODEL: cache_terms(info)})
    total = Bill()
    for n, request in enumerate(_requests(placement)):
        wire = anthropic_wire.to_wire(request, MODEL, caching=True)
        total += cache.bill(anthropic_request(wire, count, n * SECONDS_APART, keeps_prior_thinking))
    return total


def main() -> None:
    base = session_bill("none")
    print(f"{REQUESTS} requests, {len(CHANGES)} list changes, {MODEL}, billed by AnthropicCache")
    print(f"{'placement':<10} {'input':>8} {'read':>9} {'write':>8} {'USD':>8} {'vs none':>8}")
    for placement in ("none", "note", "system", "every"):
        bill = session_bill(placement)  # type: ignore[arg-type]
        extra = bill.usd - base.usd
        counts = f"{bill.input:>8,} {bill.read:>9,} {bill.write:>8,}"
        print(f"{placement:<10} {counts} {bill.usd:>8.4f} {extra:>+8.4f}")


if __name__ == "__main__":
    main()

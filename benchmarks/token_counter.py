"""Per-turn cost of counting a request: TokenCounter against a full re-count every turn.

Run from the repository root: `python -m benchmarks.token_counter [--turns N] [--model M --provider P]`

Builds conversations of about 10k, 100k and 200k tokens (a realistic mix of
user requests, tool calls, file reads, command output and assistant analyses),
then plays turns: each turn appends one new message and counts the request.

- naive chars/3: serialize the whole history and divide its length by 3 (how
  the seed compactors estimate), every turn;
- naive tiktoken: re-tokenize every message of the history, every turn;
- TokenCounter: `count_request` (anchor from the last report + new message),
  then `observe` with the simulated usage report, as the loop does.

Prints medians in milliseconds and how many times faster the counter is.
Not a timed test: the figures go into reviews and docs, not assertions.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence

from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse, Usage
from agent_cli.core.requests import ToolSpec
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.tokens.counter import TokenCounter
from agent_cli.tokens.encodings import get_encoding

_WORDS = """the parser token buffer returns index value state error handler request context window
summary message tool result file path line config cache layer budget count model stream
retry user assistant session transcript compact history system prompt input output test"""
WORDS = _WORDS.split()
IDENTS = ["parse_line", "TokenBuffer", "self.state", "ctx.window", "result", "items", "offset", "_cache"]
CJK = "这是一个关于上下文窗口的说明。トークン数を数えます。"

SYSTEM = "You are a coding agent working in a local repository. " * 60
TOOLS = tuple(
    ToolSpec(name, f"{name} tool. " * 20, {"type": "object", "properties": {"path": {"type": "string"}}})
    for name in ("read_file", "write_file", "edit_file", "bash", "glob", "grep", "compact", "recall")
)


def _prose(rng: random.Random, words: int) -> str:
    out = " ".join(rng.choice(WORDS) for _ in range(words))
    return out + (" " + CJK if rng.random() < 0.1 else "") + "."


def _code(rng: random.Random, lines: int) -> str:
    rows = []
    for i in range(1, lines + 1):
        indent = "    " * rng.randint(0, 3)
        a, b = rng.choice(IDENTS), rng.choice(IDENTS)
        rows.append(f"{i:>5}\t{indent}{a} = {b}({rng.randint(0, 999)}, {rng.choice(WORDS)!r})")
    return "\n".join(rows)


def _turn(rng: random.Random, i: int) -> list[Message]:
    """One round: request, tool call, tool output, analysis (sizes vary as in real sessions)."""
    call_id = f"toolu_{i:06d}{rng.randrange(16**8):08x}"
    if rng.random() < 0.7:
        call = ToolUse(call_id, "read_file", {"path": f"src/pkg/module_{i}.py"})
        output = _code(rng, rng.randint(20, 160))
    else:
        call = ToolUse(call_id, "bash", {"command": f"pytest -q tests/test_{i}.py"})
        output = "\n".join(_prose(rng, 12) for _ in range(rng.randint(5, 60)))
    return [
        Message.user(_prose(rng, rng.randint(10, 60))),
        Message.of("assistant", [TextBlock(_prose(rng, 20)), call]),
        Message.of("user", [ToolResult(call_id, output)]),
        Message.assistant(_prose(rng, rng.randint(60, 300))),
    ]


def build_history(target_tokens: int, seed: int = 7) -> tuple[list[Message], list[Message]]:
    """A history of about `target_tokens` (o200k) tokens, and a stream of messages to append."""
    rng = random.Random(seed)
    enc = get_encoding("o200k_base")
    history: list[Message] = []
    total = 0
    i = 0
    while total < target_tokens:
        for msg in _turn(rng, i):
            history.append(msg)
            total += sum(len(enc.encode_ordinary(_text(b))) for b in msg.content)
        i += 1
    future = [m for k in range(i, i + 40) for m in _turn(rng, k)]
    return history, future


def _text(block: object) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUse):
        return block.name + json.dumps(dict(block.input))
    if isinstance(block, ToolResult):
        return block.content
    return ""


def naive_chars(messages: Sequence[Message]) -> int:
    return sum(len(json.dumps(m.to_json())) for m in messages) // 3


def naive_tiktoken(messages: Sequence[Message]) -> int:
    enc = get_encoding("o200k_base")
    return sum(len(enc.encode_ordinary(_text(b))) for m in messages for b in m.content)


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _play(
    history: list[Message], future: list[Message], turns: int, count: Callable[[list[Message]], object]
) -> float:
    msgs = list(history)
    times = []
    for new in future[:turns]:
        msgs.append(new)
        t = time.perf_counter()
        count(msgs)
        times.append(time.perf_counter() - t)
    return _median_ms(times)


def bench(size: int, turns: int, model: str, provider: str) -> dict[str, float]:
    history, future = build_history(size)
    counter = TokenCounter(model, tokenizer_for(model, provider))
    t = time.perf_counter()
    first = counter.count_request(SYSTEM, TOOLS, history)
    cold_ms = (time.perf_counter() - t) * 1000
    counter.observe(SYSTEM, TOOLS, history, Usage(input_tokens=first))

    msgs = list(history)
    count_times, observe_times = [], []
    for new in future[:turns]:
        msgs.append(new)
        t0 = time.perf_counter()
        tokens = counter.count_request(SYSTEM, TOOLS, msgs)
        t1 = time.perf_counter()
        counter.observe(SYSTEM, TOOLS, msgs, Usage(input_tokens=tokens))  # the provider's report
        observe_times.append(time.perf_counter() - t1)
        count_times.append(t1 - t0)

    # Without usage reports (a server that sends none): a full count, every message from the cache.
    unanchored = TokenCounter(model, tokenizer_for(model, provider))
    unanchored.count_request(SYSTEM, TOOLS, history)

    return {
        "no_anchor": _play(history, future, turns, lambda m: unanchored.count_request(SYSTEM, TOOLS, m)),
        "messages": len(history),
        "tokens": first,
        "chars3": _play(history, future, turns, naive_chars),
        "tiktoken": _play(history, future, turns, naive_tiktoken),
        "cold": cold_ms,
        "count": _median_ms(count_times),
        "count_p90": statistics.quantiles(count_times, n=10)[-1] * 1000,
        "observe": _median_ms(observe_times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40, help="turns played per history size")
    parser.add_argument("--model", default="claude-sonnet-4-5")
    parser.add_argument("--provider", default="anthropic")
    args = parser.parse_args()
    get_encoding("o200k_base")  # load vocabularies before timing anything
    get_encoding("cl100k_base")

    print(f"model {args.model} ({args.provider}), {args.turns} turns per size, medians in ms per turn\n")
    header = (
        f"{'history':>8} {'msgs':>5} {'chars/3':>8} {'tiktoken':>9} {'counter':>8} {'(p90)':>7} "
        f"{'+observe':>9} {'vs chars/3':>10} {'vs tiktoken':>11} {'no anchor':>9} {'cold':>7}"
    )
    print(header)
    print("-" * len(header))
    for size in (10_000, 100_000, 200_000):
        r = bench(size, args.turns, args.model, args.provider)
        print(
            f"{size // 1000:>7}k {r['messages']:>5.0f} {r['chars3']:>8.2f} {r['tiktoken']:>9.2f} "
            f"{r['count']:>8.3f} {r['count_p90']:>7.3f} {r['observe']:>9.3f} "
            f"{r['chars3'] / r['count']:>9.0f}x {r['tiktoken'] / r['count']:>10.0f}x "
            f"{r['no_anchor']:>9.3f} {r['cold']:>7.1f}"
        )
    print("\ncounter: count_request with the anchor from the last report plus the new message;")
    print("+observe: recording the report afterwards; no anchor: a counter that never gets a usage")
    print("report (full count from the per-message cache); cold: the first full count of the history.")


if __name__ == "__main__":
    main()

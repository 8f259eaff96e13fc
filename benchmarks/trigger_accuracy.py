"""How far off is the count the engine decides on, and would the provider's count_tokens call help?

    python benchmarks/trigger_accuracy.py [--turns 60]

The engine counts a request as the provider's last usage report plus a local count (tiktoken
cl100k_base times a learned ratio) of what was appended since. Its error is therefore the ratio's
error on the appended part only. This replays a session in process (tool output of four kinds:
code, prose, JSON, CJK text; an answer each turn) against three stand-ins for a provider's
tokenizer (a newer, denser one: o200k_base x 1.30; one close to ours: cl100k_base x 1.05; the
fake's characters / 4), feeding the counter a usage report after every request as the loop does.

Printed per tokenizer: the mean and largest error of the engine's count before each request, the
requests near the compaction line (within 15% of 80k), how many of those the local count puts on
the wrong side of the line (compacting a turn early or late), and the free `count_tokens` calls
that would settle them (Anthropic's `messages/count_tokens`, OpenAI's `responses/input_tokens`).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage  # noqa: E402
from agent_cli.core.requests import ToolSpec  # noqa: E402
from agent_cli.providers.model_names import tokenizer_for  # noqa: E402
from agent_cli.tokens.counter import TokenCounter  # noqa: E402
from agent_cli.tokens.encodings import get_encoding  # noqa: E402

TRIGGER = 80_000
NEAR = 0.15
SYSTEM = "You are a coding agent working in the user's project through tools. " * 40
TOOLS = (
    ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),
)


def tool_output(kind: str, rng: random.Random, size: int) -> str:
    if kind == "code":
        lines = [f"def f_{i}(x):\n    return x * {rng.randint(1, 99)}  # step {i}" for i in range(size // 40)]
        return "\n".join(lines)
    if kind == "json":
        items = [
            f'{{"id": {i}, "name": "item{i}", "tags": ["a", "b"], "ok": true}}' for i in range(size // 60)
        ]
        return "[" + ",\n".join(items) + "]"
    if kind == "cjk":
        return ("日本語のテキストと中文的文本以及한국어 텍스트가 섞여 있습니다。" * (size // 30))[:size]
    words = ["the", "parser", "reads", "a", "token", "stream", "and", "builds", "the", "tree"]
    return " ".join(rng.choice(words) for _ in range(size // 5))


def provider_tokenizers() -> dict[str, Callable[[str], int]]:
    o200k, cl100k = get_encoding("o200k_base"), get_encoding("cl100k_base")
    return {
        "o200k x 1.30 (a denser tokenizer)": lambda t: round(len(o200k.encode_ordinary(t)) * 1.30),
        "cl100k x 1.05 (close to ours)": lambda t: round(len(cl100k.encode_ordinary(t)) * 1.05),
        "characters / 4 (the fake)": lambda t: (len(t) + 3) // 4,
    }


def request_text(messages: list[Message]) -> str:
    parts = [SYSTEM, *(f"{t.name} {t.description} {t.input_schema}" for t in TOOLS)]
    for m in messages:
        for block in m.content:
            parts.append(str(block.to_json()))
    return "\n".join(parts)


def replay(count: Callable[[str], int], turns: int) -> dict[str, float]:
    rng = random.Random(5)
    counter = TokenCounter("claude-sonnet-5-5", tokenizer_for("claude-sonnet-5-5", "anthropic"))
    messages: list[Message] = [Message.user("survey the project")]
    errors: list[float] = []
    near = wrong = 0
    for t in range(turns):
        kind = ("code", "prose", "json", "cjk")[t % 4]
        use = ToolUse(f"t{t}", "read_file", {"path": f"src/f{t}.txt"})
        messages += [
            Message("assistant", (use,)),
            Message("user", (ToolResult(use.id, tool_output(kind, rng, rng.randint(2_000, 12_000))),)),
        ]
        estimate = counter.count_request(SYSTEM, TOOLS, messages)
        truth = count(request_text(messages))
        errors.append(abs(estimate - truth) / truth)
        if abs(truth - TRIGGER) <= TRIGGER * NEAR:
            near += 1
            wrong += (estimate >= TRIGGER) != (truth >= TRIGGER)
        counter.observe(SYSTEM, TOOLS, messages, Usage(input_tokens=truth, output_tokens=50))
        messages.append(Message.assistant(f"notes on f{t}: " + tool_output("prose", rng, 1_500)))
        if truth > TRIGGER * 1.3:  # as if compacted: start again from a short record
            messages = [Message.user("[record of the earlier work]"), Message.assistant("ok")]
    return {
        "mean": statistics.mean(errors[1:]) * 100,
        "max": max(errors[1:]) * 100,
        "first": errors[0] * 100,
        "near": near,
        "wrong": wrong,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    print(f"trigger accuracy: {args.turns} turns, compaction line {TRIGGER:,}, 'near' = within {NEAR:.0%}")
    columns = f"{'first':>7} {'mean err':>9} {'max err':>8} {'near':>5} {'wrong side':>11}"
    print(f"  {'provider tokenizer':<36} {columns}")
    for name, count in provider_tokenizers().items():
        r = replay(count, args.turns)
        print(
            f"  {name:<36} {r['first']:>6.1f}% {r['mean']:>8.1f}% {r['max']:>7.1f}% "
            f"{r['near']:>5.0f} {r['wrong']:>11.0f}"
        )
    print("  (first: the first request, before any report; err: after it, anchored on the last report)")


if __name__ == "__main__":
    main()

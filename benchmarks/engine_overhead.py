"""The context engine's per-turn overhead, against a full re-count each turn (the seeds' way).

    python benchmarks/engine_overhead.py [--turns 60]

For histories of about 10k, 100k and 200k tokens (file reads, tool calls and
analyses), each timed turn appends a user message and an answer, then runs
what the loop runs before a request: `prepare` (the count, and the layer
checks) and, after it, `observe` with the usage report. Two engine states:
"quiet" (well under every line) and "armed" (above the L1 line, where the
clear check runs every turn and clears a batch when one is worth it). Baselines, timed on the same
histories: the Kotlin seed's estimate (characters / 3 over every message, tool
input JSON included) and the JavaScript seed's (JSON of every message, scanned
for CJK), both recomputed over the whole history each turn as the seeds do,
and an exact tiktoken re-count of everything. Goal: < 2 ms per turn at 200k.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.context.engine import ContextEngine, Frame  # noqa: E402
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage  # noqa: E402
from agent_cli.core.requests import Request, ToolSpec  # noqa: E402
from agent_cli.providers.model_names import tokenizer_for  # noqa: E402
from agent_cli.store.archive import Archive  # noqa: E402
from agent_cli.tokens.counter import TokenCounter  # noqa: E402
from agent_cli.tokens.encodings import get_encoding  # noqa: E402

CODE = [
    "    def handler_{i}(self, request: Request) -> Response:  # parse buffer {i} and answer\n",
    "        value = self.cache.get(request.key_{i}, default=None)  # layer {i}\n",
    "        return Response(status=200, body=json.dumps(value), headers={{'x-id': '{i}'}})\n",
]


def history_of(tokens: int) -> list[Message]:
    out: list[Message] = []
    chars = 0
    i = 0
    while chars < tokens * 4:
        use = ToolUse(f"toolu_{i}", "read_file", {"path": f"src/module_{i}.py"})
        body = "".join(CODE[k % 3].format(i=i * 100 + k) for k in range(90))
        analysis = f"Module {i} parses requests and caches values per key; " * 30
        out += [
            Message.user(f"look at module {i} and explain the cache"),
            Message("assistant", (use,)),
            Message("user", (ToolResult(use.id, body),)),
            Message.assistant(analysis),
        ]
        chars += len(body) + len(analysis) + 60
        i += 1
    return out


def kotlin_seed_estimate(messages: list[Message]) -> int:
    chars = 0
    for m in messages:
        chars += len(m.text)
        for use in m.tool_uses:
            chars += len(use.name) + len(json.dumps(dict(use.input)))
        for result in m.tool_results:
            chars += len(result.tool_use_id) + len(result.content)
    return chars // 3


def js_seed_estimate(messages: list[Message]) -> int:
    total = 0
    for m in messages:
        text = json.dumps(m.to_json(), ensure_ascii=False)
        cjk = sum(1 for ch in text if 0x4E00 <= ord(ch) <= 0x9FFF or 0x3040 <= ord(ch) <= 0x30FF)
        total += int(cjk / 1.5 + (len(text) - cjk) / 4) + 4
    return total


def tiktoken_recount(messages: list[Message]) -> int:
    enc = get_encoding("cl100k_base")
    return sum(len(enc.encode_ordinary(json.dumps(m.to_json()))) for m in messages)


def never(_: Request) -> str:
    raise AssertionError("nothing is condensed in this benchmark")


def time_engine(base: list[Message], window: int, turns: int) -> tuple[float, float]:
    counter = TokenCounter("claude-sonnet-4-5", tokenizer_for("claude-sonnet-4-5", "anthropic"))
    frame = Frame(
        "You are a coding agent. " * 200, (ToolSpec("read_file", "Read a file.", {"type": "object"}),)
    )
    with tempfile.TemporaryDirectory() as tmp:
        engine = ContextEngine(
            # The lines follow the window (working_budget 0), so "quiet" and "armed" are where the
            # window puts them (with the 64k working budget a 100k history is past the trigger), and
            # no record is prepared ahead (prepare line at the trigger): nothing here is condensed.
            settings=ContextSettings(working_budget=0, prepare_ratio=ContextSettings().trigger_ratio),
            window=window,
            max_output=32_000,
            counter=counter,
            archive=Archive(Path(tmp)),
            summarize=never,
        )
        history = engine.prepare(base, frame).messages  # a first call may clear a batch; not timed
        engine.observe(frame, history, Usage(input_tokens=engine.tokens(history, frame)))
        times = []
        for t in range(turns):
            history = [*history, Message.user(f"next step {t}"), Message.assistant("noted; moving on " * 20)]
            start = time.perf_counter()
            prepared = engine.prepare(history, frame)
            # The provider's report for this request: here the engine's own count stands in for it.
            engine.observe(
                frame, prepared.messages, Usage(input_tokens=engine.tokens(prepared.messages, frame))
            )
            times.append(time.perf_counter() - start)
            history = prepared.messages
    return statistics.median(times) * 1e3, sorted(times)[int(len(times) * 0.95)] * 1e3


def time_full(fn: Callable[[list[Message]], int], base: list[Message], turns: int) -> float:
    history = list(base)
    times = []
    for t in range(turns):
        history += [Message.user(f"next step {t}"), Message.assistant("noted; moving on " * 20)]
        start = time.perf_counter()
        fn(history)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    print("per-turn overhead in ms (median; p95 in brackets), Claude counting, real TokenCounter")
    print(
        f"{'history':>8} {'msgs':>5} | {'engine quiet':>16} {'engine armed':>16} | {'kotlin seed':>11} "
        f"{'js seed':>9} {'tiktoken':>9} | {'vs kotlin':>9} {'vs js':>7} {'vs tiktoken':>11}"
    )
    for size in (10_000, 100_000, 200_000):
        base = history_of(int(size * 0.77))  # characters / 4 undercounts this text by about 1.3x
        tokens = TokenCounter(
            "claude-sonnet-4-5", tokenizer_for("claude-sonnet-4-5", "anthropic")
        ).count_request("", (), base)
        quiet, quiet95 = time_engine(base, 2_000_000, args.turns)
        # A window where this history sits just above the L1 line (50% of the budget).
        armed, armed95 = time_engine(base, int(tokens * 1.7) + 40_000, args.turns)
        kotlin = time_full(kotlin_seed_estimate, base, max(10, args.turns // 5))
        js = time_full(js_seed_estimate, base, max(10, args.turns // 5))
        exact = time_full(tiktoken_recount, base, max(5, args.turns // 10))
        worst = max(quiet, armed)
        print(
            f"{tokens // 1000:>7}k {len(base):>5} | "
            f"{quiet:7.3f} [{quiet95:6.3f}] {armed:7.3f} [{armed95:6.3f}] | "
            f"{kotlin:11.2f} {js:9.2f} {exact:9.2f} | {kotlin / worst:8.0f}x {js / worst:6.0f}x "
            f"{exact / worst:10.0f}x"
        )
    print("goal: < 2 ms per turn at 200k")


if __name__ == "__main__":
    main()

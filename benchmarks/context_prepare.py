"""Per-turn cost of ContextEngine.prepare on a 200k-token history, with the real TokenCounter.

    python benchmarks/context_prepare.py [--tokens 200000] [--turns 200]

Builds a file-heavy history of about TOKENS tokens, then plays TURNS more turns:
each appends a user message and an assistant answer, calls `prepare`, and feeds
`observe` a usage report as the provider would. Printed: the median and p95 time
of `prepare` when nothing fires (a 1M window) and when the history is above the
L1 line but no batch is worth clearing (the check runs every turn there).
Goal: under 2 ms per turn.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.context.engine import ContextEngine, Frame  # noqa: E402
from agent_cli.context.transcripts import TranscriptStore  # noqa: E402
from agent_cli.messages import Message, ToolResult, ToolUse, Usage  # noqa: E402
from agent_cli.providers.base import Request, ToolSpec  # noqa: E402
from agent_cli.settings import ContextSettings  # noqa: E402
from agent_cli.tokens.counter import TokenCounter  # noqa: E402

LINE = "    def handler(self, request: Request) -> Response:  # parse the buffer and answer\n"


def history_of(tokens: int, *, result_lines: int = 60, analysis_words: int = 150) -> list[Message]:
    out: list[Message] = []
    i = 0
    while sum(len(m.text) + sum(len(r.content) for r in m.tool_results) for m in out) < tokens * 4:
        use = ToolUse(f"toolu_{i}", "read_file", {"path": f"src/module_{i}.py"})
        out += [
            Message.user(f"look at module {i}"),
            Message("assistant", (use,)),
            Message("user", (ToolResult(use.id, LINE * result_lines),)),
            Message.assistant(f"module {i} parses requests; " + "analysis " * analysis_words),
        ]
        i += 1
    return out


def never(_: Request) -> str:
    raise AssertionError("nothing should be condensed in this benchmark")


def run(window: int, base: list[Message], turns: int, settings: ContextSettings) -> list[float]:
    counter = TokenCounter("claude-sonnet-4-5", "anthropic")
    tools = (ToolSpec("read_file", "Read a file.", {"type": "object"}),)
    frame = Frame("You are a coding agent. " * 200, tools)
    with tempfile.TemporaryDirectory() as tmp:
        engine = ContextEngine(
            settings=settings,
            window=window,
            max_output=32_000,
            counter=counter,
            store=TranscriptStore(Path(tmp)),
            summarize=never,
        )
        # A first prepare may clear a batch (the L1 case); the turns after it are what is timed.
        history = engine.prepare(base, frame).messages
        engine.observe(frame, history, Usage(input_tokens=engine.tokens(history, frame)))
        times: list[float] = []
        for t in range(turns):
            history += [Message.user(f"next step {t}"), Message.assistant("done " * 40)]
            start = time.perf_counter()
            prepared = engine.prepare(history, frame)
            times.append(time.perf_counter() - start)
            assert not prepared.events, prepared.events
            history = prepared.messages
            engine.observe(frame, history, Usage(input_tokens=engine.tokens(history, frame)))
        print(f"  history: {len(history):,} messages, {engine.tokens(history, frame):,} tokens; "
              f"{engine.thresholds.describe()}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    file_heavy = history_of(args.tokens)
    # Small tool results, long analyses: above the L1 line, but clearing would free too little.
    # (Repeated words count about half as many tokens as characters / 4 suggests, hence 1.6x.)
    text_heavy = history_of(int(args.tokens * 1.6), result_lines=4, analysis_words=1_200)
    cases = [
        ("nothing fires (1M window)", 1_000_000, file_heavy),
        ("above the L1 line, no batch worth clearing (400k window)", 400_000, text_heavy),
    ]
    for label, window, base in cases:
        print(label)
        times = sorted(run(window, base, args.turns, ContextSettings()))
        median, p95 = statistics.median(times), times[int(len(times) * 0.95)]
        print(f"  prepare: median {median * 1e3:.3f} ms, p95 {p95 * 1e3:.3f} ms per turn (goal < 2 ms)")


if __name__ == "__main__":
    main()

"""The Anthropic cost model (agent_cli/billing) held to recorded Claude Code sessions.

Each session file's requests (`real_sessions.py`) are rebuilt as units and billed by
`billing.AnthropicCache`, with the breakpoints where Claude Code places them: two on the system
prompt (the part shared with other sessions, then the rest of the frame) and one on the newest
message (on its last block; after a parallel tool batch, on the result that arrived last, the
results being sent in the order of the calls). The predicted cache writes and reads are set beside
the API's own `cache_creation_input_tokens` / `cache_read_input_tokens` for every request.

What is taken from the recording, and why that is no per-request oracle:
- The frame (tools + system prompt) is not recorded: its size is the first request's prompt less
  its first message (counted here) and a 3-token tail; the part shared with other sessions is the
  first request's read (warm from another conversation when it is above 0). Constants of a session.
- The TTL Claude Code asked for (5 minutes or 1 hour) is the first write's split: a setting.
- Block sizes: each request's recorded prompt size is the size of the prefix at its end; the blocks
  new in a request share what it grew by, in proportion to their tiktoken counts (the counter's raw
  count, scaled to the known total of that turn). A request's read and write are then predicted
  from where its breakpoints' look-back finds a live entry.
- Times come from the spotter files' timestamps; stream-json files have none: 10 s apart.
- A compaction request (`*.subagent-agent-acompact-*`) sends the main thread's history and an
  instruction: it is billed with the main thread's cache, at its time.

Run: python -m benchmarks.cache_validation [--out FILE] [--sessions DIR] (FILE: docs/cost-model-requests.md,
the per-request tables). Without DIR it reads
../shared/sessions/real (the full set) when present, else the MIT-licensed copies in
benchmarks/data/real_sessions/ (and says so).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

from agent_cli.billing import AnthropicCache, AnthropicRequest, Bill, CacheTerms, Ttl, Unit
from agent_cli.billing.anthropic import in_context
from agent_cli.billing.prices import priced
from agent_cli.providers.model_info import cache_terms
from agent_cli.providers.model_names import keeps_prior_thinking
from agent_cli.providers.models import lookup
from benchmarks.cache_tables import (
    RequestRow,
    SessionResult,
    big_misses,
    miss_rows,
    request_table,
    summary_rows,
)
from benchmarks.counter_validation import CounterResult, compare_counter, counter_summary, counter_table
from benchmarks.real_sessions import Block, SessionRequest
from benchmarks.real_sessions import read_session as _read_session

__all__ = ["RequestRow", "SessionResult", "main", "run", "validate_file", "validate_group"]

TAIL = 3  # tokens after the last breakpoint (the recorded input_tokens are 1-7)
START_RATIO = 1.25  # provider tokens per tiktoken token for the first message, before any growth is known
HERE = Path(__file__).resolve().parent
# ../shared beside the checkout (CI, the main checkout), or beside the worktrees' folder
SHARED = (
    next(
        (
            p
            for p in (HERE.parent.parent / "shared", HERE.parent.parent.parent / "shared")
            if (p / "sessions").is_dir()
        ),
        HERE.parent.parent / "shared",
    )
    / "sessions"
    / "real"
)
COPIES = HERE / "data" / "real_sessions"


@functools.cache
def read_session(path: Path) -> list[SessionRequest]:
    return _read_session(path)


def _terms(model: str) -> CacheTerms:
    info = lookup(model)
    if info is None:
        raise SystemExit(f"unknown model in a recording: {model}")
    return cache_terms(info)


def _recorded_bill(req: SessionRequest) -> Bill:
    r = req.recorded
    return priced(r.input, r.read, r.write - r.write_1h, r.write_1h, _terms(req.model).prices)


class _Builder:
    """Turns one thread's requests into billing units: the frame, sized blocks, the breakpoints."""

    def __init__(self, name: str, first: SessionRequest, ttl: Ttl) -> None:
        self.name = name
        self.ttl = ttl
        self.sizes: dict[str, int] = {}
        first_blocks = sum(round(b.raw * START_RATIO) for b in first.blocks)
        frame = max(0, first.recorded.prompt - TAIL - first_blocks)
        self.shared = min(first.recorded.read, frame)
        self.session_part = frame - self.shared
        for b in first.blocks:
            self.sizes[b.key] = round(b.raw * START_RATIO)

    @property
    def frame(self) -> int:
        return self.shared + self.session_part

    def frame_units(self) -> list[Unit]:
        return [
            Unit("system", self.shared, "frame-shared", self.ttl),
            Unit("system", self.session_part, f"frame-session:{self.name}", self.ttl),
        ]

    def visible(self, req: SessionRequest) -> list[Block]:
        """The blocks the API reads: thinking of messages before the newest turn is dropped on the
        models that strip it, kept on those that keep it (`billing.anthropic.in_context`)."""
        units = tuple(Unit("messages", 0, b.key, None, b.thinking, b.message) for b in req.blocks)
        kept = {u.key for u in in_context(keeps_prior_thinking(req.model), units, req.turn_start)}
        return [b for b in req.blocks if b.key in kept]

    def units(self, req: SessionRequest) -> list[Unit]:
        blocks = self.visible(req)
        known = sum(self.sizes.get(b.key, 0) for b in blocks if b.key in self.sizes)
        new = [b for b in blocks if b.key not in self.sizes]
        room = req.recorded.prompt - self.frame - TAIL - known
        raw = sum(b.raw for b in new)
        for i, b in enumerate(new):
            share = round(b.raw * room / raw) if raw > 0 and room > 0 else 0
            if i == len(new) - 1 and raw > 0 and room > 0:
                share = room - sum(self.sizes[x.key] for x in new[:-1])
            self.sizes[b.key] = max(0, share)
        units = self.frame_units()
        last = max((i for i, b in enumerate(blocks) if not b.thinking), default=-1)
        last = next((i for i, b in enumerate(blocks) if b.key == req.mark), last)
        for i, b in enumerate(blocks):
            units.append(
                Unit(
                    "messages",
                    self.sizes[b.key],
                    b.key,
                    self.ttl if i == last else None,
                    b.thinking,
                    b.message,
                )
            )
        tail = req.recorded.prompt - sum(u.tokens for u in units)
        units.append(Unit("messages", max(0, tail), f"tail:{req.id}"))
        return units


def _label(req: SessionRequest, prev: SessionRequest | None, ttl: Ttl, turns: set[tuple[int, int]]) -> str:
    if prev is None:
        return "first request"
    if req.model != prev.model:
        return "model switch"
    if req.after_boundary:
        return "after compaction"
    if req.at - prev.at > (3600 if ttl == "1h" else 300):
        return "pause over the TTL"
    if (req.epoch, req.turn_start) not in turns:
        return "task notification" if req.notification else "new user turn"
    return "within a turn"


def _bill_thread(
    name: str, requests: list[SessionRequest], compactions: list[SessionRequest]
) -> SessionResult:
    result = SessionResult(name)
    if not requests:
        return result
    cache = AnthropicCache(_terms)
    first_write = next((r for r in requests if r.recorded.write), requests[0])
    builder = _Builder(name, requests[0], "1h" if first_write.recorded.write_1h else "5m")
    pending = sorted(compactions, key=lambda r: r.at)
    prev: SessionRequest | None = None
    prev_units: list[Unit] = []
    turns: set[tuple[int, int]] = set()
    for index, req in enumerate(requests):
        if index == 0 and req.recorded.read > 0:
            first = AnthropicRequest(req.model, tuple(builder.frame_units()), req.at - 1)
            cache.warm(first, 0)
        while pending and prev_units and pending[0].at <= req.at:
            result.rows.append(_bill_compaction(cache, builder, pending.pop(0), prev_units))
        units = builder.units(req)
        label = _label(req, prev, builder.ttl, turns)
        bill = cache.bill(AnthropicRequest(req.model, tuple(units), req.at))
        result.rows.append(RequestRow(index, req.model, req.at, label, _recorded_bill(req), bill))
        prev_units = units
        turns.add((req.epoch, req.turn_start))
        prev = req
    for late in pending:
        result.rows.append(_bill_compaction(cache, builder, late, prev_units))
    return result


def _bill_compaction(
    cache: AnthropicCache, builder: _Builder, req: SessionRequest, history: list[Unit]
) -> RequestRow:
    """The compaction request: the thread's last prompt (its tail dropped) and the instruction after it."""
    prefix = [
        u
        if u.breakpoint is None or u.section == "system"
        else Unit(u.section, u.tokens, u.key, None, u.thinking, u.message)
        for u in history[:-1]
    ]
    size = req.recorded.prompt - sum(u.tokens for u in prefix) - TAIL
    units = [
        *prefix,
        Unit("messages", max(0, size), f"instruction:{req.id}", builder.ttl),
        Unit("messages", TAIL, f"tail:{req.id}"),
    ]
    bill = cache.bill(AnthropicRequest(req.model, tuple(units), req.at))
    return RequestRow(-1, req.model, req.at, "compaction request", _recorded_bill(req), bill)


def validate_group(main_file: Path, others: list[Path]) -> list[SessionResult]:
    """A main thread (with its compaction requests) and each other sub-agent file on its own."""
    compactions = [r for p in others if "-acompact-" in p.name for r in read_session(p)]
    results = [_bill_thread(main_file.name, read_session(main_file), compactions)]
    for path in others:
        if "-acompact-" not in path.name:
            results.append(_bill_thread(path.name, read_session(path), []))
    return results


def validate_file(path: Path) -> SessionResult:
    return _bill_thread(path.name, read_session(path), [])


def session_groups(folder: Path) -> Iterator[tuple[Path, list[Path]]]:
    files = sorted(folder.glob("*.jsonl"))
    for main in (p for p in files if ".subagent-" not in p.name):
        stem = main.name.removesuffix(".jsonl")
        yield main, [p for p in files if p.name.startswith(stem + ".subagent-")]


def run(folder: Path) -> tuple[list[SessionResult], list[CounterResult]]:
    """Every session in `folder`: main threads with their sub-agents, and sub-agent files alone."""
    results: list[SessionResult] = []
    for main_file, others in session_groups(folder):
        results += validate_group(main_file, others)
    for path in sorted(folder.glob("*.subagent-*.jsonl")):
        stem = path.name.split(".subagent-")[0] + ".jsonl"
        if not (folder / stem).exists() and "-acompact-" not in path.name:
            results.append(validate_file(path))
    counters = [
        compare_counter(p.name, read_session(p))
        for p in sorted(folder.glob("*.jsonl"))
        if "-acompact-" not in p.name
    ]
    return results, counters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "cost-model-requests.md")
    args = parser.parse_args(argv)
    folder = args.sessions
    if folder is None:
        folder = SHARED if SHARED.is_dir() else COPIES
        if folder is COPIES:
            print(f"{SHARED} not found: validating the MIT-licensed copies in {COPIES} only")
    results, counters = run(folder)
    text = [
        "# Cache model against recorded sessions",
        "",
        *summary_rows(results),
        "",
        *miss_rows(results),
        "",
        *big_misses(results),
        "",
        "## Token counter against the API's growth per request",
        "",
        *counter_summary(counters),
        "",
    ]
    for res in results:
        text += request_table(res)
    for counter in counters:
        text += counter_table(counter)
    args.out.write_text("\n".join(text), encoding="utf-8")
    print("\n".join(summary_rows(results)))
    print()
    print("\n".join(miss_rows(results)))
    print()
    print("\n".join(big_misses(results)))
    print()
    print("\n".join(counter_summary(counters)))
    print(f"\nper-request tables: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

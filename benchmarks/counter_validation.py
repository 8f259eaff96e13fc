"""Our token counter against the API's own input totals, request by request, on recorded sessions.

For each request after the first of a thread, the API's growth is its prompt size less the
previous request's (both recorded); ours is the tiktoken count (cl100k_base, the counter's raw
count with its per-block overheads) of the blocks that request added, less those the API dropped
(thinking of earlier turns, on the models that strip it), times the learned ratio as
`agent_cli.tokens` learns it: from the model table's start ratio, moved by each earlier growth of
at least MIN_LEARN_RAW_TOKENS raw tokens (`ratio.learned`). Requests across a compaction or a
model switch are left out (a new thread). Used by `cache_validation.py`, which prints the table
beside the cache table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_cli.billing.anthropic import Unit, in_context
from agent_cli.providers.model_names import keeps_prior_thinking, tokenizer_for
from agent_cli.providers.registry import ANTHROPIC
from agent_cli.tokens.ratio import MIN_LEARN_RAW_TOKENS, learned
from benchmarks.real_sessions import SessionRequest

__all__ = ["CounterResult", "CounterRow", "compare_counter", "counter_summary"]


@dataclass
class CounterRow:
    index: int
    api: int
    raw: int
    ratio: float

    @property
    def ours(self) -> int:
        return round(self.raw * self.ratio)


@dataclass
class CounterResult:
    name: str
    start_ratio: float = 1.0
    rows: list[CounterRow] = field(default_factory=list)


def _visible(req: SessionRequest) -> dict[str, int]:
    units = tuple(Unit("messages", 0, b.key, None, b.thinking, b.message) for b in req.blocks)
    kept = {u.key for u in in_context(keeps_prior_thinking(req.model), units, req.turn_start)}
    return {b.key: b.raw for b in req.blocks if b.key in kept}


def compare_counter(name: str, requests: list[SessionRequest]) -> CounterResult:
    if not requests:
        return CounterResult(name)
    start = tokenizer_for(requests[0].model, ANTHROPIC.name).start_ratio
    result = CounterResult(name, start)
    ratio = start
    prev: SessionRequest | None = None
    prev_blocks: dict[str, int] = {}
    for index, req in enumerate(requests):
        blocks = _visible(req)
        same_thread = prev is not None and req.epoch == prev.epoch and req.model == prev.model
        if same_thread and prev is not None:
            raw = sum(v for k, v in blocks.items() if k not in prev_blocks)
            raw -= sum(v for k, v in prev_blocks.items() if k not in blocks)
            api = req.recorded.prompt - prev.recorded.prompt
            result.rows.append(CounterRow(index, api, raw, ratio))
            if raw >= MIN_LEARN_RAW_TOKENS and api > 0:
                ratio = learned(ratio, api / raw)
        elif prev is not None and req.model != prev.model:
            ratio = tokenizer_for(req.model, ANTHROPIC.name).start_ratio
        prev, prev_blocks = req, blocks
    return result


def counter_summary(results: list[CounterResult]) -> list[str]:
    lines = [
        "| session | requests | API growth | tiktoken raw | ours (learned ratio) | error | final ratio | "
        "median abs. error per request |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for res in results:
        if not res.rows:
            continue
        api = sum(r.api for r in res.rows)
        raw = sum(r.raw for r in res.rows)
        ours = sum(r.ours for r in res.rows)
        errors = sorted(abs(r.ours - r.api) for r in res.rows)
        lines.append(
            f"| {res.name} | {len(res.rows)} | {api:,} | {raw:,} | {ours:,} | "
            f"{(ours - api) / api * 100 if api else 0:+.1f}% | {res.rows[-1].ratio:.3f} | "
            f"{errors[len(errors) // 2]:,} |"
        )
    return lines


def counter_table(res: CounterResult) -> list[str]:
    lines = [
        f"### {res.name}: token counter (start ratio {res.start_ratio})",
        "",
        "| # | API growth | tiktoken raw | ratio | ours | error |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res.rows:
        lines.append(f"| {r.index} | {r.api} | {r.raw} | {r.ratio:.3f} | {r.ours} | {r.ours - r.api:+d} |")
    return [*lines, ""]

"""The tables `cache_validation.py` prints and writes: per session, per kind of request, per request.

A *miss* is a request whose predicted read is off by more than 1% of its prompt; `big_misses` lists
every request whose write or read is off by more than `BIG_MISS` tokens, for docs/cost-model.md to
give each its cause.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from agent_cli.billing import Bill

__all__ = [
    "BIG_MISS",
    "RequestRow",
    "SessionResult",
    "big_misses",
    "miss_rows",
    "request_table",
    "summary_rows",
]

BIG_MISS = 1_000  # tokens


@dataclass
class RequestRow:
    index: int
    model: str
    at: float
    label: str
    recorded: Bill
    predicted: Bill


@dataclass
class SessionResult:
    name: str
    rows: list[RequestRow] = field(default_factory=list)

    def total(self, which: str) -> Bill:
        out = Bill()
        for row in self.rows:
            out = out + getattr(row, which)
        return out


def _pct(pred: float, rec: float) -> str:
    return f"{(pred - rec) / rec * 100:+.2f}%" if rec else ("0" if not pred else "n/a")


def request_table(result: SessionResult) -> list[str]:
    lines = [
        f"## {result.name}",
        "",
        "| # | model | label | rec write | pred write | rec read | pred read | error (w, r) |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in result.rows:
        r, p = row.recorded, row.predicted
        lines.append(
            f"| {row.index} | {row.model.removeprefix('claude-')[:14]} | {row.label} | {r.write} | "
            f"{p.write} | {r.read} | {p.read} | {p.write - r.write:+d}, {p.read - r.read:+d} |"
        )
    return [*lines, ""]


def summary_rows(results: list[SessionResult]) -> list[str]:
    lines = [
        "| session | requests | writes rec / pred | reads rec / pred | cost rec / pred (token-eq.) "
        "| cost error |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    every = SessionResult(f"all {len(results)} conversations", [x for res in results for x in res.rows])
    for res in [*results, every]:
        r, p = res.total("recorded"), res.total("predicted")
        lines.append(
            f"| {res.name} | {len(res.rows)} | {r.write:,} / {p.write:,} ({_pct(p.write, r.write)}) | "
            f"{r.read:,} / {p.read:,} ({_pct(p.read, r.read)}) | {r.token_equivalents:,.0f} / "
            f"{p.token_equivalents:,.0f} | {_pct(p.token_equivalents, r.token_equivalents)} |"
        )
    r, p = every.total("recorded"), every.total("predicted")
    lines += [
        "",
        f"In USD at the model table's prices: ${r.usd:,.2f} recorded, ${p.usd:,.2f} predicted "
        f"({_pct(p.usd, r.usd)}).",
    ]
    return lines


def miss_rows(results: list[SessionResult]) -> list[str]:
    """Per label: requests, how many missed (|error| over 1% of the prompt), and the summed error."""
    by: dict[str, list[RequestRow]] = {}
    for res in results:
        for row in res.rows:
            by.setdefault(row.label, []).append(row)
    lines = [
        "| kind of request | requests | misses | summed write error | summed read error |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, rows in sorted(by.items()):
        misses = [
            x for x in rows if abs(x.predicted.read - x.recorded.read) > 0.01 * max(x.recorded.prompt, 1)
        ]
        lines.append(
            f"| {label} | {len(rows)} | {len(misses)} | "
            f"{sum(x.predicted.write - x.recorded.write for x in rows):+,} | "
            f"{sum(x.predicted.read - x.recorded.read for x in rows):+,} |"
        )
    errors = [
        abs(x.predicted.read - x.recorded.read) / max(x.recorded.prompt, 1)
        for res in results
        for x in res.rows
    ]
    qs = statistics.quantiles(errors, n=100) if len(errors) > 1 else [0.0] * 99
    lines += [
        "",
        f"Per-request read error as a share of the prompt: median {qs[49]:.4%}, "
        f"90th percentile {qs[89]:.4%}, 99th {qs[98]:.4%}, largest {max(errors):.2%} "
        f"({len(errors)} requests).",
    ]
    return lines


def big_misses(results: list[SessionResult]) -> list[str]:
    """Every request whose predicted write or read is off by more than BIG_MISS tokens."""
    lines = [
        f"Requests off by more than {BIG_MISS:,} tokens:",
        "",
        "| session | # | label | write error | read error |",
        "|---|---:|---|---:|---:|",
    ]
    for res in results:
        for row in res.rows:
            dw = row.predicted.write - row.recorded.write
            dr = row.predicted.read - row.recorded.read
            if max(abs(dw), abs(dr)) > BIG_MISS:
                lines.append(f"| {res.name} | {row.index} | {row.label} | {dw:+,} | {dr:+,} |")
    return lines

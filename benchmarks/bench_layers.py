"""The report's section on what each layer costs in the prompt cache (bench_ledger.py's lines).

    layer_section(groups, prices) -> lines of Markdown

One table a session kind and window (the faithful stand-in): every finishing policy's Claude bill at
the steady pace, split into reads, new writes, rewrites by cause, output, summary calls and recall.
Beside it, the floor: what a policy that kept nothing but the frame would still pay (the session's
new messages written once, every reply's output, the frame read back by each request), and so the
most any policy could save against the best seed policy in that cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench_ledger import LINES
from bench_tables import SEED_POLICIES, Agg, Group, Prices

from agent_cli.providers.model_info import ModelInfo

__all__ = ["layer_section"]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _row(agg: Agg, prices: ModelInfo) -> str:
    cells = [_mean([r.ledger.dollars(line, prices) for r in agg.done]) for line in LINES]
    total = _mean([r.dollars("claude", prices) for r in agg.done])
    return f"| {agg.policy} | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {total:.2f} |"


def layer_section(groups: Sequence[Group], prices: Prices) -> list[str]:
    p = prices["claude"]
    lines = [
        "## What each layer costs in the prompt cache",
        "",
        "The Claude bill at the steady pace, split by what paid for it (`bench_ledger.py`), the same way",
        "for every policy: *reads* of the cached prefix; *new*, the session's own messages (and the",
        "first frame) written once; *clear*, *summary*, *drop*, what a policy's edit made the next request",
        "write again (the messages after the edit, whose cached prefix it invalidated, and the edit's own",
        "stubs, placeholders or record), the edit seen from outside alike for every policy (a record",
        "added: summary; fewer messages, no record: drop; a message changed in place: clear, which",
        "for ours also holds L0's cut of old tool inputs); *unmarked*, written again with no edit, where",
        "the marks did not cover what the next request sent; *output*, the replies; *summary calls* and",
        "*recall* round trips, whole. The lines add up to the Sonnet 5.5 $ of the tables above.",
        "",
        "*Floor*: what a policy that kept nothing but the frame would still pay (new, output, and the",
        "frame read back by every request), here ours'; *at most* is then the largest saving any policy",
        "could make against the best seed policy. (The goals are stated against the session's own,",
        "uncapped floor: *The goal, cell by cell, against the floor*.)",
        "",
    ]
    for g in groups:
        if g.stand_in != "faithful":
            continue
        done = [a for a in g.aggs.values() if a.finished]
        if not done:
            continue
        lines += [
            f"### Cache by layer: {g.title}",
            "",
            "| policy | " + " | ".join(LINES) + " | total |",
            "|" + "---|" * (len(LINES) + 2),
            *(_row(a, p) for a in done),
            "",
        ]
        ours = g.aggs.get("ours")
        seeds = [a for a in done if a.policy in SEED_POLICIES]
        if ours is None or not ours.finished:
            continue
        low = _mean([r.ledger.floor(p) for r in ours.done])
        said = f"Floor {low:.2f} (ours {_mean([r.dollars('claude', p) for r in ours.done]):.2f})"
        if seeds:
            best = min(seeds, key=lambda a: a.dollars(prices))
            most = 1 - low / best.dollars(prices)
            said += f"; best seed policy {best.policy} {best.dollars(prices):.2f}: at most {most:.0%} cheaper"
        lines += [said + ".", ""]
    return lines

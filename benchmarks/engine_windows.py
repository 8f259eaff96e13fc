"""The context engine across windows: cost, summary calls, the latch, and the user's words.

    python benchmarks/engine_windows.py [--quick]

Every run is `agent -p` against the in-repo fake over HTTP (benchmarks/long_session.py does one run);
the figures are the fake's own counts (characters / 4). Printed, in order:

1. the working budget against its neighbours, on two workloads (a file-heavy survey: 20 reads of
   40 KiB; a chat-heavy session: 60 reads of 4 KiB with a long analysis each turn) and three
   windows (32k, 200k, 1M): input tokens summed, ideal-cache cost (any earlier prefix read: OpenAI's
   rule), the cost as Anthropic bills the requests as sent (long_session.anthropic_cost), summary
   calls, largest request;
2. the survey on a 1M-token model against the same work with a 200k window and against Claude
   Code's measured run (ANCHORS.md: 2.32M input tokens, 0.66M after an ideal cache);
3. the 30k-window survey (10 reads of 20 KiB, a long analysis each step): summary calls, rejected
   requests, and whether every request after a compaction carries a record (the model's, or the
   digest standing in while the model writes it);
4. the same survey with a summarizer that always fails, and one that always answers with a record
   far larger than its input: distinct summary requests (the latch's bound is 6);
5. a prompt that asks to summarize something, in non-ASCII text: is it byte for byte in every
   request after the compactions?
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from long_session import against_peers, run  # noqa: E402

from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.testing.summary_shape import is_summary_request  # noqa: E402

RECORD_CLOSING = "Continue from the work state above"

WINDOWS = (32_000, 200_000, 1_000_000)
BUDGETS = (64_000, 100_000, 160_000, 0)
WORKLOADS = {"survey": (20, 40), "chat": (60, 4)}
DEFAULT_BUDGET = ContextSettings().working_budget  # the row the report marks, and the one table 2 reads
WORDS_PROMPT = "Please summarize each module's role — «naïve café», 日本語のメモ, 🙂 — then stop."


def row(label: str, r: dict[str, Any]) -> str:
    return (
        f"  {label:<34} {r['input_tokens']:>11,} {r['cached_cost']:>12,.0f} {r['billed_cost']:>12,.0f} "
        f"{r['summary_requests']:>5} {r['largest']:>10,}  {'ok' if r['finished'] else 'NOT FINISHED'}"
    )


def header(title: str) -> None:
    print(f"\n{title}")
    print(f"  {'':<34} {'input sum':>11} {'ideal cache':>12} {'Anthropic':>12} {'sums':>5} {'largest':>10}")


def budgets_table(quick: bool) -> dict[tuple[str, int, int], dict[str, Any]]:
    results: dict[tuple[str, int, int], dict[str, Any]] = {}
    workloads = {"survey": WORKLOADS["survey"]} if quick else WORKLOADS
    for name, (files, kib) in workloads.items():
        header(f"1. working budget x window, {name} ({files} reads of {kib} KiB, a long analysis each turn)")
        for window in WINDOWS:
            for budget in BUDGETS:
                if budget and budget >= window:
                    continue  # the same as the whole window
                r = run(files, kib, window, compaction=True, working=budget)
                results[(name, window, budget)] = r
                mark = " (default)" if budget == DEFAULT_BUDGET else ""
                size = f"{budget // 1000}k" if budget else "whole"
                label = f"{window // 1000}k window, budget {size}{mark}"
                print(row(label, r))
    return results


def carried(requests: list[Any], marker: str) -> tuple[int, int]:
    """(requests after the first summary, how many of them carry `marker`)."""
    firsts = [i for i, q in enumerate(requests) if is_summary_request(q.body)]
    if not firsts:
        return 0, 0
    later = [q for q in requests[firsts[0] + 1 :] if not is_summary_request(q.body)]
    return len(later), sum(marker in json.dumps(q.body, ensure_ascii=False) for q in later)


def distinct_summaries(requests: list[Any]) -> int:
    bodies = {
        hashlib.sha256(json.dumps(q.body, sort_keys=True).encode()).hexdigest()
        for q in requests
        if is_summary_request(q.body)
    }
    return len(bodies)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="the survey only in table 1")
    args = parser.parse_args()
    results = budgets_table(args.quick)

    print("\n2. the survey on a 1M-token model (default working budget) against a 200k window")
    big = results.get(("survey", 1_000_000, DEFAULT_BUDGET)) or run(20, 40, 1_000_000, True)
    mid = results.get(("survey", 200_000, DEFAULT_BUDGET)) or run(20, 40, 200_000, True)
    whole = results.get(("survey", 1_000_000, 0)) or run(20, 40, 1_000_000, True, working=0)
    print(
        f"  1M: input {big['input_tokens']:,}, ideal cache {big['cached_cost']:,.0f}, as Anthropic bills it "
        f"{big['billed_cost']:,.0f}, largest {big['largest']:,}; "
        + against_peers(big["input_tokens"], big["billed_cost"], big["cached_cost"])
    )
    print(
        f"  200k: input {mid['input_tokens']:,}, ideal cache {mid['cached_cost']:,.0f}, "
        f"largest {mid['largest']:,}"
        f"  -> 1M/200k input {big['input_tokens'] / mid['input_tokens']:.2f}x, "
        f"largest {'no larger' if big['largest'] <= mid['largest'] else 'LARGER'}"
    )
    print(
        f"  1M with the whole window (working_budget = 0): input {whole['input_tokens']:,}, "
        f"ideal cache {whole['cached_cost']:,.0f}, largest {whole['largest']:,}"
    )

    print("\n3. the 30k-window survey: 10 reads of 20 KiB, a long analysis each step")
    small = run(10, 20, 30_000, True)
    rejected = sum(1 for e in small["events"] if e.get("type") == "error")
    # Every record, the model's or the digest standing in while the model writes it, ends so
    # (context/record_parts.py); the model's own has its sections ("## Goal and requests").
    later, with_record = carried(small["all_requests"], RECORD_CLOSING)
    _, with_models = carried(small["all_requests"], "## Goal and requests")
    print(
        f"  {small['requests']} requests, {small['summary_requests']} summary calls (goal <= 5), "
        f"{rejected} rejected, largest {small['largest']:,} of 30,000; a record is in {with_record} of "
        f"the {later} requests after the first summary (the model's in {with_models}, a digest standing "
        f"in for it in the rest); finished {small['finished']}"
    )

    print("\n4. the 30k survey with a summarizer that always fails (the latch; goal <= 6 distinct requests)")
    for behaviour in ("error", "huge"):
        r = run(10, 20, 30_000, True, summaries=behaviour)
        print(
            f"  {behaviour:>5}: {distinct_summaries(r['all_requests'])} distinct summary requests "
            f"({r['summary_requests']} sent with retries), compactions {len(r['compactions'])}, "
            f"largest {r['largest']:,}, finished {r['finished']}"
        )

    print("\n5. a prompt that asks to summarize, in non-ASCII text, through the 30k survey")
    r = run(10, 20, 30_000, True, prompt=WORDS_PROMPT)
    requests = [q for q in r["all_requests"] if not is_summary_request(q.body)]
    holding = sum(WORDS_PROMPT in json.dumps(q.body, ensure_ascii=False) for q in requests)
    print(
        f"  {r['summary_requests']} summary calls; the prompt is byte for byte in {holding} of "
        f"{len(requests)} requests; finished {r['finished']}"
    )


if __name__ == "__main__":
    main()

"""How long one recall takes on a long session's archive, with ranking's per-document readings
kept (warm) and dropped before each question (cold), and a digest of every answer.

    python benchmarks/recall_speed.py [--count 600] [--runs 5] [--json]
    python benchmarks/recall_speed.py --replay [--runs 3]

The archive is recall_probe's (the held-out facts' scenes among `--count` look-alike outputs, in
the session log and in spans), asked every question three ways. Run it on two trees (PYTHONPATH)
to compare them: the digest must be the same, the times say what changed. `--replay` times the
benchmark replay's run that recall dominated (long session, typical outputs, seed 1, 200k window,
"ours") and prints its fingerprint. Figures in docs/performance.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_facts_heldout
from recall_probe import BUDGET, session

from agent_cli.store import ranking, session_search
from agent_cli.store.archive import Archive

_MESSAGE_ID = re.compile(r"\bm_[0-9a-f]{16}\b")


def _drop_readings() -> None:
    """Forget every reading recall keeps (whichever this tree has): each document as new."""
    kept = [(ranking, "_read"), (ranking, "_windows"), (ranking, "_window_meanings")]
    for module, name in [*kept, (session_search, "_span_messages")]:
        cached: Any = getattr(module, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def _replay() -> float:
    """The wall time of the profiled replay run (bench_report.py `run_unit`), in seconds."""
    from bench_report import run_unit

    start = time.perf_counter()
    run = run_unit(("long", "typical", 1, 200_000, "ours", "lossy", ""))
    seconds = time.perf_counter() - start
    print(f"replay fingerprint {run.fingerprint}, recall probes {sum(run.probes['recall'])}")
    return seconds


def _timed(archive: Archive, questions: list[str], before: Callable[[], None]) -> tuple[list[float], str]:
    seconds, digest = [], hashlib.sha256()
    for question in questions:
        before()
        start = time.perf_counter()
        answer = archive.search(question, BUDGET)
        seconds.append(time.perf_counter() - start)
        digest.update(_MESSAGE_ID.sub("m_", answer).encode())  # ids are random: the rest is not
    return seconds, digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=600, help="look-alike outputs in the session")
    parser.add_argument("--runs", type=int, default=5, help="runs of every question; medians")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--replay", action="store_true", help="time the replay run instead")
    args = parser.parse_args()
    if args.replay:
        times = [_replay() for _ in range(args.runs)]
        print(f"replay wall time: median {statistics.median(times):.2f} s of {[round(t, 2) for t in times]}")
        return
    questions = [q for fact in recall_facts_heldout.FACTS for q in fact.questions]
    with tempfile.TemporaryDirectory() as tmp:
        archive = session(Path(tmp), recall_facts_heldout, 1, args.count)
        archive.search("warm the meaning table", BUDGET)  # numpy and the table: start-up, not recall
        cold: list[float] = []
        warm: list[float] = []
        digests = set()
        for _ in range(args.runs):
            seconds, digest = _timed(archive, questions, _drop_readings)
            cold.append(statistics.median(seconds))
            digests.add(digest)
            seconds, digest = _timed(archive, questions, lambda: None)
            warm.append(statistics.median(seconds))
            digests.add(digest)
    figures = {
        "questions": len(questions),
        "documents": args.count + len(recall_facts_heldout.FACTS),
        "cold_ms": round(1000 * statistics.median(cold), 1),
        "warm_ms": round(1000 * statistics.median(warm), 1),
        "digest": sorted(digests),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"agent_cli from {Path(ranking.__file__).parents[2]}")
    print(f"{figures['questions']} questions over {figures['documents']} outputs, median of {args.runs} runs")
    print(f"per recall: cold {figures['cold_ms']} ms, warm {figures['warm_ms']} ms")
    print(f"cold/warm: {statistics.median(cold) / statistics.median(warm):.2f}x")
    print(f"answers digest: {' '.join(d[:16] for d in figures['digest'])}")


if __name__ == "__main__":
    main()

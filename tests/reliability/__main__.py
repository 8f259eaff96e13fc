"""python -m tests.reliability [--sample] [--kills N] [--seed N] [--only SUITE ...] [--out FILE]"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.reliability.harness import Case, Result, run_cases
from tests.reliability.report import TITLES, render
from tests.reliability.suites import all_cases

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability", description=__doc__)
    parser.add_argument("--sample", action="store_true", help="only the CI sample")
    parser.add_argument("--kills", type=int, default=50, help="kill -9 cases (default 50)")
    parser.add_argument("--seed", type=int, default=1, help="seed for the kill moments")
    parser.add_argument("--only", nargs="*", choices=list(TITLES), help="these suites only")
    parser.add_argument("--workers", type=int, default=2, help="cases at a time (kills run one at a time)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "reliability.md")
    args = parser.parse_args(argv)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # Started in the background (`cmd &`, nohup), SIGINT is ignored and the agents started here
        # would inherit that: give them Ctrl-C as a terminal does.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    cases = all_cases(kills=args.kills, seed=args.seed, sample=args.sample)
    if args.only:
        cases = [c for c in cases if c.suite in args.only]
    start = time.monotonic()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="agent-reliability-") as tmp:
        for suite in TITLES:
            chosen: list[Case] = [c for c in cases if c.suite == suite]
            if chosen:
                workers = 1 if suite in ("kills", "signals") else args.workers
                results += run_cases(chosen, Path(tmp) / suite, workers=workers, progress=True)
    command = "python -m tests.reliability" + (" --sample" if args.sample else "")
    text = render(results, command=command, seconds=time.monotonic() - start, seed=args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} of {len(results)} cases pass; wrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

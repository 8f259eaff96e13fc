"""Recorded Claude Code sessions through the replay: every policy's bill beside Claude Code's own.

    python benchmarks/bench_real.py [--sessions gqc fum] [--windows 200000] [--policies ours kotlin]
                                    [--stand-in lossy] [--day | --day-only] [--subagents] [--shape long]

Each recorded session (`real_replay.py`: the long spotter main threads from ../shared/sessions/real,
or, without ../shared, the sub-agent files copied into benchmarks/data/real_sessions: said in one
line) is replayed alone, and with `--day` the chosen sessions chained into one working day, through
each policy at each window (Sonnet 5.5's cache, steady and paused pace). Per cell:

- the policy's Claude bill in USD (steady, paused), whether it finished, its recall share (the
  probes from the session's own early tool output) and the other probes;
- the floor (`bench_floor.py`, on the session's uncapped bytes) and the cost as a multiple of it;
  the goals' check per pace (ours <= 1.5x the floor, ours' excess over it <= half the best
  finishing seed's, no baseline cheaper and at least as faithful);
- the policy's input-side bill in token-equivalents (input + 0.1 x reads + 1.25 x writes, the
  recording's unit: replay counts times the session's `unit_factor`) and its ratio to what Claude
  Code was billed for the same session's main thread (`recorded_bill`; goal: ours <= 0.6x); for a
  day, the sum of its sessions' bills, and ours at the mean of their unit factors;
- where ours' steady bill goes above the floor, by component (the ledger's lines).

`--shape long` runs the same report on one of the made-up sessions (seed 1, typical outputs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_floor import Rival, floor, floor_check, message_tokens  # noqa: E402
from bench_policies import POLICIES  # noqa: E402
from bench_replay import CLAUDE_RATIO, PROBES, Run, reference_count, replay  # noqa: E402
from bench_sessions import Session  # noqa: E402
from bench_setup import frame, frame_tokens, prices, writer  # noqa: E402
from bench_setup import session as synthetic  # noqa: E402
from bench_tables import SEED_POLICIES  # noqa: E402
from real_replay import load_with_ids, real_paths, recorded_bill, unit_factor, working_day  # noqa: E402

PACES = ("claude", "claude-paused")


def equivalents(run: Run, factor: float) -> float:
    """The run's input side at the steady pace in the recording's tokens (reads 0.1x, writes 1.25x)."""
    b = run.bills["claude"]
    return factor * (b.input + 0.1 * b.read + 1.25 * b.write)


def rival(run: Run, cache: str) -> Rival:
    shares = {p: run.share(p) for p in PROBES}
    return Rival(run.policy, run.dollars(cache, prices()[cache]), run.finished, shares)


def components(run: Run, low: float) -> str:
    """`excess_parts` as one line, largest first."""
    ranked = sorted(excess_parts(run, low).items(), key=lambda kv: -abs(kv[1]))
    return ", ".join(f"{k} ${v:.3f}" for k, v in ranked if abs(v) >= 0.0005)


def excess_parts(run: Run, low: float) -> dict[str, float]:
    """Where a run's steady Claude bill goes above the floor `low` (`bench_ledger.py` lines; they add up):
    reads past the frame, rewrites by cause, unmarked rewrites, summary calls, recall round trips,
    and what its new writes and output differ from the floor's (below it when a policy caps outputs)."""
    p = prices()["claude"]
    ledger = run.ledger
    frame_reads = CLAUDE_RATIO * ledger.frame_reads * p.cache_read_price / 1e6
    parts = {
        "reads past the frame": ledger.dollars("reads", p) - frame_reads,
        **{f"rewrites ({c})": ledger.dollars(c, p) for c in ("clear", "summary", "drop")},
        "unmarked rewrites": ledger.dollars("unmarked", p),
        "summary calls": ledger.dollars("summary calls", p),
        "recall round trips": ledger.dollars("recall", p),
    }
    parts["new writes and output against the floor's"] = (
        ledger.dollars("new", p) + ledger.dollars("output", p) + frame_reads - low
    )
    return parts


def cell(session: Session, window: int, names: list[str], stand_in: str) -> dict[str, Run]:
    runs = {}
    for name in names:
        policy = POLICIES[name](window, frame(), reference_count, writer(stand_in, session))
        runs[name] = replay(session, policy, frame_tokens(), seed=1)
    return runs


def report(title: str, session: Session, runs: dict[str, Run], factor: float, cc: float | None) -> None:
    p = prices()
    low = floor(session, frame_tokens())
    lows = {c: low.dollars(p[c], CLAUDE_RATIO) for c in PACES}
    print(f"\n### {title}")
    print(
        f"floor ${lows['claude']:.3f} (writes {low.write:,}, reads {low.read:,}, output {low.output:,} "
        f"replay tokens); recorded tokens per replay token {factor:.2f}"
        + (f"; Claude Code billed {cc:,.0f} token-equivalents" if cc else "")
    )
    print(
        "| policy | finished | $ steady (x floor) | $ paused (x floor) | excess over floor, steady | "
        "token-equiv. (x Claude Code) | summary calls | " + " | ".join(PROBES) + " |"
    )
    print("|" + "---|" * (7 + len(PROBES)))
    for name, run in runs.items():
        money = [f"{run.dollars(c, p[c]):.3f} ({run.dollars(c, p[c]) / lows[c]:.2f}x)" for c in PACES]
        excess = run.dollars("claude", p["claude"]) - lows["claude"]
        eq = equivalents(run, factor)
        ratio = f" ({eq / cc:.2f}x)" if cc else ""
        shares = [f"{s:.0%}" if (s := run.share(k)) is not None else "-" for k in PROBES]
        done = "yes" if run.finished else f"no (refused at {run.failed_at})"
        print(
            f"| {name} | {done} | " + " | ".join(money) + f" | {excess:.3f} | {eq:,.0f}{ratio} | "
            f"{run.summary_calls} | " + " | ".join(shares) + " |"
        )
    if "ours" not in runs:
        return
    print("- ours' excess over the floor, steady, by component: " + components(runs["ours"], lows["claude"]))
    for c in PACES:
        ours = rival(runs["ours"], c)
        seeds = [rival(r, c) for n, r in runs.items() if n in SEED_POLICIES]
        others = [rival(r, c) for n, r in runs.items() if n != "ours" and n not in SEED_POLICIES]
        check = floor_check(ours, seeds, others, lows[c])
        share = check.excess_share
        said = "; ".join(check.misses) or "met"
        best = f", best seed {check.best_seed.policy}" if check.best_seed else ", no seed finished"
        excess = f", excess {share:.0%} of the best seed's" if share is not None else ""
        print(f"- {c}: ours {check.times:.2f}x the floor{best}{excess}: {said}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", nargs="+", default=[], help="substrings of file names (default: all)")
    parser.add_argument("--windows", nargs="+", type=int, default=[200_000])
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--stand-in", default="lossy", choices=["lossy", "faithful"])
    parser.add_argument("--day", action="store_true", help="also the chosen sessions chained into one day")
    parser.add_argument("--day-only", action="store_true", help="only the day, not each session alone")
    parser.add_argument("--subagents", action="store_true", help="the sub-agent files, not the main threads")
    parser.add_argument("--shape", help="a made-up session instead (long, survey, chat; seed 1, typical)")
    args = parser.parse_args()
    if args.shape:  # the same floor and goals on one of the made-up sessions
        made = synthetic(args.shape, 1, "typical")
        for window in args.windows:
            runs = cell(made, window, args.policies, args.stand_in)
            report(
                f"{args.shape}, typical, seed 1, {window // 1000}k, {args.stand_in}", made, runs, 1.0, None
            )
        return
    main_files, subs, note = real_paths()
    if note:
        print(note)
    files = subs if args.subagents or not main_files else main_files
    files = [f for f in files if not args.sessions or any(s in f.name for s in args.sessions)]
    loaded = []
    for path in files:
        session, ids = load_with_ids(path)
        factor = unit_factor(path, session, ids, message_tokens)
        loaded.append((path, session, factor, recorded_bill(path).equivalents))
        for window in [] if args.day_only else args.windows:
            runs = cell(session, window, args.policies, args.stand_in)
            report(f"{path.stem}, {window // 1000}k, {args.stand_in}", session, runs, factor, loaded[-1][3])
    if (args.day or args.day_only) and len(loaded) > 1:
        day = working_day([s for _, s, _, _ in loaded])
        factor = sum(f for _, _, f, _ in loaded) / len(loaded)
        cc = sum(c for _, _, _, c in loaded)
        for window in args.windows:
            runs = cell(day, window, args.policies, args.stand_in)
            names = " + ".join(p.stem for p, _, _, _ in loaded)
            report(f"working day ({names}), {window // 1000}k, {args.stand_in}", day, runs, factor, cc)


if __name__ == "__main__":
    main()

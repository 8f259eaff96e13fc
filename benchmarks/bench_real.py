"""Recorded Claude Code sessions through the replay: every policy's bill beside Claude Code's own.

    python benchmarks/bench_real.py [--sessions gqc fum] [--windows 200000] [--policies ours kotlin]
                                    [--stand-in lossy] [--day | --day-only] [--subagents] [--shape long]
                                    [--set trigger_ratio=0.9 ...]

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
`--set key=value` runs ours with those `[context]` settings instead of the defaults (a neighbour,
as `bench_report.py`'s neighbours section moves one setting at a time).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_floor import FloorCheck, Rival, floor, floor_check, message_tokens  # noqa: E402
from bench_policies import POLICIES, Ours, Policy  # noqa: E402
from bench_replay import CLAUDE_RATIO, PROBES, SEEN, Run, reference_count, replay_paced  # noqa: E402
from bench_sessions import Session  # noqa: E402
from bench_setup import frame, frame_tokens, prices, writer  # noqa: E402
from bench_setup import session as synthetic  # noqa: E402
from bench_tables import SEED_POLICIES  # noqa: E402
from real_replay import (  # noqa: E402
    RecordedBill,
    load_with_ids,
    real_paths,
    recorded_bill,
    unit_factor,
    working_day,
)

from agent_cli.billing import Bill  # noqa: E402
from agent_cli.config.schema import all_fields, coerce, suggest_key  # noqa: E402
from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.core.errors import ConfigError  # noqa: E402

PACES = ("claude", "claude-paused")
OURS = ContextSettings()  # ours' [context] settings (`--set`: a neighbour of the defaults)


def ours_settings(pairs: Sequence[str]) -> ContextSettings:
    """`ContextSettings` with each `key=value` of `pairs` set, the value read as TOML and checked as
    the config file's `[context]` key is (`config.schema`); anything else is a usage error (exit 2)."""
    fields = all_fields()
    changes: dict[str, object] = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        field = fields.get(f"context.{key}")
        try:
            if field is None:
                raise ConfigError(f"--set {pair}: not a [context] setting{suggest_key('context', key)}")
            try:
                value = tomllib.loads(f"v = {text}")["v"] if text else None
            except tomllib.TOMLDecodeError:
                raise ConfigError(f"--set {pair}: {text!r} is not a TOML value (0.9, 48000, false)") from None
            changes[key] = coerce(field, value, f"--set {pair}", ())
        except ConfigError as exc:
            raise SystemExit(str(exc).splitlines()[0]) from None
    return dataclasses.replace(ContextSettings(), **changes)  # type: ignore[arg-type]


def equivalents(run: Run, factor: float) -> float:
    """The run's input side at the steady pace in the recording's tokens (reads 0.1x, writes 1.25x)."""
    b = run.bills["claude"]
    return factor * (b.input + 0.1 * b.read + 1.25 * b.write)


def conversation(run: Run, factor: float) -> float:
    """`equivalents` without the probes' round trips (a recall, or a re-read of a file): the bill for
    the conversation Claude Code was billed for. The probes are the benchmark's questions, not the
    session's; Claude Code's recording paid none, so its ratio is taken on this figure."""
    recall = run.parts["recall"]
    return equivalents(run, factor) - factor * (recall.input + 0.1 * recall.read + 1.25 * recall.write)


def rival(run: Run, cache: str) -> Rival:
    shares = {p: run.share(p, cache) for p in (*PROBES, SEEN)}
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


def _policy(name: str, window: int, stand_in: str, session: Session) -> Policy:
    if name == "ours":  # (with the defaults, what POLICIES["ours"] builds)
        return Ours(window, frame(), reference_count, writer(stand_in, session), OURS)
    return POLICIES[name](window, frame(), reference_count, writer(stand_in, session))


def cell(session: Session, window: int, names: list[str], stand_in: str) -> dict[str, Run]:
    """Every policy's run; one that reads the clock (ours) is run again at the paused pace with the
    paused clock, its paused figures from that run (`replay_paced`, as the replay's cells are)."""
    runs = {}
    for name in names:
        make = functools.partial(_policy, name, window, stand_in, session)
        runs[name] = replay_paced(session, make, frame_tokens(), seed=1)
    return runs


@dataclass
class Cell:
    """One session (or day) at one window: every policy's run, the unit factor, Claude Code's bill."""

    title: str
    session: Session
    window: int
    runs: dict[str, Run]
    factor: float
    cc: RecordedBill | None
    long: bool = True  # a long main thread or the day (the 0.6x goal), not a sub-agent or made-up one

    @property
    def lows(self) -> dict[str, float]:
        low = floor(self.session, frame_tokens())
        return {c: low.dollars(prices()[c], CLAUDE_RATIO) for c in PACES}


def split(run: Run, factor: float) -> dict[str, float]:
    """A run's input side at the steady pace in the recording's tokens, by component: the main
    requests' cache writes (1.25x), cache reads (0.1x) and uncached input, then the summary calls and
    the recall round trips whole. They add up to `equivalents`."""
    turns = run.parts["turns"]

    def whole(b: Bill) -> float:
        return factor * (b.input + 0.1 * b.read + 1.25 * b.write)

    return {
        "writes": factor * 1.25 * turns.write,
        "reads": factor * 0.1 * turns.read,
        "uncached input": factor * turns.input,
        "summary calls": whole(run.parts["summaries"]),
        "recall round trips": whole(run.parts["recall"]),
    }


def recorded_split(bill: RecordedBill) -> dict[str, float]:
    return {"writes": 1.25 * bill.write, "reads": 0.1 * bill.read, "uncached input": float(bill.input)}


def cell_lines(c: Cell) -> list[str]:
    """The cell's table: every policy, its cost against the floor and Claude Code, its probes; then
    ours' excess by component and the goals' check per pace."""
    p = prices()
    lows = c.lows
    low = floor(c.session, frame_tokens())
    cc = c.cc.equivalents if c.cc else None
    out = [
        "",
        f"#### {c.title}",
        f"floor ${lows['claude']:.3f} (writes {low.write:,}, reads {low.read:,}, output {low.output:,} "
        f"replay tokens); recorded tokens per replay token {c.factor:.2f}"
        + (f"; Claude Code billed {cc:,.0f} token-equivalents" if cc else ""),
        "| policy | finished | $ steady (x floor) | $ paused (x floor) | excess over floor, steady | "
        "conversation, token-equiv. (x Claude Code) | probes' round trips, token-equiv. | summary calls | "
        + " | ".join(PROBES)
        + " |",
        "|" + "---|" * (8 + len(PROBES)),
    ]
    for name, run in c.runs.items():
        money = [f"{run.dollars(k, p[k]):.3f} ({run.dollars(k, p[k]) / lows[k]:.2f}x)" for k in PACES]
        excess = run.dollars("claude", p["claude"]) - lows["claude"]
        eq = conversation(run, c.factor)
        probing = equivalents(run, c.factor) - eq
        ratio = f" ({eq / cc:.2f}x)" if cc else ""
        shares = [f"{s:.0%}" if (s := run.share(k)) is not None else "-" for k in PROBES]
        done = "yes" if run.finished else f"no (refused at {run.failed_at})"
        out.append(
            f"| {name} | {done} | " + " | ".join(money) + f" | {excess:.3f} | {eq:,.0f}{ratio} | "
            f"{probing:,.0f} | {run.summary_calls} | " + " | ".join(shares) + " |"
        )
    if "ours" not in c.runs:
        return out
    out.append(
        "- ours' excess over the floor, steady, by component: " + components(c.runs["ours"], lows["claude"])
    )
    for k in PACES:
        check = _check(c, k)
        share = check.excess_share
        said = "; ".join(check.misses) or "met"
        best = f", best seed {check.best_seed.policy}" if check.best_seed else f", {_no_seed(c)}"
        excess = f", excess {share:.0%} of the best seed's" if share is not None else ""
        out.append(f"- {k}: ours {check.times:.2f}x the floor{best}{excess}: {said}")
    return out


def _check(c: Cell, pace: str) -> FloorCheck:
    ours = rival(c.runs["ours"], pace)
    seeds = [rival(r, pace) for n, r in c.runs.items() if n in SEED_POLICIES]
    others = [rival(r, pace) for n, r in c.runs.items() if n != "ours" and n not in SEED_POLICIES]
    return floor_check(ours, seeds, others, c.lows[pace])


def _no_seed(c: Cell) -> str:
    return "no seed finished" if any(n in SEED_POLICIES for n in c.runs) else "no seed run"


def summary_row(c: Cell) -> str:
    """Ours beside Claude Code and the best finishing seed, one line."""
    ours, p, lows = c.runs["ours"], prices(), c.lows
    eq = conversation(ours, c.factor)
    whole = equivalents(ours, c.factor)
    cc = c.cc.equivalents if c.cc else None
    money = [f"{ours.dollars(k, p[k]):.3f} ({ours.dollars(k, p[k]) / lows[k]:.2f}x)" for k in PACES]
    probes = " / ".join(f"{s:.0%}" if (s := ours.share(k)) is not None else "-" for k in PROBES[:3])
    seeds = []
    for k in PACES:
        check = _check(c, k)
        if check.best_seed is None:
            seeds.append(_no_seed(c))
            continue
        share = check.excess_share
        said = f"{share:.0%}" if share is not None else "(at or below the floor)"
        beaten = f"; beaten by {', '.join(check.beaten_by)}" if check.beaten_by else ""
        seeds.append(f"{check.best_seed.policy} {said}{beaten}")
    ranked = sorted(excess_parts(ours, lows["claude"]).items(), key=lambda kv: -abs(kv[1]))[:2]
    parts = "; ".join(f"{k} ${v:.3f}" for k, v in ranked)
    return (
        f"| {c.title} | {cc:,.0f} | {eq:,.0f} ({eq / cc:.2f}x) | {whole:,.0f} ({whole / cc:.2f}x) | "
        if cc
        else f"| {c.title} | - | {eq:,.0f} | {whole:,.0f} | "
    ) + (
        f"{'yes' if ours.finished else 'no'} | "
        + " | ".join(money)
        + f" | {probes} | "
        + " | ".join(seeds)
        + f" | {parts} |"
    )


SUMMARY_HEAD = [
    "| session | Claude Code billed (token-eq.) | ours, the conversation (x Claude Code) "
    "| ours with the probes' round trips (x) | ours finished "
    "| ours $ steady (x floor) | ours $ paused (x floor) | ours' probes: "
    + " / ".join(PROBES[:3])
    + " | excess vs best seed, steady | paused | largest parts of ours' excess |",
    "|---|---:|---:|---:|---|---:|---:|---|---|---|---|",
]


def split_table(cells: list[Cell]) -> list[str]:
    """Ours' bill by component beside Claude Code's, every long cell (token-equivalents in the
    recording's tokens): cache writes, cache reads, uncached input, and ours' summary calls and
    recall round trips."""
    long = [c for c in cells if c.long and c.cc and "ours" in c.runs]
    if not long:
        return []
    out = [
        "",
        "Ours' bill by component, Claude Code's beside it (token-equivalents: writes 1.25x, reads 0.1x):",
        "",
        "| session | writes: ours / Claude Code | reads: ours / Claude Code "
        "| uncached input: ours / Claude Code | ours' summary calls "
        "| the conversation: ours / Claude Code | ours' probes' round trips |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in long:
        assert c.cc is not None
        mine, theirs = split(c.runs["ours"], c.factor), recorded_split(c.cc)
        pair = [f"{mine[k]:,.0f} / {theirs[k]:,.0f}" for k in ("writes", "reads", "uncached input")]
        out.append(
            f"| {c.title} | " + " | ".join(pair) + f" | {mine['summary calls']:,.0f} | "
            f"{sum(mine.values()) - mine['recall round trips']:,.0f} / {c.cc.equivalents:,.0f} | "
            f"{mine['recall round trips']:,.0f} |"
        )
    return out


def goal_lines(cells: list[Cell]) -> list[str]:
    """The 0.6x goal on the long cells: which miss, by how much, and ours' bill by component beside
    Claude Code's (writes, reads, uncached input; summary calls and recall round trips are ours' only)."""
    long = [c for c in cells if c.long and c.cc and "ours" in c.runs]
    if not long:
        return []
    misses = []
    for c in long:
        ours = c.runs["ours"]
        eq = conversation(ours, c.factor)
        assert c.cc is not None
        faithful = all((s := ours.share(k)) is None or s >= 1.0 for k in PROBES)
        if eq / c.cc.equivalents <= GOAL and faithful and ours.finished:
            continue
        mine, theirs = split(ours, c.factor), recorded_split(c.cc)
        parts = ", ".join(
            f"{k} {v:,.0f}"
            + (f" ({v / theirs[k]:.2f}x Claude Code's {theirs[k]:,.0f})" if theirs.get(k) else "")
            for k, v in mine.items()
        )
        unanswered = [f"{k} {s:.0%}" for k in PROBES if (s := ours.share(k)) is not None and s < 1.0]
        why = []
        if eq / c.cc.equivalents > GOAL:
            why.append(f"{eq / c.cc.equivalents:.2f}x Claude Code's bill (goal <= {GOAL}x)")
        if unanswered:
            why.append("probes " + ", ".join(unanswered))
        if not ours.finished:
            why.append(f"refused at request {ours.failed_at}")
        misses.append(f"- {c.title}: {'; '.join(why)}. Ours by component: {parts}.")
    met = len(long) - len(misses)
    head = (
        f"The goal (ours' bill for the conversation at most {GOAL}x Claude Code's recorded bill, every "
        "probe answered) is met on "
        f"{met} of {len(long)} long cells"
    )
    return ["", head + (":" if misses else "."), "", *misses] if misses else ["", head]


GOAL = 0.6


def load_cells(
    files: list[Path],
    windows: list[int],
    names: list[str],
    stand_in: str,
    day: bool,
    alone: bool = True,
    long: bool = True,
) -> list[Cell]:
    """Each file alone at each window (unless not `alone`), then (with `day`) the files chained."""
    loaded = []
    cells = []
    for path in files:
        session, ids = load_with_ids(path)
        factor = unit_factor(path, session, ids, message_tokens)
        loaded.append((path, session, factor, recorded_bill(path)))
        for window in windows if alone else []:
            runs = cell(session, window, names, stand_in)
            title = f"{path.stem}, {window // 1000}k, {stand_in}"
            cells.append(Cell(title, session, window, runs, factor, loaded[-1][3], long))
    if day and len(loaded) > 1:
        chained = working_day([s for _, s, _, _ in loaded])
        factor = sum(f for _, _, f, _ in loaded) / len(loaded)
        total = RecordedBill(
            *(
                sum(getattr(b, k) for _, _, _, b in loaded)
                for k in ("requests", "input", "read", "write", "write_1h", "output")
            )
        )
        names_ = " + ".join(p.stem for p, _, _, _ in loaded)
        for window in windows:
            runs = cell(chained, window, names, stand_in)
            cells.append(
                Cell(
                    f"working day ({names_}), {window // 1000}k, {stand_in}",
                    chained,
                    window,
                    runs,
                    factor,
                    total,
                )
            )
    return cells


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
    parser.add_argument(
        "--set", nargs="+", default=[], metavar="KEY=VALUE",
        help="ours with these [context] settings instead of the defaults (trigger_ratio=0.9)",
    )  # fmt: skip
    args = parser.parse_args()
    global OURS
    try:
        OURS = ours_settings(args.set)
    except SystemExit as exc:
        parser.error(str(exc))
    if args.shape:  # the same floor and goals on one of the made-up sessions
        made = synthetic(args.shape, 1, "typical")
        for window in args.windows:
            runs = cell(made, window, args.policies, args.stand_in)
            title = f"{args.shape}, typical, seed 1, {window // 1000}k, {args.stand_in}"
            print("\n".join(cell_lines(Cell(title, made, window, runs, 1.0, None, long=False))))
        return
    main_files, subs, note = real_paths()
    if note:
        print(note)
    files = subs if args.subagents or not main_files else main_files
    files = [f for f in files if not args.sessions or any(s in f.name for s in args.sessions)]
    cells = load_cells(
        files,
        args.windows,
        args.policies,
        args.stand_in,
        args.day or args.day_only,
        not args.day_only,
        long=not (args.subagents or not main_files),
    )
    for c in cells:
        print("\n".join(cell_lines(c)))
    if any("ours" in c.runs for c in cells):
        print(
            "\n".join(
                ["", *SUMMARY_HEAD, *(summary_row(c) for c in cells if "ours" in c.runs), *goal_lines(cells)]
            )
        )


if __name__ == "__main__":
    main()

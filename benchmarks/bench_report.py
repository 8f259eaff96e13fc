"""The one command: replay every session through every policy on every window, and rewrite the report.

    python benchmarks/bench_report.py            # writes docs/benchmarks.md (and PNGs if matplotlib is there)
    python benchmarks/bench_report.py --quick    # the long session only, 200k only (a smoke run)

About 20 minutes on 2 cores: the replay (5 min), the end-to-end runs through `agent -p` (10 min),
the timing scripts (3 min). `--no-e2e` and `--no-timings` leave those sections out.

Deterministic: sessions are seeded, the summarizer is a stand-in, counts use one reference
tokenizer, so a rerun reproduces every table. Pictures need the `bench` extra
(`pip install -e '.[bench]'`, matplotlib); without it the report says so and the tables stand.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_e2e import E2ERun, run_e2e  # noqa: E402
from bench_policies import POLICIES, Ours, Policy  # noqa: E402
from bench_replay import PROBES, Run, reference_count, replay  # noqa: E402
from bench_sessions import SHAPES, make_session  # noqa: E402
from bench_text import goals, honest, method, timings  # noqa: E402

from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.context.protocol import Frame  # noqa: E402
from agent_cli.prompt.system import build_system_prompt  # noqa: E402
from agent_cli.providers.models import lookup  # noqa: E402
from agent_cli.tools.registry import default_tools  # noqa: E402

WINDOWS = (32_000, 200_000, 1_000_000)
PRICED = ("claude-sonnet-5-5", "gpt-6.2-sol")
NEIGHBOURS = {  # the defaults against their neighbours, on every workload
    "working budget 64k": ContextSettings(working_budget=64_000),
    "defaults (budget 100k, L1 protects 25k, trigger 80%)": ContextSettings(),
    "working budget 160k": ContextSettings(working_budget=160_000),
    "L1 protects 12k": ContextSettings(clear_protect_tokens=12_000),
    "L1 protects 18k": ContextSettings(clear_protect_tokens=18_000),
    "trigger 70%": ContextSettings(trigger_ratio=0.70),
    "trigger 90%": ContextSettings(trigger_ratio=0.90),
}
E2E_SHAPES = ("long", "survey")


def frame() -> Frame:
    from datetime import date

    system = build_system_prompt(Path("/project"), instructions=None, today=date(2026, 11, 30))
    return Frame(system, default_tools().specs())


def run_one(shape: str, name: str, window: int, settings: ContextSettings | None = None) -> Run:
    f = frame()
    tokens = reference_count(f.system) + sum(reference_count(str(t)) for t in f.tools)
    policy: Policy = (
        Ours(window, f, reference_count, settings)
        if name == "ours"
        else POLICIES[name](window, f, reference_count)
    )
    info = lookup(PRICED[0])
    assert info is not None
    return replay(make_session(shape, seed=1), policy, info, tokens)


def dollars(run: Run, model: str) -> float:
    """The run's cost at `model`'s prices: Claude's with the marked cache, OpenAI's with the automatic one."""
    if model == PRICED[0]:
        return run.dollars
    other = lookup(model)
    assert other is not None
    return (
        run.auto_read * other.cache_read_price
        + run.auto_write * other.cache_write_price
        + run.output_tokens * other.output_price
        + run.summary_input * other.cache_write_price
        + run.summary_output * other.output_price
    ) / 1e6


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def policy_table(runs: list[Run]) -> list[str]:
    lines = [
        "| policy | Sonnet 5.5 $ | GPT-6.2 Sol $ | input | cache read | cache write | output "
        "| summary calls | peak | mean | over window | recall | artifact | continuation | decision |",
        "|" + "---|" * 15,
    ]
    for r in runs:
        lines.append(
            f"| {r.policy} | {r.dollars:.2f} | {dollars(r, PRICED[1]):.2f} | {r.input_tokens:,} "
            f"| {r.cache_read:,} | {r.cache_write:,} | {r.output_tokens:,} | {r.summary_calls} "
            f"| {r.peak:,} | {r.mean:,.0f} | "
            f"{r.over_window} | " + " | ".join(pct(r.share(p)) for p in PROBES) + " |"
        )
    return lines


def fidelity(run: Run) -> float:
    shares = [run.share(p) for p in PROBES]
    known = [x for x in shares if x is not None]
    return sum(known) / len(known) if known else 0.0


def pictures(all_runs: dict[tuple[str, int], list[Run]], out: Path) -> list[str]:
    """A PNG per window of context tokens per turn (long session), and one of cost against fidelity."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(Pictures need matplotlib: `pip install -e '.[bench]'`, then rerun.)", ""]
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for (shape, window), runs in sorted(all_runs.items()):
        if shape != "long":
            continue
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for r in runs:
            ax.plot(r.requests, label=r.policy, linewidth=1.2)
        ax.axhline(window, color="red", linestyle="--", linewidth=0.8, label="window")
        ax.set(xlabel="request", ylabel="input tokens", title=f"long session, {window // 1000}k window")
        ax.set_ylim(0, min(max(max(r.requests) for r in runs) * 1.05, window * 1.5))
        ax.legend(fontsize=8)
        name = f"context-{window // 1000}k.png"
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        lines += [f"![context tokens per request, {window // 1000}k window](img/{name})", ""]
    fig, ax = plt.subplots(figsize=(7, 5))
    for (shape, window), runs in sorted(all_runs.items()):
        for r in runs:
            if r.policy == "none":
                continue
            ax.scatter(r.dollars, fidelity(r) * 100, s=25)
            ax.annotate(f"{r.policy} {shape} {window // 1000}k", (r.dollars, fidelity(r) * 100), fontsize=6)
    ax.set(
        xlabel="dollars (Sonnet 5.5 prices, with caching)",
        ylabel="fidelity: mean probe pass rate (%)",
        title="cost against fidelity",
    )
    fig.tight_layout()
    fig.savefig(out / "cost-fidelity.png", dpi=110)
    plt.close(fig)
    return [*lines, "![cost against fidelity](img/cost-fidelity.png)", ""]


def e2e_table(runs: list[E2ERun]) -> list[str]:
    lines = [
        "## End to end: `agent -p` against the in-repo fake over HTTP",
        "",
        "The same sessions, driven through the product (`bench_e2e.py`): one `agent -p` per user",
        "message (`--continue` after the first), the fake answering each request with the session's next",
        "step, its tool calls run for real in a temporary project, summary requests answered with the",
        "same stand-in record. Billed tokens are what the agent itself reports (the fake simulates",
        "Anthropic's prompt cache at the breakpoints the agent sets), priced at Claude Sonnet 5.5's",
        "prices; sizes are the fake's counts (characters / 4), so they differ from the replay's.",
        "",
        "| session | window | processes | requests | summary calls | cache read | cache write | uncached "
        "| output | Sonnet 5.5 $ | largest | over window | recall | artifact | continuation | decision "
        "| layers acted |",
        "|" + "---|" * 17,
    ]
    for r in runs:
        layers = ", ".join(f"{k} {v}" for k, v in sorted(r.compactions.items()))
        lines.append(
            f"| {r.shape} | {r.window // 1000}k | {r.processes} | {r.requests} | {r.summary_calls} "
            f"| {r.cache_read:,} | {r.cache_write:,} | {r.input_tokens:,} | {r.output_tokens:,} "
            f"| {r.dollars:.2f} | {r.largest:,} | {r.over_window} | "
            + " | ".join(pct(r.share(p)) for p in PROBES)
            + f" | {layers} |"
        )
    failed = [f"- {r.shape} {r.window // 1000}k: {f}" for r in runs for f in r.failed]
    if failed:
        lines += ["", "Runs that did not end cleanly:", "", *failed]
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-e2e", action="store_true", help="leave out the runs through `agent -p`")
    parser.add_argument("--no-timings", action="store_true", help="leave out start-up and per-turn timings")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args()
    started = time.perf_counter()

    def note(what: str) -> None:
        print(f"{what} ({time.perf_counter() - started:.0f}s)", flush=True)

    shapes = ["long"] if args.quick else list(SHAPES)
    windows = [200_000] if args.quick else list(WINDOWS)
    tables: list[str] = []
    all_runs: dict[tuple[str, int], list[Run]] = {}
    for shape in shapes:
        for window in windows:
            runs = [run_one(shape, name, window) for name in POLICIES]
            all_runs[(shape, window)] = runs
            tables += [f"### {shape} session, {window // 1000}k window", "", *policy_table(runs), ""]
            note(f"replay {shape} {window}")
    near: list[str] = []
    long_neighbours: dict[int, list[Run]] = {}
    for shape in shapes:
        for window in windows:
            runs = []
            for label, settings in NEIGHBOURS.items():
                r = run_one(shape, "ours", window, settings)
                r.policy = label
                runs.append(r)
            if shape == "long":
                long_neighbours[window] = runs
            near += [f"### {shape}, {window // 1000}k", "", *policy_table(runs), ""]
        note(f"neighbours {shape}")
    stamp = time.strftime("%Y-%m-%d")
    report = method(stamp)
    long_runs = {w: runs for (shape, w), runs in all_runs.items() if shape == "long"}
    report += goals(long_runs, long_neighbours, dollars, PRICED[1])
    report += ["## Policies side by side", "", *tables]
    report += ["## Pictures", "", *pictures(all_runs, Path(args.out).parent / "img")]
    report += [
        "## The defaults against their neighbours",
        "",
        "Ours with one setting moved at a time, on every session and window. A default is chosen on",
        "all of these together, never on one.",
        "",
        *near,
    ]
    if not args.no_e2e:
        e2e = [
            run_e2e(shape, window) for shape in (["long"] if args.quick else E2E_SHAPES) for window in windows
        ]
        report += e2e_table(e2e)
        note("end to end")
    report += honest()
    if not args.no_timings:
        report += timings()
        note("timings")
    Path(args.out).write_text("\n".join(report) + "\n")
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()

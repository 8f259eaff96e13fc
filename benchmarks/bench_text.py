"""The report's prose: how it was measured, what the verdicts rest on, the figures that
cannot be rerun here, and the timing scripts' own output folded in."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from bench_policies import Hybrid, JavaS06, JavaScript, Kotlin, Masking
from bench_replay import (
    CLAUDE_RATIO,
    MODEL_STEP_SECONDS,
    OUTPUT_TOKENS_PER_S,
    PAUSE_MEDIAN_SECONDS,
    PAUSE_SIGMA,
    PROBE_EVERY,
    SUMMARY_FIRST_TOKEN_S,
    USER_STEP_SECONDS,
)
from bench_sessions import OUTPUTS
from bench_standins import RECORD_TOKENS
from bench_tables import Group

ROOT = Path(__file__).resolve().parent.parent


def method(stamp: str, runs: int, seeds: int) -> list[str]:
    typical, heavy = OUTPUTS["typical"], OUTPUTS["heavy"]
    return [
        "# Benchmarks: policies, windows, cost with caching, fidelity",
        "",
        f"Written by `python benchmarks/bench_report.py` ({stamp}). Every table below comes from that one",
        "command, offline, on a fresh clone; the replay is deterministic (the same bytes in every request",
        f"on every run), so a rerun reproduces its tables exactly ({runs:,} replay runs), and the timed",
        "sections move by the machine's noise.",
        "",
        "Every rule below holds for every policy alike; where a policy's own design says otherwise, the",
        "design is followed and named.",
        "",
        f"**Sessions** (`bench_sessions.py`, seeds 1-{seeds}, each kind with both tool-output",
        "distributions): `long` is 320 model steps of an engineering task (reads, edits, failing and",
        "passing test runs, searches, a user follow-up every 12-20 steps); `survey` is 60 reads of files",
        "with a long analysis each; `chat` is 120 steps of conversation with small tool calls. Tool",
        f"outputs are lognormal, two ways: *typical* (commands median {typical[0][0]:,.0f} tokens,",
        f"sigma {typical[0][1]}; file reads median {typical[1][0]:,.0f}, sigma {typical[1][1]}) and",
        f"*heavy* (commands {heavy[0][0]:,.0f}, sigma {heavy[0][1]}; files {heavy[1][0]:,.0f}, sigma",
        f"{heavy[1][1]}); the chat's commands are a quarter of a command's draw;",
        "answers 80% short (40-250) and 20% long (700-2,200). Planted in the first steps: an error in",
        "a failing test's output, the dev server's address, the user's constraint, a decision with its",
        "reason, an edited line. Each has a question a user would ask and its answer.",
        "",
        "**Policies** (`bench_policies.py`), each as its own design describes it: `ours` is the product's",
        "context engine with its defaults, in process; `java-s06` clears tool results older than 3 turns",
        "every turn and summarizes everything past 50k tokens (characters / 4), sending the first",
        f"{JavaS06.transcript_chars:,} characters of a `role: content` transcript (mid-turn, the round the",
        "model is to answer stays after the record); `kotlin` summarizes at 80% of the window",
        "(characters / 3) keeping 50% and at least the newest message, sending each message with tool",
        f"results cut to {Kotlin.preview} characters and the previous summary, capped at",
        f"{Kotlin.summary_cap:,} tokens, drops the oldest messages at 95% as its seed does, and when a",
        "request is refused compacts whatever its estimate says, the newest message too, and retries;",
        "`javascript` summarizes at 70% of its budget",
        f"({JavaScript.budget // 1024}k, or the window when smaller) keeping the last 3 user turns, sending",
        "text cut to 1,000 characters, tool inputs to 300 and results to 800, capped at",
        f"{JavaScript.summary_cap} tokens, and when a request is refused compacts once more and retries",
        f"once, as its seed does; `masking` keeps the latest {Masking.keep} observations (tool results) and",
        "replaces older ones with the paper's placeholder (arXiv 2508.21433), nothing else;",
        f"`hybrid` is the paper's hybrid: masking plus a rolling summary of the first {Hybrid.n} turns once",
        f"{Hybrid.n + Hybrid.m} are unsummarized ({Hybrid.m} kept); `none` sends everything.",
        "",
        "**Summaries.** Each policy's summary request carries the same frame (system prompt and tools)",
        "and its own input as its design builds it; it goes through the same caches as any request,",
        "and its output is billed. The record comes from one of two stand-ins, each used for every",
        f"policy (`bench_standins.py`), reading only that input: *lossy* (about {RECORD_TOKENS:,} tokens",
        "of the newest entries' first lines: a model that keeps what is recent) and *faithful* (what",
        "every policy's own prompt asks a model to keep: the latest request, the latest error, the next",
        "step, the specific values its input holds, the files touched), within the policy's own output",
        "cap. Ours' *digests* (records built by code when the latch holds the model back) are counted in",
        "their own column: they cost nothing and keep less.",
        "",
        "**Counts and feasibility** (`bench_replay.py`). One reference tokenizer (o200k_base) counts",
        f"every request, whatever the policy's own estimate; Claude's count is that times {CLAUDE_RATIO}",
        "(the newer Claude tokenizer). A request whose Claude count is over the window is refused as",
        "the provider refuses it, not billed; a policy with a reactive path (ours, `javascript`,",
        "`kotlin`) gets one retry; a policy that cannot go on has *failed* that session, and a failed",
        "run is shown with the request it was refused at, never priced. A policy is compared only where",
        "it finishes every seed. *Results unseen*: requests a policy sent without the message they",
        "answer (the tool results just returned, or the user's words) as the session gave it; the",
        "session's next reply was written from that message, so such a request is credited with a reply",
        "its model could not have written (no policy keeps a result out by choice: the seeds keep the",
        "round to be answered whenever it fits, and lose it only on the way out of a refusal).",
        "",
        "**Cost** (`bench_billing.py`): every request is built as the agent builds it and put on the",
        "wire by the product's own adapters, then billed by `agent_cli.billing` (docs/cost-model.md):",
        "at Claude Sonnet 5.5's prices with Anthropic's cache (breakpoints where the adapter puts them:",
        "the system prompt, the newest message, the policy's own edit point (the newest message a",
        "baseline rewrote or what the product marks for ours) and a bridge to the last write when no",
        "other mark is within 20 blocks of it; a read only at a prefix an earlier request wrote, looking",
        "back 20 blocks; `tool_choice` part of the messages' prefix, so ours' summary calls send the",
        "main requests' and read the conversation back;",
        "entries live 5 minutes from their last use) and at GPT-6.2 Sol's with OpenAI's automatic",
        "cache (any earlier prefix from 1,024 tokens in 128-token steps, 5 minutes). Reads at the",
        "cache-read price, writes at the cache-write price, what follows the last breakpoint at the",
        "input price. Two paces: *steady*",
        f"({MODEL_STEP_SECONDS:.0f} s a model step, {USER_STEP_SECONDS:.0f} s a user message: nothing",
        "expires) and *paused* (the user's",
        f"pauses lognormal, median {PAUSE_MEDIAN_SECONDS:.0f} s, sigma {PAUSE_SIGMA}: about one in five past",
        "the 5-minute TTL). *Wait on summaries*: a summary made at the trigger blocks its turn:",
        f"{SUMMARY_FIRST_TOKEN_S:.0f} s to the first token, then {OUTPUT_TOKENS_PER_S:.0f} tokens a second.",
        "Ours prepares its record ahead where it can (context/decide.py); where a turn would still wait",
        "for one (none prepared, or not ready on the steady clock since it was sent), a digest stands in",
        "at once and the record, made in the background, takes its place at the first request after it",
        "is ready, billed as sent (its summary call, and the prefix written again after the swap). The",
        "seed policies have no such path, so every summary of theirs blocks.",
        "",
        f"**Probes** on the same requests for every policy (every {PROBE_EVERY}th), after Factory (Dec",
        "2025): *recall* (each planted fact's answer is in the request, or the policy's `recall`, asked",
        "about every fact at every probe point with the phrase of the fact's question and never its",
        "answer, returns it; only ours has a recall; any policy reads again a file that holds a missing",
        "answer when its request or the question names it; the calls and their results are billed as a",
        "tool round trip: the calls as output, and one more request), *artifact* (every file a tool",
        "call touched is named), *continuation* (the latest user message, and the next step stated",
        "since it, in the request's own words: not in the line our records copy by code), *decision*",
        "(the user's constraint and",
        "decision, verbatim). Shares are means over the seeds of each run's share.",
        "",
    ]


def wait_text(groups: Sequence[Group], at_trigger: str) -> list[str]:
    """The wait on summaries, summed over every session kind and tool-output size at each window:
    the defaults (the record prepared ahead) against the same engine with its record made at the
    trigger, as every summary was made before the record was prepared ahead."""
    windows = sorted({g.window for g in groups})
    rows = []
    for window in windows:
        cells = [g for g in groups if g.window == window and "defaults" in g.aggs and at_trigger in g.aggs]
        ahead = sum(g.aggs["defaults"].avg("wait_seconds") for g in cells)
        blocking = sum(g.aggs[at_trigger].avg("wait_seconds") for g in cells)
        share = f"{ahead / blocking:.2f}" if blocking else "n/a"
        rows.append(f"| {window // 1000}k | {len(cells)} | {blocking:,.0f} s | {ahead:,.0f} s | {share} |")
    ahead_all = sum(g.aggs["defaults"].avg("wait_seconds") for g in groups if "defaults" in g.aggs)
    blocking_all = sum(g.aggs[at_trigger].avg("wait_seconds") for g in groups if at_trigger in g.aggs)
    return [
        "**The wait on summaries** (a session's mean, summed over the session kinds and output sizes;",
        f"goal: a tenth of the wait with every record made at the trigger, *{at_trigger}* below):",
        "",
        "| window | cells | made at the trigger | defaults (ahead, or a digest standing in) | share |",
        "|---|---|---|---|---|",
        *rows,
        f"| all | {sum(1 for g in groups if 'defaults' in g.aggs)} | {blocking_all:,.0f} s "
        f"| {ahead_all:,.0f} s | " + (f"{ahead_all / blocking_all:.2f}" if blocking_all else "n/a") + " |",
        "",
    ]


def honest() -> list[str]:
    return [
        "## Figures that cannot be rerun from this repository",
        "",
        "- **Claude Code on the survey** (20 reads of 40 KB files, a long analysis each turn), driven",
        "  headless against a local fake model, as recorded in the team's reference sheet",
        "  (ANCHORS.md; Claude Code 2.1.197, measured before 2026-11-30, not rerunnable here: it needs",
        "  Claude Code installed): at a 200k window, 21 requests, 2 compactions, 2.32M input tokens",
        "  summed, 0.66M token-equivalents after an ideal prompt cache. The same work through",
        "  `agent -p` is rerunnable: `python benchmarks/engine_windows.py` (figures in performance.md).",
        "- **Factory's probe scores** (Dec 2025) were graded by a model on real sessions. The probes",
        "  here are mechanical and the summarizers are stand-ins, so their shares measure what each",
        "  mechanism keeps given a writer that keeps little (lossy) or what its prompt asks (faithful),",
        "  not how well a model writes; they are not comparable with Factory's scale.",
        "",
        "## What the replay cannot see",
        "",
        "- No probe reads a tool output's content beyond the planted facts, and the re-reads a model",
        "  makes after a clear are not modeled: the figures favour clearing more.",
        "- A recall's result is billed for one request and then dropped, so every policy replays the",
        "  same session; in a real session it stays until a layer clears it (more input for ours).",
        "- The Java seed's transcript on disk could be read back with `read_file`; no policy but ours",
        "  is given a way to fetch what it removed, since none of the others has one in its design.",
        "- A request is checked against the window by its Claude count; the GPT-6.2 Sol columns price",
        "  the same requests.",
        "",
    ]


def timings() -> list[str]:
    """The start-up and per-turn scripts, run now, their output verbatim."""
    lines = [
        "## Overhead and start-up",
        "",
        "Run as part of this report; the same scripts alone give the same figures (performance.md",
        "explains them).",
        "",
    ]
    for title, script, args in (
        ("Start-up (`benchmarks/startup.py`)", "startup.py", ["--runs", "11"]),
        (
            "Context engine per turn (`benchmarks/engine_overhead.py`)",
            "engine_overhead.py",
            ["--turns", "60"],
        ),
        ("Token counting per turn (`benchmarks/token_counter.py`)", "token_counter.py", []),
    ):
        proc = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script), *args],
            capture_output=True,
            text=True,
            timeout=900,
        )
        out = (
            proc.stdout.strip()
            if proc.returncode == 0
            else f"failed ({proc.returncode}): {proc.stderr[-400:]}"
        )
        lines += [f"### {title}", "", "```", out, "```", ""]
    return lines

"""The results as markdown: the totals the issue's "done when" asks for, then every case."""

from __future__ import annotations

import platform
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from tests.reliability.harness import Result

TITLES = {
    "faults": "Faults on every wire, streaming and whole replies, in normal turns and summary calls",
    "kills": "kill -9 at random moments of a long session, then --continue",
    "inputs": "Bad input: config, flags, prompts, paths, permissions, output, junk calls, odd replies",
    "signals": "Signals while a command runs, and orphaned processes",
    "security": "Security",
    "terminal": "Hostile text on the terminal: escapes, the approval prompt, odd encodings",
    "allowlist": 'The allow-list as bash parses it, and what "always" remembers',
    "tools": "Tools under attack: backtracking searches, full disks, FIFOs, hard links, the session store",
    "processes": "Commands that outlive their limits: a closed output, kill -9 of the agent",
    "repository": "What a cloned repository can do by itself",
    "providers": "A provider that lies or drips",
    "store": "Secrets in common shapes, and a disk that fills mid-session",
    "sandbox": "Commands that try to get out of the sandbox (through the launcher; not wired to agent yet)",
}


def render(results: Sequence[Result], *, command: str, seconds: float, seed: int) -> str:
    suites = [s for s in TITLES if any(r.case.suite == s for r in results)]
    lines = [
        "# Reliability",
        "",
        f"Written by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {seconds / 60:.1f} min "
        f"({platform.system()} {platform.machine()}, Python {platform.python_version()}, kill seed {seed}).",
        "Every case is a real `agent` process talking to the fake model server through the real SDKs;",
        "after each one, every file the agent wrote (`.transcripts/`, its state and crash logs) is",
        "swept for both API keys and for their first and last 16 characters. The CI sample of these",
        "cases runs in `tests/test_reliability.py`.",
        "",
        "| suite | cases | passed | tracebacks | internal errors | orphaned commands | acknowledged lost "
        "| key pieces on disk |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for suite in suites:
        rs = [r for r in results if r.case.suite == suite]
        lines.append(_row(suite, rs))
    lines.append(_row("**all**", list(results)))
    failed = [r for r in results if not r.passed]
    lines += [
        "",
        f"**{len(results) - len(failed)} of {len(results)} cases pass.**"
        + ("" if not failed else " Failing: " + "; ".join(f"{r.case.suite}: {r.case.name}" for r in failed)),
    ]
    for suite in suites:
        rs = [r for r in results if r.case.suite == suite]
        lines += ["", f"## {TITLES[suite]}", ""]
        if suite == "kills":
            phases = Counter(_phase(r.outcome.detail) for r in rs)
            lines += [
                "Where the kills landed: " + ", ".join(f"{p} {n}" for p, n in phases.most_common()) + ".",
                "",
            ]
        lines += ["| case | result | what was seen | s |", "|---|---|---|---:|"]
        for r in rs:
            seen = r.outcome.detail.replace("|", "\\|")
            if r.leaks:
                seen += f"; KEY PIECES: {', '.join(r.leaks[:3])}"
            verdict = "pass" if r.passed else "**FAIL**"
            lines.append(f"| {r.case.name.replace('|', '/')} | {verdict} | {seen} | {r.seconds:.1f} |")
    return "\n".join(lines) + "\n"


def _row(name: str, rs: Sequence[Result]) -> str:
    o = [r.outcome for r in rs]
    return (
        f"| {name} | {len(rs)} | {sum(r.passed for r in rs)} | {sum(x.traceback for x in o)} | "
        f"{sum(x.internal for x in o)} | {sum(x.orphans for x in o)} | {sum(x.lost for x in o)} | "
        f"{sum(len(r.leaks) for r in rs)} |"
    )


def _phase(detail: str) -> str:
    start = detail.find("(")
    end = detail.find(")", start)
    return detail[start + 1 : end] if 0 <= start < end else "?"

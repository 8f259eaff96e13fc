"""`kill -9` at random moments of a long scripted session, then `--continue`.

The session reads files, runs commands, writes files and compacts (a 16k window), with thinking on
(so a resumed history must also keep its thinking blocks valid). Each case kills the agent at a
random moment (seeded), then checks: every session log loads; the log is append-only (what was
on disk before is still there, byte for byte); every tool call and result the agent had printed
(`stream-json`, what the user saw) is in the log, so nothing acknowledged was lost; and
`--continue` sends a history the server accepts (pairing, thinking bound to its conversation)
and finishes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from agent_cli.store.sessions import load_session, session_ids
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ScriptItem, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_cmd
from tests.reliability.harness import Case, Outcome, env_for, project_in

STEPS = 36
CONFIG = "[provider]\nmax_retries = 2\n"
NOTE = "\n".join(f"row {n:03d}: reading {n * 13} of the long session's notes" for n in range(160)) + "\n"
TASK = "Work through the notes."
ARGS = ["-p", TASK, "--yes", "--output-format", "stream-json", "--context-window", "16000"]


def _step(n: int) -> Reply:
    notes = " ".join(f"Finding {k} at step {n}." for k in range(40))
    kind = n % 4
    if kind == 0:
        call = ToolCallSpec("read_file", {"path": f"notes/n{n % 6}.txt"})
    elif kind == 1:
        call = ToolCallSpec("bash", {"command": f"sleep 0.2; echo step {n}; ls notes | head -3"})
    elif kind == 2:
        call = ToolCallSpec(
            "write_file", {"path": f"out/step{n}.txt", "content": f"result of step {n}\n" * 20}
        )
    else:
        call = ToolCallSpec("grep", {"pattern": f"row 0{n % 10}", "path": "notes"})
    return Reply(f"{notes}\nStep {n}.", tool_calls=[call])


def _session_responder(
    done: str, asked: list[tuple[float, bool]] | None = None
) -> Callable[[RecordedRequest], ScriptItem]:
    """The scripted session; `asked` gets (when, is a summary request) for each request."""
    state = {"step": 0}

    def answer(request: RecordedRequest) -> ScriptItem:
        summary = is_summary_request(request.body)
        if asked is not None:
            asked.append((time.monotonic(), summary))
        if summary:
            return Reply(f"Record: {state['step']} steps done of the notes work; next: keep going.")
        state["step"] += 1
        return _step(state["step"]) if state["step"] <= STEPS else Reply(done)

    return answer


def _project(where: Path) -> Path:
    return project_in(where, CONFIG, {f"notes/n{i}.txt": NOTE for i in range(6)})


Seen = list[tuple[float, dict[str, object]]]


def _run_until(
    where: Path, project: Path, delay: float | None, in_summary: int | None = None
) -> tuple[Seen, list[tuple[float, bool]], int]:
    """Run the session; kill it `delay` seconds in, or when its `in_summary`-th summary request
    arrives (neither: let it finish). The events it printed and the requests it made, each with
    when; its exit code."""
    seen: Seen = []
    asked: list[tuple[float, bool]] = []
    started: dict[str, int] = {}
    session = _session_responder("KILL-SESSION-DONE", asked)

    def answer(request: RecordedRequest) -> ScriptItem:
        item = session(request)
        if in_summary is not None and asked[-1][1] and sum(s for _, s in asked) == in_summary:
            os.kill(started["pid"], signal.SIGKILL)  # while the summary is being written
        return item

    with FakeModelServer() as server:
        server.responder = answer
        proc = subprocess.Popen(
            agent_cmd(*ARGS),
            cwd=project,
            env=env_for(where, server),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started["pid"] = proc.pid
        assert proc.stdout is not None
        out = proc.stdout

        def read() -> None:
            for line in out:
                if line.startswith("{"):
                    seen.append((time.monotonic(), json.loads(line)))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if delay is not None:
            try:
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        code = proc.wait(timeout=300)
        reader.join(timeout=10)
    return seen, asked, code


_full: dict[str, float] = {}
_full_lock = threading.Lock()


def session_span(root: Path) -> tuple[float, float]:
    """When the unkilled session makes its first request and when it ends, in seconds from its
    start (measured once per suite run): kills are drawn between the two."""
    with _full_lock:
        if "end" not in _full:
            where = root / "full-run"
            where.mkdir(parents=True, exist_ok=True)
            start = time.monotonic()
            seen, asked, code = _run_until(where, _project(where), None)
            if code != 0 or not any(e.get("type") == "result" for _, e in seen) or not asked:
                raise RuntimeError(f"the unkilled session did not finish (exit {code})")
            _full["first"] = asked[0][0] - start
            _full["end"] = time.monotonic() - start
        return _full["first"], _full["end"]


def _phase(seen: Seen, asked: list[tuple[float, bool]]) -> str:
    """What the agent was doing when it died: the last thing it printed, or a request it made
    after that (a reply or a summary on its way)."""
    last_event = seen[-1][0] if seen else 0.0
    if asked and asked[-1][0] > last_event:
        return "in a summary call" if asked[-1][1] else "streaming a reply"
    if not seen:
        return "starting up"
    return {
        "tool_call": "running a tool",
        "tool_result": "writing a tool result",
        "compact": "compacting",
        "result": "finished",
    }.get(str(seen[-1][1].get("type")), "streaming a reply")


def _check(where: Path, project: Path, delay: float | None, in_summary: int | None = None) -> Outcome:
    start = time.monotonic()
    timed, asked, _ = _run_until(where, project, delay, in_summary)
    delay = time.monotonic() - start if delay is None else delay
    phase = _phase(timed, asked)
    seen = [e for _, e in timed]
    ids = session_ids(project)
    if not ids:
        return Outcome(True, f"killed at {delay:.2f} s ({phase}): no session started yet")
    problems: list[str] = []
    for sid in ids:
        loaded = load_session(project, sid)  # raises if a log cannot be loaded
        if loaded.skipped_lines > 1:
            problems.append(f"{loaded.skipped_lines} unreadable lines")
    log = project / ".transcripts" / ids[-1] / "session.jsonl"
    before = log.read_bytes()
    acknowledged = [str(e["id"]) for e in seen if e.get("type") in ("tool_call", "tool_result")]
    lost = [i for i in set(acknowledged) if i.encode() not in before]
    with FakeModelServer() as server:
        server.queue(Reply("KILL-SESSION-RESUMED"))
        server.responder = _session_responder("KILL-SESSION-RESUMED")
        resumed = subprocess.run(
            agent_cmd("-p", "Go on where you stopped.", "--continue", "--yes", "--context-window", "16000"),
            cwd=project,
            env=env_for(where, server),
            capture_output=True,
            text=True,
            timeout=300,
        )
        sent = [json.dumps(q.body) for q in server.requests if not is_summary_request(q.body)]
    after = log.read_bytes()
    if resumed.returncode != 0:
        problems.append(f"--continue exit {resumed.returncode}: {resumed.stderr.strip()[-160:]}")
    elif "KILL-SESSION-RESUMED" not in resumed.stdout:
        problems.append("--continue did not finish")
    if not after.startswith(before):
        problems.append("the log was rewritten, not appended to")
    if sent and TASK not in sent[0]:
        problems.append("--continue sent a history without the task")
    if lost:
        problems.append(f"{len(lost)} acknowledged tool calls/results not in the log")
    detail = f"killed at {delay:.2f} s ({phase}), {len(acknowledged)} acknowledged"
    if problems:
        return Outcome(False, f"{detail}: {'; '.join(problems)}", lost=len(lost))
    return Outcome(True, f"{detail}; log loads, --continue finished")


def _kill_at(where: Path, fraction: float) -> Outcome:
    first, end = session_span(where.parent)
    return _check(where, _project(where), first - 0.2 + fraction * (end - first + 0.2))


def _kill_in_summary(where: Path, n: int) -> Outcome:
    return _check(where, _project(where), None, n)


def cases(count: int, seed: int, sample: int) -> list[Case]:
    """`count` kills at moments drawn (seeded) over the measured length of the session, and two
    inside a summary call (a moment a random draw seldom hits: the fake answers at once)."""
    rng = random.Random(seed)
    fractions = [rng.random() for _ in range(count)]
    found = []
    for n, fraction in enumerate(fractions):
        found.append(
            Case(
                "kills",
                f"kill -9 at {fraction:.0%} of the session (seed {seed})",
                partial(_kill_at, fraction=fraction),
                sample=n < sample,
            )
        )
    for n in (1, 2):
        found.append(
            Case(
                "kills",
                f"kill -9 inside summary call {n}",
                partial(_kill_in_summary, n=n),
                sample=n == 1,
            )
        )
    return found

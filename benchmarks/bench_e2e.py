"""The second mode: a generated session end to end, through `agent -p` against the in-repo fake over HTTP.

    python benchmarks/bench_e2e.py [--shape long] [--window 200000 ...] [--summarizer lossy|faithful]

The replay (bench_replay.py) drives the engine in-process; this drives the product. The session's
user messages become one `agent -p` each (`--continue` after the first, as a user would type them);
the fake model answers each request with the session's next step. Its tool calls run for real in a
temporary project: before a step's `read_file` the fake writes that file with the step's content;
a command runs as the session wrote it (`pytest -q tests/test_auth.py`), through a stand-in program
on PATH that prints the step's output (exit 1 when it failed), so the transcript names the command
the session ran; an edit gets a unique marker to replace; searches run over what is there.

Summary requests (recognised by structure, `agent_cli.testing.summary_shape.is_summary_request`) are
answered by one of the replay's two stand-ins (`bench_standins`: lossy or faithful), from the
request's own messages rendered to (role, text) entries, within the product's record cap (the
request's `max_tokens` over `THINKING_ROOM`), counted as characters / 4.

Probes, on the same requests as the replay's: every `PROBE_EVERY`-th main request (a request the
fake answers with a step of the session; summary requests, a recall round trip's second request and
the closing "Done" of a turn are not numbered), scored as the request arrives, so against the
project as it is on disk then:
    recall        a planted fact's answer is in the request; if not, the fake answers that request
                  with one `recall` tool call per missing fact, all in one reply, whose input is the
                  fact's question, or at every other probe its paraphrase (`Fact.asked`: a
                  question's words only, never the answer nor a phrase picked to match the
                  output, so no oracle); the agent runs its
                  real tool, and the fact passes if the tool result in the next main request holds
                  the answer. Then the session's step is played as it would have been. The round
                  trip is billed as the product bills it, and its results stay in the history.
    artifact      every file a read or an edit touched so far is named in the request
    continuation  the last user message, and the newest "Next:" since it, are in the request
    decision      the user's constraints and decisions are in the request, verbatim

Counted from what the product reports in its stream-json events (usage per request, and each
summary call's usage on its compact event), priced at the model table's prices: billed tokens,
dollars; from the fake's own records (characters / 4): requests, summary calls, the largest request
and requests over the window; digests are compactions the product reports as `degraded`
(not a digest standing in for a record on its way).

The same arguments give the same figures: the project is made at a fixed place, the agent's
random ids are drawn from a seeded generator, and its summary calls run at once where the product
would run them in a thread, so a record made ahead arrives at a set request (see `PROJECT_PARENT`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_e2e_wire import request_entries, request_text, tool_results  # noqa: E402
from bench_replay import PROBE_EVERY, PROBES  # noqa: E402
from bench_sessions import Fact, Session, Step, make_session  # noqa: E402
from bench_standins import STAND_INS, faithful_record, lossy_record  # noqa: E402

from agent_cli.context.summary_request import THINKING_ROOM  # noqa: E402
from agent_cli.core.messages import Message, TextBlock, ToolUse, Usage  # noqa: E402
from agent_cli.providers.models import cost, lookup  # noqa: E402
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec  # noqa: E402
from agent_cli.testing.summary_shape import is_summary_request  # noqa: E402

__all__ = ["E2ERun", "RecallCheck", "judge_recall", "request_entries", "run_e2e", "segments"]

MODEL = "claude-sonnet-5-5"
RECALL_TOOL = "recall"  # agent_cli.tools.context_tools.Recall: input {"query": ...}
# The product names its transcripts by absolute path in its records and notes, and gives messages
# and sessions random ids, which recall's passages carry: its own token counts (cl100k, which counts
# "uv4fg25s" and "swzwt9le" differently) would then move a cut or a compaction from run to run. So
# the project is made at a fixed place, /tmp/agent-bench-e2e-N (the first N free: a digit counts
# alike), and the agent runs with `secrets.token_hex` drawn from a generator seeded with the run's
# seed and the segment (ids stay random-looking and unique; only their draw is repeatable).
PROJECT_PARENT = Path("/tmp")
#
# A record the product prepares in the background takes its digest's place at the first request
# prepared after its call ends; in a thread, that is one request sooner or later from run to run
# (with the summary answered in half a second instead of at once: 7 summary calls instead of 12,
# and L4 three times), and what the model sees then decides whether it recalls, what L0 caps and
# what it writes. So the agent's summary calls run at once, where the product would start its
# thread (`ContextEngine(submit=...)`, as the replay runs them): the record is ready at the first
# request after the one it was started at, however long the fake takes to write it. The product's
# decisions are its own: the record is prepared ahead, held, taken or stood in for as a user's
# session would where each summary is answered before the next request is prepared.
_LAUNCH = """import random, runpy, secrets, sys
from concurrent.futures import Future
from agent_cli.context.engine import ContextEngine
draw = random.Random(sys.argv.pop(1))
secrets.token_hex = lambda nbytes=None: draw.randbytes(32 if nbytes is None else nbytes).hex()
def at_once(call):
    future = Future()
    try:
        future.set_result(call())
    except Exception as exc:
        future.set_exception(exc)
    return future
ContextEngine.__init__.__kwdefaults__["submit"] = at_once
sys.argv[0] = "agent"
runpy.run_module("agent_cli", run_name="__main__", alter_sys=True)
"""
_SIMPLE_COMMAND = re.compile(r"^[\w][\w.-]*(?: [\w./=:-]+)*$")
_SHIM = """#!/bin/sh
# The session's recorded output for this command line, written by the benchmark's fake model.
key=$(printf '%s' "$(basename "$0") $*" | tr -c 'A-Za-z0-9._-' '_')
out="$(dirname "$0")/../out/$key"
cat "$out.txt"
exit "$(cat "$out.rc")"
"""


def _count(text: str) -> int:
    return (len(text) + 3) // 4  # as the fake counts


@dataclass(frozen=True, slots=True)
class RecallCheck:
    """One recall the fake asked for at a probe point, and what the agent's tool returned."""

    point: int  # the main request it was asked at
    call_id: str
    query: str
    answer: str
    result: str | None  # the tool result the next main request carried (None: it carried none)

    @property
    def passed(self) -> bool:
        return self.result is not None and self.answer in self.result


@dataclass(slots=True)
class E2ERun:
    shape: str
    window: int
    summarizer: str = "lossy"
    seed: int = 1
    processes: int = 0
    failed: list[str] = field(default_factory=list)
    requests: int = 0
    main_requests: int = 0  # requests answered with a step of the session (the numbered ones)
    summary_calls: int = 0
    digests: int = 0  # compactions whose record is the mechanical digest (`degraded`, not standing in)
    recall_calls: int = 0  # recall tool calls the fake made at probe points
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0
    dollars: float = 0.0
    largest: int = 0
    over_window: int = 0
    compactions: dict[str, int] = field(default_factory=dict)
    probes: dict[str, list[bool]] = field(default_factory=lambda: {p: [] for p in PROBES})
    probe_points: list[int] = field(default_factory=list)
    recalls: list[RecallCheck] = field(default_factory=list)
    recorded: list[RecordedRequest] = field(default_factory=list, repr=False)

    def share(self, probe: str) -> float | None:
        scores = self.probes[probe]
        return sum(scores) / len(scores) if scores else None

    def figures(self) -> dict[str, Any]:
        """What the run measured, without the per-request records."""
        skip = ("probes", "recalls", "recorded", "probe_points")
        return {k: getattr(self, k) for k in self.__slots__ if k not in skip}


def segments(session: Session) -> list[tuple[Step, list[Step]]]:
    """(a user message, the model steps that answer it). A step with no tool call ends the agent's
    turn, so one in mid-segment has its text carried into the next step's reply."""
    out: list[tuple[Step, list[Step]]] = []
    for step in session.steps:
        if step.is_user:
            out.append((step, []))
        else:
            out[-1][1].append(step)
    merged: list[tuple[Step, list[Step]]] = []
    for user, steps in out:
        keep: list[Step] = []
        carry = ""
        for i, step in enumerate(steps):
            calls = _calls(step)
            if not calls and i < len(steps) - 1:
                carry += _text(step) + "\n\n"
                continue
            if carry:
                reply = Message("assistant", (TextBlock(carry + _text(step)), *calls))
                step = Step([reply, *step.messages[1:]], step.facts, step.next_step)
                carry = ""
            keep.append(step)
        merged.append((user, keep))
    return merged


def _text(step: Step) -> str:
    return "".join(b.text for b in step.messages[0].content if isinstance(b, TextBlock))


def _calls(step: Step) -> list[ToolUse]:
    return [b for b in step.messages[0].content if isinstance(b, ToolUse)]


def _outputs(step: Step) -> dict[str, tuple[str, bool]]:
    if len(step.messages) < 2:
        return {}
    return {r.tool_use_id: (r.content if isinstance(r.content, str) else "", r.is_error)
            for r in step.messages[1].content if hasattr(r, "tool_use_id")}  # fmt: skip


def judge_recall(pending: Sequence[tuple[Fact, str]], body: dict[str, Any], point: int) -> list[RecallCheck]:
    """The recall calls made at `point`, judged from the tool results the agent sent back in `body`."""
    results = tool_results(body)
    return [RecallCheck(point, i, f.asked(point // PROBE_EVERY), f.text, results.get(i)) for f, i in pending]


# -- the fake model's side --------------------------------------------------------------------


class Player:
    """The fake model's side: the session's steps in order, their tool calls made real in `project`,
    summary requests answered by a stand-in, and the probes scored as each request arrives."""

    def __init__(
        self,
        project: Path,
        session: Session,
        run: E2ERun,
        summarizer: str,
        probe_recall: bool,
        summary_seconds: float = 0.0,
    ) -> None:
        self.project = project
        self.summary_seconds = summary_seconds
        self.all_facts = session.facts
        self.run = run
        self.summarizer = summarizer
        self.probe_recall = probe_recall
        self.queue: list[Step] = []
        self.played = 0  # session steps played so far: the next main request is number played + 1
        # What the requests should carry: what was said before the step about to be played.
        self.facts: list[Fact] = []
        self.paths: list[str] = []
        self.user = ""
        self.next: str | None = None
        self.pending: list[tuple[Fact, str]] = []  # recall calls made, waiting for their results
        self.pending_point = 0

    def begin(self, user: Step, steps: list[Step]) -> None:
        """A new user message, and the steps that answer it."""
        self.user, self.next = _text(user), None  # a new request supersedes the plan
        self.facts += list(user.facts)
        self.queue = list(steps)

    def respond(self, request: RecordedRequest) -> Reply:
        body = request.body
        if is_summary_request(body):
            time.sleep(self.summary_seconds)  # (a model takes a while to write a record)
            return Reply(self._record(body))
        if self.pending:
            checks = judge_recall(self.pending, body, self.pending_point)
            self.run.recalls += checks
            self.run.probes["recall"] += [c.passed for c in checks]
            self.pending = []
            return self._play()
        if not self.queue:
            return Reply("Done with this request.")
        point = self.played + 1
        if point % PROBE_EVERY == 0:
            missing = self._probe(point, request_text(body))
            if missing:
                calls = [
                    ToolCallSpec(
                        RECALL_TOOL,
                        {"query": f.asked(point // PROBE_EVERY)},
                        id=f"toolu_recall_{point:04d}_{i}",
                    )
                    for i, f in enumerate(missing)
                ]
                self.pending = [(f, str(c.id)) for f, c in zip(missing, calls, strict=True)]
                self.pending_point = point
                self.run.recall_calls += len(calls)
                return Reply(tool_calls=calls)
        return self._play()

    def _probe(self, point: int, text: str) -> list[Fact]:
        """Score the probes on this request; the recall facts it does not hold, to be recalled."""
        self.run.probe_points.append(point)
        missing: list[Fact] = []
        for fact in self.facts:
            if fact.kind == "decision":
                self.run.probes["decision"].append(fact.text in text)
            elif fact.text in text:
                self.run.probes["recall"].append(True)
            elif self.probe_recall:
                missing.append(fact)
            else:
                self.run.probes["recall"].append(False)
        if self.paths:
            self.run.probes["artifact"].append(all(p in text for p in self.paths))
        self.run.probes["continuation"].append(self.user in text and (not self.next or self.next in text))
        return missing

    def _play(self) -> Reply:
        if not self.queue:
            return Reply("Done with this request.")
        step = self.queue.pop(0)
        self.played += 1
        outputs = _outputs(step)
        calls = [self._materialize(use, *outputs.get(use.id, ("", False))) for use in _calls(step)]
        # What this step says is known to every later request.
        self.facts += list(step.facts)
        for use in _calls(step):
            path = use.input.get("path")
            if use.name in ("read_file", "edit_file") and str(path) not in self.paths:
                self.paths.append(str(path))
        self.next = step.next_step or self.next
        return Reply(_text(step), tool_calls=calls)

    def _record(self, body: dict[str, Any]) -> str:
        entries = request_entries(body)
        cap = int(body.get("max_tokens") or 0) // THINKING_ROOM  # the product asks for twice its cap
        if self.summarizer == "faithful":
            return faithful_record(entries, self.all_facts, _count, cap)
        return lossy_record(entries, _count, cap)

    def _materialize(self, use: ToolUse, output: str, failed: bool) -> ToolCallSpec:
        args = dict(use.input)
        if use.name == "read_file":
            self._write(str(args["path"]), output)
        elif use.name == "bash":
            command = str(args["command"])
            if _SIMPLE_COMMAND.match(command):
                # Run as written: a stand-in program of that name prints the recorded output.
                words = command.split()
                key = re.sub(r"[^A-Za-z0-9._-]", "_", " ".join(words))
                self._write(f".bench/out/{key}.txt", output)
                self._write(f".bench/out/{key}.rc", "1" if failed else "0")
                shim = self.project / ".bench" / "bin" / words[0]
                if not shim.exists():
                    self._write(f".bench/bin/{words[0]}", _SHIM)
                    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
            else:
                self._write(f".bench/{use.id}.txt", output)
                args = {"command": f"cat .bench/{use.id}.txt" + ("; exit 1" if failed else "")}
        elif use.name == "edit_file":
            path = self.project / str(args["path"])
            old = str(args["old_string"])
            text = path.read_text() if path.exists() else ""
            if old not in text:
                marker = old if "RETRY_TIMEOUT" in old else f"[{old}]"
                self._write(str(args["path"]), text + f"\n# {marker}\n")
                if marker != old:
                    args = {**args, "old_string": marker, "new_string": f"[{args['new_string']}]"}
        return ToolCallSpec(use.name, args, id=use.id)

    def _write(self, rel: str, text: str) -> None:
        path = self.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# -- the run ------------------------------------------------------------------------------------


def run_e2e(
    shape: str,
    window: int,
    seed: int = 1,
    summarizer: str = "lossy",
    *,
    session: Session | None = None,
    probe_recall: bool = True,
    summary_seconds: float = 0.0,
) -> E2ERun:
    """`make_session(shape, seed)` (or `session`) through `agent -p` with a `window`-token context,
    summary requests answered by the `summarizer` stand-in. `probe_recall=False` scores a recall
    fact missing from a probed request as failed without asking for a recall (for comparison).
    `summary_seconds`: how long the fake takes to answer a summary request (the figures do not
    depend on it: see `_LAUNCH`)."""
    if summarizer not in STAND_INS:
        raise ValueError(f"summarizer must be one of {STAND_INS}, not {summarizer!r}")
    session = session or make_session(shape, seed=seed)
    run = E2ERun(shape, window, summarizer, seed)
    info = lookup(MODEL)
    assert info is not None
    tmp = _fixed_place()
    try:
        project, home = tmp / "proj", tmp / "home"
        project.mkdir()
        home.mkdir()
        (project / ".gitignore").write_text(".bench/\n.transcripts/\n")
        (project / ".bench" / "bin").mkdir(parents=True)
        player = Player(project, session, run, summarizer, probe_recall, summary_seconds)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        with FakeModelServer(context_window=window) as server:
            server.responder = player.respond
            env.update(
                HOME=str(home),
                XDG_CONFIG_HOME=str(home / ".config"),
                XDG_STATE_HOME=str(home / ".state"),
                ANTHROPIC_API_KEY="sk-ant-bench",
                ANTHROPIC_BASE_URL=server.anthropic_base_url,
                PATH=f"{project / '.bench' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            )
            for n, (user, steps) in enumerate(segments(session)):
                player.begin(user, steps)
                agent = [sys.executable, "-c", _LAUNCH, f"{seed}-{n}"]  # `python -m agent_cli`, ids drawn
                # The sandbox off: what is measured is the context engine; under it, two runs of the
                # same seed differed (6 and 12 summary calls), a cause not yet found.
                cmd = [*agent, "-p", _text(user), "--yes", "--sandbox", "off", "--output-format",
                       "stream-json", "--model", MODEL, "--context-window", str(window)]  # fmt: skip
                if n:
                    cmd.append("--continue")
                proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)
                run.processes += 1
                if proc.returncode != 0:
                    run.failed.append(f"segment {n}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
                _events(run, proc.stdout, info)
            run.recorded = server.requests
        run.main_requests = player.played
        _tally(run, run.recorded)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return run


def _fixed_place() -> Path:
    """A new folder at the same place every run: /tmp/agent-bench-e2e-N, the first N free."""
    if not PROJECT_PARENT.is_dir():
        return Path(tempfile.mkdtemp(prefix="agent-bench-e2e-"))
    for n in range(1000):
        place = PROJECT_PARENT / f"agent-bench-e2e-{n}"
        try:
            place.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return place
    return Path(tempfile.mkdtemp(prefix="agent-bench-e2e-", dir=PROJECT_PARENT))


def _events(run: E2ERun, stdout: str, info: Any) -> None:
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        usage = None
        if event.get("type") == "usage":
            usage = Usage.from_json(event["usage"])
        elif event.get("type") == "compact":
            run.compactions[event["layer"]] = run.compactions.get(event["layer"], 0) + 1
            run.digests += bool(event.get("degraded")) and not event.get("stand_in")
            if event.get("usage"):
                usage = Usage.from_json(event["usage"])
        if usage is not None:
            run.input_tokens += usage.input_tokens
            run.cache_read += usage.cache_read_tokens
            run.cache_write += usage.cache_write_tokens
            run.output_tokens += usage.output_tokens
            run.dollars += cost(info, usage)


def _tally(run: E2ERun, requests: list[RecordedRequest]) -> None:
    """The fake's own counts: every request the agent made, and their sizes."""
    for q in requests:
        if q.api == "models":
            continue
        run.requests += 1
        run.largest = max(run.largest, q.input_tokens)
        run.over_window += q.input_tokens > run.window
        run.summary_calls += is_summary_request(q.body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="long")
    parser.add_argument("--window", type=int, nargs="*", default=[200_000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--summarizer", choices=STAND_INS, nargs="*", default=list(STAND_INS))
    args = parser.parse_args()
    for window in args.window:
        for summarizer in args.summarizer:
            r = run_e2e(args.shape, window, args.seed, summarizer)
            print(json.dumps(r.figures(), default=str))
            print({p: r.share(p) for p in PROBES}, f"probe points: {len(r.probe_points)}")


if __name__ == "__main__":
    main()

"""The outside recall probe: facts planted in ordinary work, asked for later in the user's words.

    python benchmarks/recall_outside.py [--set development|sealed] [--window 32000] [--show]

Issue 37 item 6, from outside the process: `agent -p` at a small window (32k tokens) against the
in-repo fake model server, in a temporary project. A fact set (recall_outside_facts.py, the
development set; recall_outside_sealed.py, a second project sealed until the ranking was tuned)
is a few work runs, each a user message (`--continue` after the first) and the tool calls the fake
model makes for it: files read, commands run (a stand-in program on PATH prints the command's
recorded output, so the transcript names the command as typed), among many look-alike outputs of
the same project. Eight facts sit in that work (a port, a config path, an error line, a version, a
person's decision said in a user message, a timeout, a function name, a flag); the work runs long
enough for the context engine to clear and summarize them away (the fake answers a summary request
with a record that names none of them).

Then one `--continue` run a question: the user asks about each fact, two in the words the fact
was planted in and six in other words. The fake model calls `recall` with the question as typed
(its words, never the answer) and scores the tool result the agent sends back:
    answered  the fact's answer is in the recall result
    first     and in its first passage
    visible   the answer was already in the request that called recall (the premise is broken:
              the fact was not compacted away)
    echoed    the first passage is a user message holding the question itself

The same set gives the same figures: the fake is deterministic and so is the ranking.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_e2e_wire import request_text, tool_results

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request

__all__ = ["MODEL", "WINDOW", "Outcome", "Question", "Run", "Step", "probe", "report"]

MODEL = "claude-sonnet-4-5"
WINDOW = 32_000
SETS = {"development": "recall_outside_facts", "sealed": "recall_outside_sealed"}
RECORD = (
    "## Record of earlier work\nWorked through the project's files, commands and test runs as the "
    "user asked; the details are in the session's transcript, which recall searches."
)
_SHIM = """#!/bin/sh
# The recorded output of this command line, written by the probe's fake model.
key=$(printf '%s' "$(basename "$0") $*" | tr -c 'A-Za-z0-9._-' '_')
cat "$(dirname "$0")/../out/$key.txt"
"""


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of the work: `read_file` of `arg` (a path) or `bash` of `arg` (a command line),
    and what it shows (the file's text, the command's output)."""

    tool: str
    arg: str
    output: str


@dataclass(frozen=True, slots=True)
class Run:
    """One `agent -p` of the work: the user's message and the tool calls that answer it."""

    user: str
    steps: tuple[Step, ...]


def draw(
    rng: random.Random, makers: Sequence[Callable[[], Step]], counts: tuple[int, ...]
) -> list[list[Step]]:
    """`counts` look-alikes for each run from `makers`, none a path or a command another one has."""
    out: list[Step] = []
    seen: set[str] = set()
    for _ in range(100_000):
        if len(out) == sum(counts):
            break
        step = rng.choice(makers)()
        if step.arg not in seen:
            seen.add(step.arg)
            out.append(step)
    else:
        raise ValueError(f"only {len(out)} look-alikes of {sum(counts)} found")
    return [out[sum(counts[:n]) : sum(counts[: n + 1])] for n in range(len(counts))]


def mixed(facts: list[Step], looks: list[Step]) -> tuple[Step, ...]:
    """The facts spread evenly among the look-alikes, in order."""
    out = list(looks)
    for n, fact in enumerate(facts):
        out.insert(1 + n * (len(looks) // len(facts) + 1), fact)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Question:
    """A fact asked for: the question as the user types it, the answer's verbatim text, and
    whether the question is in the words the fact was planted in ("planted") or in others ("other")."""

    text: str
    answer: str
    worded: str
    fact: str  # what kind of fact: port, config path, error line, ...


@dataclass(slots=True)
class Outcome:
    question: Question
    result: str = ""
    answered: bool = False
    first: bool = False
    visible: bool = False
    echoed: bool = False


@dataclass(slots=True)
class _Player:
    """The fake model: plays each run's steps, answers summary requests with `RECORD`, and in a
    question's run calls recall with the question, then scores the result it is sent."""

    project: Path
    steps: list[Step] = field(default_factory=list)
    question: Question | None = None
    outcome: Outcome | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    summaries: int = 0
    calls: int = 0

    def begin(self, run: Run | None = None, question: Question | None = None) -> None:
        self.steps = list(run.steps) if run else []
        self.question, self.outcome = question, None

    def respond(self, request: RecordedRequest) -> Reply:
        body = request.body
        if is_summary_request(body):
            self.summaries += 1
            return Reply(RECORD)
        if self.question is not None:
            return self._ask(body, self.question)
        if not self.steps:
            return Reply("Done for now.")
        step = self.steps.pop(0)
        self.calls += 1
        call_id = f"toolu_w{self.calls:03d}"
        if step.tool == "bash":
            self._shim(step.arg, step.output)
            call = ToolCallSpec("bash", {"command": step.arg}, id=call_id)
        else:
            self._write(step.arg, step.output)
            call = ToolCallSpec("read_file", {"path": step.arg}, id=call_id)
        return Reply(f"{_notes(self.calls)}\nNext: {step.arg}.", tool_calls=[call])

    def _ask(self, body: dict[str, Any], question: Question) -> Reply:
        if self.outcome is None:
            call_id = f"toolu_recall_{len(self.outcomes):02d}"
            self.outcome = Outcome(question, visible=question.answer in request_text(body))
            self.outcomes.append(self.outcome)
            call = ToolCallSpec("recall", {"query": question.text}, id=call_id)
            return Reply("Let me look that up.", tool_calls=[call])
        result = tool_results(body).get(f"toolu_recall_{len(self.outcomes) - 1:02d}")
        if result is not None and not self.outcome.result:
            first = _first_passage(result)
            self.outcome.result = result
            self.outcome.answered = question.answer in result
            self.outcome.first = question.answer in first
            self.outcome.echoed = question.text in first
        return Reply("Answered from the transcript.")

    def _shim(self, command: str, output: str) -> None:
        words = command.split()
        key = re.sub(r"[^A-Za-z0-9._-]", "_", " ".join(words))
        self._write(f".probe/out/{key}.txt", output)
        shim = self.project / ".probe" / "bin" / words[0]
        if not shim.exists():
            self._write(f".probe/bin/{words[0]}", _SHIM)
            shim.chmod(shim.stat().st_mode | stat.S_IXUSR)

    def _write(self, rel: str, text: str) -> None:
        path = self.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _notes(n: int) -> str:
    """What the model says before each call: its running notes on the work (about 1,200
    characters, none of them a fact), which no layer but a summary removes, as a model's would."""
    return " ".join(
        f"Note {n}.{k}: the layout so far is consistent with the README; nothing here changes the plan, "
        "and the open question is still the one the user asked."
        for k in range(8)
    )


def _first_passage(result: str) -> str:
    """The first passage of a recall answer (each opens with its source, `[file · ref]`)."""
    return re.split(r"\n\n(?=\[\S+ · )", result)[0]


def fact_set(name: str) -> ModuleType:
    """The module of a fact set: RUNS (the work) and QUESTIONS."""
    return importlib.import_module(SETS[name])


def probe(
    facts: ModuleType, window: int = WINDOW, *, keep: Path | None = None
) -> tuple[list[Outcome], _Player]:
    """Play `facts` through `agent -p`, then ask each question in its own `--continue` run.
    `keep`: the project is made there and left for reading (else in a temporary folder)."""
    tmp = Path(tempfile.mkdtemp(prefix="agent-recall-outside-")) if keep is None else keep
    try:
        project, home = tmp / "proj", tmp / "home"
        project.mkdir(parents=True)
        home.mkdir()
        (project / ".gitignore").write_text(".probe/\n.transcripts/\n")
        (project / ".probe" / "bin").mkdir(parents=True)
        player = _Player(project)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        with FakeModelServer(context_window=window) as server:
            server.responder = player.respond
            env.update(
                HOME=str(home),
                XDG_CONFIG_HOME=str(home / ".config"),
                XDG_STATE_HOME=str(home / ".state"),
                NO_COLOR="1",
                ANTHROPIC_API_KEY="sk-ant-probe",
                ANTHROPIC_BASE_URL=server.anthropic_base_url,
                PATH=f"{project / '.probe' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            )
            for n, run in enumerate(facts.RUNS):
                player.begin(run)
                _agent(run.user, project, env, window, again=n > 0)
            # Each question from the same point: the project (its session) as the work left it.
            shutil.copytree(project, tmp / "after-work", symlinks=True)
            for question in facts.QUESTIONS:
                shutil.rmtree(project)
                shutil.copytree(tmp / "after-work", project, symlinks=True)
                player.begin(question=question)
                _agent(question.text, project, env, window, again=True)
        return player.outcomes, player
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


def _agent(user: str, project: Path, env: dict[str, str], window: int, *, again: bool) -> None:
    """One `agent -p` run of `user`'s message (`--continue`d when `again`)."""
    cmd = [sys.executable, "-m", "agent_cli", "-p", user, "--yes", "--sandbox", "off",
           "--output-format", "stream-json", "--model", MODEL, "--context-window", str(window)]  # fmt: skip
    if again:
        cmd.append("--continue")
    proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"agent exited {proc.returncode} on {user[:60]!r}: {proc.stderr.strip()[-500:]}")


def report(name: str, outcomes: list[Outcome], player: _Player, *, show: bool = False) -> list[str]:
    answered = sum(o.answered for o in outcomes)
    other = [o for o in outcomes if o.question.worded == "other"]
    lines = [
        f"{name}: {answered} of {len(outcomes)} answered (in other words: "
        f"{sum(o.answered for o in other)} of {len(other)}; first passage: "
        f"{sum(o.first for o in outcomes)}; visible before recall: {sum(o.visible for o in outcomes)}; "
        f"the question first: {sum(o.echoed for o in outcomes)}; summaries: {player.summaries})"
    ]
    if show:
        for o in outcomes:
            mark = ("answered, first passage" if o.first else "answered") if o.answered else "MISSED"
            seen = "; visible before recall" if o.visible else ""
            lines.append(f"- {mark} ({o.question.fact}, {o.question.worded} words{seen}): {o.question.text}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), default="development")
    parser.add_argument("--window", type=int, default=WINDOW)
    parser.add_argument("--show", action="store_true", help="name each question and whether it was answered")
    parser.add_argument("--keep", type=Path, help="make the project here and leave it")
    args = parser.parse_args()
    outcomes, player = probe(fact_set(args.set), args.window, keep=args.keep)
    print("\n".join(report(args.set, outcomes, player, show=args.show)))


if __name__ == "__main__":
    main()

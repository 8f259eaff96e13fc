"""The second mode: a generated session end to end, through `agent -p` against the in-repo fake over HTTP.

    python benchmarks/bench_e2e.py [--shape long] [--window 200000 ...]

The replay (bench_replay.py) drives the engine in-process; this drives the product. The session's
user messages become one `agent -p` each (`--continue` after the first, as a user would type them);
the fake model answers each request with the session's next step. Its tool calls run for real in a
temporary project: before a step's `read_file` the fake writes that file with the step's content,
a test run becomes `cat` of the step's output (exit 1 when it failed), an edit gets a unique
marker to replace, searches run over what is there. Summary requests (recognised by structure)
are answered with the replay's stand-in record, built from the request's own messages.

Counted from what the product reports in its stream-json events (usage per request, and each
summary call's usage on its compact event), priced at the model table's prices: billed tokens,
dollars, summary calls; from the fake's own counts (characters / 4): the largest request and
requests over the window. Probes, scored on every request whose history a layer rewrote (its
messages are no longer an extension of the previous request's): recall (each planted fact is in
the request, or the session's archive returns it), artifact (every file touched is named),
continuation (the last user message and the newest "Next:" are there), decision (verbatim).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_replay import PROBES  # noqa: E402
from bench_sessions import Fact, Session, Step, make_session  # noqa: E402

from agent_cli.core.messages import Message, TextBlock, ToolUse, Usage  # noqa: E402
from agent_cli.providers.models import cost, lookup  # noqa: E402
from agent_cli.store.archive import Archive  # noqa: E402
from tests.e2e import is_summary_request  # noqa: E402
from tests.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec  # noqa: E402

MODEL = "claude-sonnet-5-5"
RECORD_CHARS = 4_800  # the stand-in record: about 1,200 tokens, as in the replay


@dataclass(slots=True)
class E2ERun:
    shape: str
    window: int
    processes: int = 0
    failed: list[str] = field(default_factory=list)
    requests: int = 0
    summary_calls: int = 0
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0
    dollars: float = 0.0
    largest: int = 0
    over_window: int = 0
    compactions: dict[str, int] = field(default_factory=dict)
    probes: dict[str, list[bool]] = field(default_factory=lambda: {p: [] for p in PROBES})

    def share(self, probe: str) -> float | None:
        scores = self.probes[probe]
        return sum(scores) / len(scores) if scores else None


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


class Player:
    """The fake model's side: the session's steps in order, their tool calls made real in `project`."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.queue: list[Step] = []
        self.output_chars = 0

    def respond(self, request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            record = _stand_in_record(request.body)
            self.output_chars += len(record)
            return Reply(record)
        if not self.queue:
            return Reply("Done with this request.")
        step = self.queue.pop(0)
        outputs = _outputs(step)
        calls = [self._materialize(use, *outputs.get(use.id, ("", False))) for use in _calls(step)]
        self.output_chars += len(_text(step))
        return Reply(_text(step), tool_calls=calls)

    def _materialize(self, use: ToolUse, output: str, failed: bool) -> ToolCallSpec:
        args = dict(use.input)
        if use.name == "read_file":
            self._write(str(args["path"]), output)
        elif use.name == "bash":
            out = self.project / ".bench" / f"{use.id}.txt"
            self._write(str(out.relative_to(self.project)), output)
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


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in ("signature", "data") for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _stand_in_record(body: dict[str, Any]) -> str:
    """The replay's stand-in: the newest messages' first lines, up to the record's size, in order."""
    lines: list[str] = []
    used = 0
    for message in reversed(body.get("messages", [])[:-1]):  # the last is the request to summarize
        line = f"- {message['role']}: {' '.join(' '.join(_strings(message['content'])).split())[:160]}"
        if used + len(line) > RECORD_CHARS:
            break
        lines.append(line)
        used += len(line)
    return "## Work state\n" + "\n".join(reversed(lines))


def _messages_key(body: dict[str, Any]) -> list[str]:
    return [json.dumps(m, sort_keys=True) for m in body.get("messages", [])]


def _probe(run: E2ERun, text: str, archive: Archive | None, facts: list[Fact], state: dict[str, Any]) -> None:
    for fact in facts:
        if fact.kind == "recall":
            found = fact.text in text or (
                archive is not None and fact.text in archive.search(fact.query, 12_000)
            )
            run.probes["recall"].append(found)
        else:
            run.probes["decision"].append(fact.text in text)
    if state["paths"]:
        run.probes["artifact"].append(all(p in text for p in state["paths"]))
    run.probes["continuation"].append(state["user"] in text and (not state["next"] or state["next"] in text))


def run_e2e(shape: str, window: int, seed: int = 1) -> E2ERun:
    session = make_session(shape, seed=seed)
    run = E2ERun(shape, window)
    info = lookup(MODEL)
    assert info is not None
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp) / "proj", Path(tmp) / "home"
        project.mkdir()
        home.mkdir()
        (project / ".gitignore").write_text(".bench/\n.transcripts/\n")
        player = Player(project)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        with FakeModelServer(context_window=window) as server:
            server.responder = player.respond
            env.update(
                HOME=str(home),
                XDG_CONFIG_HOME=str(home / ".config"),
                XDG_STATE_HOME=str(home / ".state"),
                ANTHROPIC_API_KEY="sk-ant-bench",
                ANTHROPIC_BASE_URL=server.anthropic_base_url,
            )
            # What each main request should carry, in the order the requests are made: the i-th
            # request of a segment answers with step i, so it holds steps 0..i-1 and their results.
            expected: list[tuple[list[Fact], dict[str, Any]]] = []
            facts: list[Fact] = []
            state: dict[str, Any] = {"paths": [], "user": "", "next": None}
            for n, (user, steps) in enumerate(segments(session)):
                state["user"], state["next"] = _text(user), None  # a new request supersedes the plan
                facts += list(user.facts)
                snapshots = [(list(facts), dict(state, paths=list(state["paths"])))]
                for step in steps:
                    facts += list(step.facts)
                    for use in _calls(step):
                        if (
                            use.name in ("read_file", "edit_file")
                            and str(use.input["path"]) not in state["paths"]
                        ):
                            state["paths"].append(str(use.input["path"]))
                    state["next"] = step.next_step or state["next"]
                    snapshots.append((list(facts), dict(state, paths=list(state["paths"]))))
                player.queue = list(steps)
                start = len(server.requests)
                cmd = [sys.executable, "-m", "agent_cli", "-p", _text(user), "--yes", "--output-format",
                       "stream-json", "--model", MODEL, "--context-window", str(window)]  # fmt: skip
                if n:
                    cmd.append("--continue")
                proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)
                run.processes += 1
                if proc.returncode != 0:
                    run.failed.append(f"segment {n}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
                _events(run, proc.stdout, info)
                main = [q for q in server.requests[start:] if not is_summary_request(q.body)]
                expected += [snapshots[min(i, len(snapshots) - 1)] for i in range(len(main))]
            requests = list(server.requests)
        sessions = sorted((project / ".transcripts").glob("*/"))
        archive = Archive(sessions[-1]) if sessions else None
        _score(run, requests, expected, archive)
    return run


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
            if event.get("usage"):
                usage = Usage.from_json(event["usage"])
        if usage is not None:
            run.input_tokens += usage.input_tokens
            run.cache_read += usage.cache_read_tokens
            run.cache_write += usage.cache_write_tokens
            run.output_tokens += usage.output_tokens
            run.dollars += cost(info, usage)


def _score(
    run: E2ERun,
    requests: list[RecordedRequest],
    expected: list[tuple[list[Fact], dict[str, Any]]],
    archive: Archive | None,
) -> None:
    previous: list[str] = []
    n = 0
    for q in requests:
        if q.api == "models":
            continue
        run.requests += 1
        run.largest = max(run.largest, q.input_tokens)
        run.over_window += q.input_tokens > run.window
        if is_summary_request(q.body):
            run.summary_calls += 1
            continue
        key = _messages_key(q.body)
        rewritten = bool(previous) and key[: len(previous)] != previous
        if rewritten and n < len(expected):
            text = "\n".join(_strings(q.body))
            _probe(run, text, archive, *expected[n])
        previous = key
        n += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="long")
    parser.add_argument("--window", type=int, nargs="*", default=[200_000])
    args = parser.parse_args()
    for window in args.window:
        r = run_e2e(args.shape, window)
        print(json.dumps({k: getattr(r, k) for k in r.__slots__ if k != "probes"}, default=str))
        print({p: r.share(p) for p in PROBES})


if __name__ == "__main__":
    main()

"""A long headless run with a goal, a todo list, a background command and three sub-agents, against
the fake model server, beside the same work done without sub-agents; on the Anthropic Messages wire
and on OpenAI's Responses wire.

    python benchmarks/long_run.py [--files 40] [--lines 120] [--window 32000] [--wire both]

A temp project holds FILES files (`src/part_NN.py`), each with a planted fact (`FACT NN: ...`).
`agent -p --goal 'Survey ... --check "grep -q SURVEY-COMPLETE report.md"'` runs at a WINDOW-token
window. The fake model writes a todo list, starts a background command, hands the files to three
`task` sub-agents (a third each; a child reads one file a reply, with notes), reads the command's
output, ends its turn (the check fails: no report yet), writes report.md and ends again (the check
passes). A child's report names its files and leaves the facts out. The second run does the same
work without sub-agents: the parent reads every file itself.

Checked and printed for each run: every todo item's text and the goal in the last request; the
largest request against the window; with sub-agents, that the parent's requests hold each child's
report and none of the facts only the children read (their tool output); then a recall probe (a
`--continue` run whose model calls `recall` for one of those facts) that answers from a child's
transcript. Figures: input tokens summed over all requests (the children's included, as the fake
counts them, characters / 4); the input's cost in USD under the provider's cache rule
(agent_cli.billing on each recorded wire body, 20 s apart: Anthropic's breakpoints, OpenAI's
automatic prefix cache); the summary calls, and the compactions each layer made (the parent's
stream events and the children's logs: a record counts twice when a digest stood in for it first).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.agent.subagent import CHILD_NOTE  # noqa: E402
from agent_cli.billing import AnthropicCache, AutomaticCache, Bill  # noqa: E402
from agent_cli.billing.wire_units import anthropic_request, responses_request  # noqa: E402
from agent_cli.providers.model_info import cache_terms  # noqa: E402
from agent_cli.providers.model_names import keeps_prior_thinking  # noqa: E402
from agent_cli.providers.models import lookup  # noqa: E402
from agent_cli.providers.registry import ANTHROPIC, OPENAI  # noqa: E402
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec  # noqa: E402
from agent_cli.testing.fakeserver.server import chars_over_four  # noqa: E402
from agent_cli.testing.summary_shape import is_summary_request  # noqa: E402
from benchmarks.long_session import WORDS  # noqa: E402

# What a user runs today on each wire (Messages, Responses): the providers' default models.
MODELS = {"anthropic": ANTHROPIC.default_model, "openai": OPENAI.default_model}
CHILDREN = 3
GOAL_TEXT = "Survey every file under src/ and write report.md"
CHECK = "grep -q SURVEY-COMPLETE report.md"
TODOS = [
    "Start the file watcher in the background",
    "Survey src/ (three sub-agents, a third of the files each)",
    "Read the watcher's output",
    "Write report.md with SURVEY-COMPLETE",
]
BACKGROUND = "for i in 1 2 3; do echo watch tick $i; sleep 0.2; done; echo WATCH-DONE"
CHILD_TAG = "CHILD-TASK-"
REPORT_TAG = "REPORT-OF-CHILD-"
SELF_TAG = "I-AM-CHILD-"  # in a child's own summary record only


def fact(i: int) -> str:
    return f"FACT {i:02d}: the secret of part {i:02d} is {WORDS[i % len(WORDS)].upper()}-{7000 + 37 * i}"


def secret(i: int) -> str:
    return f"{WORDS[i % len(WORDS)].upper()}-{7000 + 37 * i}"


def make_project(project: Path, files: int, lines: int) -> list[str]:
    rng = random.Random(5)
    names = []
    for i in range(1, files + 1):
        body = [f'"""Part {i}: generated source for the long-run benchmark."""', ""]
        for n in range(lines):
            words = " ".join(rng.choice(WORDS) for _ in range(5))
            body.append(f"def {rng.choice(WORDS)}_{i}_{n}(value):  # {words}")
            if n == lines // 2:
                body.append(f"    # {fact(i)}")
        name = f"src/part_{i:02d}.py"
        (project / "src").mkdir(parents=True, exist_ok=True)
        (project / name).write_text("\n".join(body) + "\n")
        names.append(name)
    return names


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def items(body: dict[str, Any]) -> list[Any]:
    """The conversation of a request: Messages' `messages`, Responses' `input`."""
    found = body.get("messages", body.get("input"))
    return found if isinstance(found, list) else []


def carries(request: RecordedRequest, text: str) -> bool:
    body = request.body
    return any(text in s for s in strings([body.get("system"), body.get("instructions"), items(body)]))


def user_texts(request: RecordedRequest) -> str:
    """The text the user side of the request holds (not tool calls, not tool results)."""
    found = []
    for message in items(request.body):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            found.append(content)
            continue
        found += [b.get("text", "") for b in content if b.get("type") in ("text", "input_text")]
    return "\n".join(found)


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The tool results of a request, oldest first, as text (either wire)."""
    found = []
    for item in items(body):
        if item.get("type") == "function_call_output":
            found.append(" ".join(strings(item.get("output"))))
        for block in item.get("content") if isinstance(item.get("content"), list) else []:
            if block.get("type") == "tool_result":
                found.append(" ".join(strings(block.get("content"))))
    return found


def owner(request: RecordedRequest) -> int:
    """0 for the parent, k for child k: a child's user text holds the note every child is given
    after its prompt (which names it), or its own summary's record (which names it too). The
    parent's holds neither, though its task calls name the children."""
    text = user_texts(request)
    match = re.search(SELF_TAG + r"(\d+)", text)
    if match is None and CHILD_NOTE[:40] in text:
        match = re.search(CHILD_TAG + r"(\d+)", text)
    return int(match.group(1)) if match else 0


def notes(who: str, n: int) -> str:
    rng = random.Random(hash((who, n)) & 0xFFFF)
    return " ".join(f"In step {n} the {rng.choice(WORDS)} meets the {rng.choice(WORDS)}." for _ in range(25))


@dataclass
class Script:
    """The fake model of one run: the parent's steps and each child's, counted per agent."""

    files: list[str]
    subagents: bool
    leak: bool = False  # a child's report carries its facts (the test's check must then fail)
    steps: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def shares(self) -> list[list[str]]:
        size = -(-len(self.files) // CHILDREN)
        return [self.files[k * size : (k + 1) * size] for k in range(CHILDREN)]

    def __call__(self, request: RecordedRequest) -> Reply:
        who = owner(request)
        if is_summary_request(request.body):
            task = f"{SELF_TAG}{who}: survey my share of src/" if who else GOAL_TEXT
            return Reply(f"## Goal\n{task}\n## Done\nsome files read\n## Next\nthe rest of the files")
        with self.lock:
            n = self.steps.get(who, 0)
            self.steps[who] = n + 1
        return self.child(who, n) if who else self.parent(n)

    def child(self, k: int, n: int) -> Reply:
        share = self.shares()[k - 1]
        if n < len(share):
            return Reply(notes(f"c{k}", n), tool_calls=[ToolCallSpec("read_file", {"path": share[n]})])
        facts = "" if not self.leak else " " + " ".join(fact(int(f[-5:-3])) for f in share)
        return Reply(f"{REPORT_TAG}{k}: read {', '.join(share)}; each defines handlers; no bug found.{facts}")

    def parent(self, n: int) -> Reply:
        todos = [{"content": t, "status": "pending"} for t in TODOS]
        reads = [] if self.subagents else self.files
        if n == 0:
            return Reply("A plan first.", tool_calls=[ToolCallSpec("todo_write", {"todos": todos})])
        if n == 1:
            call = ToolCallSpec("bash", {"command": BACKGROUND, "run_in_background": True})
            return Reply("Starting the watcher.", tool_calls=[call])
        if n == 2 and self.subagents:
            calls = [
                ToolCallSpec("task", {"description": f"survey part {k}", "prompt": self.prompt(k)})
                for k in range(1, CHILDREN + 1)
            ]
            return Reply("Handing the files out.", tool_calls=calls)
        if 2 <= n < 2 + len(reads):
            return Reply(notes("p", n), tool_calls=[ToolCallSpec("read_file", {"path": reads[n - 2]})])
        rest = n - (2 + len(reads) + (1 if self.subagents else 0))
        done = [{"content": t, "status": "completed" if i < 2 else "pending"} for i, t in enumerate(TODOS)]
        if rest == 0:
            return Reply(
                "Checking the watcher.", tool_calls=[ToolCallSpec("bash_output", {"shell_id": "bg1"})]
            )
        if rest == 1:
            return Reply("Updating the list.", tool_calls=[ToolCallSpec("todo_write", {"todos": done})])
        if rest == 2:
            return Reply("The survey is done.")  # the check fails: no report yet
        if rest == 3:
            text = "# Survey\n\nSURVEY-COMPLETE\n"
            return Reply(
                "Writing the report.",
                tool_calls=[ToolCallSpec("write_file", {"path": "report.md", "content": text})],
            )
        if rest == 4:
            final = [{"content": t, "status": "completed"} for t in TODOS]
            return Reply("Closing the list.", tool_calls=[ToolCallSpec("todo_write", {"todos": final})])
        return Reply("Report written: report.md.")

    def prompt(self, k: int) -> str:
        share = self.shares()[k - 1]
        return f"{CHILD_TAG}{k}: read each of {', '.join(share)} and report what they define."


def agent_env(home: Path, server: FakeModelServer, wire: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        NO_COLOR="1",
    )
    if wire == "anthropic":
        env.update(ANTHROPIC_API_KEY="sk-ant-bench", ANTHROPIC_BASE_URL=server.anthropic_base_url)
    else:
        env.update(OPENAI_API_KEY="sk-proj-bench", OPENAI_BASE_URL=server.openai_base_url)
    return env


def agent(
    args: list[str], project: Path, env: dict[str, str], window: int, wire: str
) -> subprocess.CompletedProcess[str]:
    common = ["--provider", wire, "--model", MODELS[wire], "--yes", "--output-format", "stream-json"]
    common += ["--wire", "responses"] if wire == "openai" else []  # not Chat, which a base URL would pick
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", *args, *common, "--context-window", str(window)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        stdin=subprocess.DEVNULL,
    )


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]


def child_compactions(project: Path) -> list[str]:
    """The layers the children's logs record (each child's session.jsonl, its compact events)."""
    layers = []
    for log in project.glob(".transcripts/*/tasks/*/session.jsonl"):
        for line in log.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            event = entry.get("event") if isinstance(entry, dict) else None
            if entry.get("kind") == "event" and isinstance(event, dict) and event.get("type") == "compact":
                layers.append(str(event.get("layer")))
    return layers


def recall_probe(
    project: Path, env: dict[str, str], server: FakeModelServer, window: int, wire: str, target: int
) -> dict[str, Any]:
    """`--continue`: the model recalls the secret of part `target`, then answers with what it got."""
    query = f"secret of part {target:02d}"

    asked = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        got = [s for s in tool_outputs(request.body) if f"FACT {target:02d}" in s]
        asked["n"] += 1
        if asked["n"] > 1:  # the recall's result is in
            found = re.search(rf"FACT {target:02d}: [^\n]*", got[-1]) if got else None
            return Reply(f"Recalled: {found.group(0) if found else 'nothing'}")
        return Reply("Looking it up.", tool_calls=[ToolCallSpec("recall", {"query": query})])

    server.responder = answer
    before = len(server.requests)
    done = agent(["-p", f"What is the {query}?", "--continue"], project, env, window, wire)
    asked = server.requests[before:]
    results = tool_outputs(asked[-1].body) if asked else []
    events = events_of(done.stdout)
    return {
        "exit": done.returncode,
        "recalled": results[-1] if results else "",
        "answer": events[-1].get("result", "") if events else "",
        "from_child": bool(results) and "[tasks/" in results[-1] and secret(target) in results[-1],
    }


def run(
    files: int,
    lines: int,
    window: int,
    subagents: bool,
    *,
    wire: str = "anthropic",
    leak: bool = False,
    probe: bool = True,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp) / "proj", Path(tmp) / "home"
        project.mkdir()
        home.mkdir()
        names = make_project(project, files, lines)
        script = Script(names, subagents, leak)
        with FakeModelServer(context_window=window) as server:
            server.responder = script
            env = agent_env(home, server, wire)
            goal = f"{GOAL_TEXT} --check '{CHECK}'"
            done = agent(["-p", "--goal", goal], project, env, window, wire)
            requests = list(server.requests)
            events = events_of(done.stdout)
            result = summarize(script, requests, events, wire)
            result.update(exit=done.returncode, stderr=done.stderr[-1500:])
            result["compactions"] += child_compactions(project)
            result["report"] = (project / "report.md").read_text() if (project / "report.md").exists() else ""
            if probe and subagents:
                result["probe"] = recall_probe(project, env, server, window, wire, target=2)
    return result


def summarize(
    script: Script, requests: list[RecordedRequest], events: list[dict[str, Any]], wire: str
) -> dict[str, Any]:
    work = [r for r in requests if not is_summary_request(r.body)]
    parent = [r for r in work if owner(r) == 0]
    last = parent[-1] if parent else None
    facts = [fact(int(f[-5:-3])) for f in script.files]
    reports = [f"{REPORT_TAG}{k}" for k in range(1, CHILDREN + 1)]
    return {
        "requests": len(requests),
        "parent_requests": len(parent),
        "child_requests": len(work) - len(parent),
        "summary_calls": len(requests) - len(work),
        "compactions": [str(e["layer"]) for e in events if e.get("type") == "compact"],
        "goal_rounds": [str(e["status"]) for e in events if e.get("type") == "goal"],
        "finished": bool(events)
        and events[-1].get("type") == "result"
        and "Report written" in events[-1].get("result", ""),
        "todos_in_last": last is not None and all(carries(last, t) for t in TODOS),
        "goal_in_last": last is not None and carries(last, GOAL_TEXT) and carries(last, CHECK),
        "largest": max((r.input_tokens for r in requests), default=0),
        "parent_largest": max((r.input_tokens for r in parent), default=0),
        "background_read": any(carries(r, "watch tick 1") for r in parent),
        "reports_in_parent": all(any(carries(r, tag) for r in parent) for tag in reports),
        "facts_in_parent": sum(any(carries(r, f) for r in parent) for f in facts),
        "input_tokens": sum(r.input_tokens for r in requests),
        "billed": bill(requests, wire),
    }


def bill(requests: list[RecordedRequest], wire: str) -> Bill:
    """The input side of every request as the provider bills it (agent_cli.billing: Anthropic's
    breakpoints, OpenAI's automatic prefix cache), the fake's count (characters / 4), 20 s apart."""
    info = lookup(MODELS[wire])
    assert info is not None
    terms = cache_terms(info)
    total = Bill()
    if wire == "anthropic":
        marks = AnthropicCache(lambda _model: terms)
        sent = [r for r in requests if r.api == "anthropic"]
        for n, req in enumerate(sent):
            total += marks.bill(anthropic_request(req.body, chars_over_four, 20.0 * n, keeps_prior_thinking))
        return total
    automatic = AutomaticCache(lambda _model: terms)
    for n, req in enumerate(r for r in requests if r.api == "openai-responses"):
        total += automatic.bill(responses_request(req.body, chars_over_four, 20.0 * n))
    return total


def properties(r: dict[str, Any], window: int, subagents: bool) -> list[str]:
    """What failed of the measured properties (empty: all held)."""
    failed = []
    checks: list[tuple[str, Callable[[], bool]]] = [
        ("exit 0", lambda: r["exit"] == 0),
        ("finished", lambda: bool(r["finished"])),
        (
            "the check failed first, then passed",
            lambda: r["goal_rounds"][:1] == ["go_on"] and r["goal_rounds"][-1:] == ["met"],
        ),
        ("every todo item in the last request", lambda: bool(r["todos_in_last"])),
        ("the goal in the last request", lambda: bool(r["goal_in_last"])),
        ("the background command's output read", lambda: bool(r["background_read"])),
        ("no request over the window", lambda: r["largest"] <= window),
    ]
    if subagents:
        checks += [
            ("each child's report in the parent", lambda: bool(r["reports_in_parent"])),
            ("no child's tool output in the parent", lambda: r["facts_in_parent"] == 0),
        ]
        if "probe" in r:
            checks.append(
                ("the recall probe answers from a child's transcript", lambda: bool(r["probe"]["from_child"]))
            )
    for name, check in checks:
        if not check():
            failed.append(name)
    return failed


def layers(found: list[str]) -> str:
    return ", ".join(f"{k} {found.count(k)}" for k in sorted(set(found))) or "none"


def report(wire: str, ours: dict[str, Any], solo: dict[str, Any], files: int, window: int) -> None:
    name = {"anthropic": "Anthropic Messages", "openai": "OpenAI Responses"}[wire]
    print(
        f"long run: goal with a failing check, todo list, background command, {files} files, "
        f"{window:,}-token window, {name} wire ({MODELS[wire]})"
    )
    for label, r, sub in (("three sub-agents", ours, True), ("no sub-agents", solo, False)):
        billed: Bill = r["billed"]
        print(f"  {label}: exit {r['exit']}, finished {r['finished']}, goal rounds {r['goal_rounds']}")
        print(
            f"    requests {r['requests']} (parent {r['parent_requests']}, children {r['child_requests']}, "
            f"summary calls {r['summary_calls']}); compactions {layers(r['compactions'])}"
        )
        print(
            f"    input tokens {r['input_tokens']:,}; billed ${billed.usd:.4f} (uncached {billed.input:,}, "
            f"cache read {billed.read:,}, cache write {billed.write:,}); "
            f"largest request {r['largest']:,} of {window:,} (the parent's {r['parent_largest']:,})"
        )
        print(
            f"    todos in last request {r['todos_in_last']}, goal in last request {r['goal_in_last']}, "
            f"background output read {r['background_read']}"
        )
        if sub:
            print(
                f"    children's reports in the parent {r['reports_in_parent']}; "
                f"facts only children read, in parent requests: {r['facts_in_parent']} of {files}"
            )
            p = r.get("probe", {})
            print(
                f"    recall probe: exit {p.get('exit')}, from a child's transcript {p.get('from_child')}, "
                f"answer {p.get('answer', '')[:90]!r}"
            )
        else:
            print(f"    facts in parent requests: {r['facts_in_parent']} of {files}")
        failed = properties(r, window, sub)
        print(f"    properties: {'all held' if not failed else 'FAILED: ' + '; '.join(failed)}")
        if r["exit"]:
            print("    stderr:", r["stderr"])
    print(
        f"  sub-agents / none: input tokens {ours['input_tokens'] / max(solo['input_tokens'], 1):.2f}x, "
        f"billed (USD) {ours['billed'].usd / max(solo['billed'].usd, 1e-9):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--lines", type=int, default=120, help="functions per file (~1.7k tokens at 120)")
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--wire", choices=["anthropic", "openai", "both"], default="both")
    args = parser.parse_args()
    for wire in ["anthropic", "openai"] if args.wire == "both" else [args.wire]:
        ours = run(args.files, args.lines, args.window, subagents=True, wire=wire)
        solo = run(args.files, args.lines, args.window, subagents=False, wire=wire)
        report(wire, ours, solo, args.files, args.window)


if __name__ == "__main__":
    main()

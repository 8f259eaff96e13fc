"""A provider that lies or drips: usage, pause_turn, unknown blocks, reasoning ids, endless streams.

Issue "Found from outside", items 7 (streams), 8, 11 and the /compact message of 12.

Each case is a real `agent -p` process against agent_cli/testing/fakeserver in a directory of its own, judged
by `harness.judge` and a check of what the fake recorded (request sizes, ids sent back, summary
calls). The /compact cases run the model's compact tool, the same engine path as /compact
(`ContextEngine.compact`), since a headless run has no slash commands.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agent_cli.testing.fakeserver import (
    Drip,
    FakeModelServer,
    Fault,
    Pings,
    RecordedRequest,
    Reply,
    ScriptItem,
    ToolCallSpec,
)
from agent_cli.testing.summary_shape import is_summary_request
from tests.reliability.harness import QUICK_CONFIG, Case, Outcome, agent, env_for, judge, project_in

SUITE = "providers"
DONE = "PROVIDER-CASE-DONE"
# A whole-reply deadline of 4 s and a stall timeout of 3 s: a drip or a ping stream passes the second
# (3 s, not 1: a busy machine may hold the fake's next byte back for a second).
DEADLINE_CONFIG = "[provider]\nmax_retries = 3\nstall_timeout = 3.0\ntimeout = 4.0\n"
QUICK = QUICK_CONFIG
SUMMARY = "## Goal\nRead the notes.\n\n## Next steps\n- answer"
OPENAI_RESPONSES = ("--provider", "openai", "--wire", "responses")
OPENAI_CHAT = ("--provider", "openai", "--wire", "chat")


def _responder(script: Sequence[ScriptItem], summary: ScriptItem) -> Callable[[RecordedRequest], ScriptItem]:
    """Summary requests get `summary`; the others take `script` in order, then DONE."""
    left = list(script)

    def respond(recorded: RecordedRequest) -> ScriptItem:
        if is_summary_request(recorded.body):
            return summary
        return left.pop(0) if left else Reply(DONE)

    return respond


def _read(path: str) -> Reply:
    return Reply("Reading.", tool_calls=[ToolCallSpec("read_file", {"path": path})])


def _err(proc: Any) -> str:
    return str(proc.stderr.decode("utf-8", "replace"))


# ---- streams that never finish (item 7) --------------------------------------------------------


def _endless(item: ScriptItem, wire: Sequence[str], where: Path, *, streaming: bool = True) -> Outcome:
    """Every attempt drips or pings past the deadline: cut at provider.timeout, retried twice (as a
    stall), then one line."""
    project = project_in(where, DEADLINE_CONFIG + ("" if streaming else "streaming = false\n"))
    provider = "openai" if wire else "anthropic"
    with FakeModelServer() as server:
        server.queue(item, item, item)
        start = time.monotonic()
        proc = agent(["-p", "say hi", *wire], project, env_for(where, server, provider), timeout=90)
        took = time.monotonic() - start
        attempts = len(server.requests)
    err = _err(proc)
    check = ""
    if "provider.timeout" not in err:
        check = "no line naming provider.timeout"
    elif attempts != 3:
        check = f"{attempts} attempts (want 3: the first and two retries)"
    elif took > 45:  # three deadlines of 4 s and two waits; one attempt not cut would take 60 s or more
        check = f"{took:.0f} s"
    outcome = judge(proc, {"line"}, check=check)
    return Outcome(outcome.ok, f"{outcome.detail}; {attempts} attempts in {took:.1f} s", outcome.traceback)


# ---- usage that lies (item 8) ------------------------------------------------------------------

WINDOW = 24_000
LIE = {"input_tokens": 40, "cache_read_tokens": 0, "cache_write_tokens": 0}


def _under_reported(where: Path) -> Outcome:
    """Every reply reports 40 input tokens while the requests grow: compaction must still keep them
    under the window (the fake records its own estimate of each request)."""
    notes: dict[str, str | bytes] = {
        f"n{i}.txt": "\n".join(f"line {k} of note {i}: the parser reads a token" for k in range(220))
        for i in range(16)
    }
    project = project_in(where, QUICK, notes)
    script = [
        Reply("Reading.", tool_calls=[ToolCallSpec("read_file", {"path": f"n{i}.txt"})], usage=LIE)
        for i in range(16)
    ]
    script.append(Reply(DONE, usage=LIE))
    with FakeModelServer(responder=_responder(script, Reply(SUMMARY, usage=LIE))) as server:
        args = ["-p", "read every note", "--context-window", str(WINDOW)]
        proc = agent(args, project, env_for(where, server))
        sizes = [r.input_tokens for r in server.requests if not is_summary_request(r.body)]
    err = _err(proc)
    largest = max(sizes, default=0)
    warned = err.count("not believed")
    check = ""
    if largest >= WINDOW:
        check = f"a request of {largest:,} tokens for a window of {WINDOW:,}"
    elif warned != 1:
        check = f"the under-report said {warned} times (want once)"
    outcome = judge(proc, {"finished"}, check=check)
    detail = f"{outcome.detail}; {len(sizes)} requests, the largest {largest:,} tokens (window {WINDOW:,})"
    return Outcome(outcome.ok, detail, outcome.traceback)


def _odd_usage(value: object, where: Path) -> Outcome:
    """Usage figures that are not token counts, on every reply: no traceback, sane totals, one note."""
    project = project_in(where, QUICK, {"a.txt": "alpha\n"})
    odd = {"input_tokens": value, "output_tokens": value}
    with FakeModelServer() as server:
        server.queue(Reply("Reading.", tool_calls=[ToolCallSpec("read_file", {"path": "a.txt"})], usage=odd))
        server.default = Reply(DONE, usage=odd)
        proc = agent(["-p", "read a.txt", "--output-format", "json"], project, env_for(where, server))
    err = _err(proc)
    try:
        usage = json.loads(proc.stdout.decode().strip().splitlines()[-1]).get("usage") or {}
    except (ValueError, IndexError):
        usage = {}
    figures = [v for v in usage.values() if isinstance(v, int)]
    check = ""
    if not figures or any(not 0 <= v < 10**9 for v in figures):
        check = f"totals {usage}"
    elif err.count("not token counts") != 1:
        check = f"the odd figures said {err.count('not token counts')} times (want once)"
    outcome = judge(proc, {"finished"}, check=check)
    return Outcome(
        outcome.ok,
        f"{outcome.detail}; totals {usage.get('input_tokens')} in, {usage.get('output_tokens')} out",
        outcome.traceback,
    )


def _pause_turn(where: Path) -> Outcome:
    """A reply that stops with pause_turn is continued (sent back as the last turn) and the final
    answer printed; the fake refuses any other trailing assistant turn, as the model does."""
    project = project_in(where, QUICK)
    with FakeModelServer() as server:
        server.queue(Reply("Looking through the sources. ", stop="pause_turn"), Reply(DONE))
        proc = agent(["-p", "what is the answer?"], project, env_for(where, server))
        bodies = [r.body for r in server.requests]
    out = proc.stdout.decode("utf-8", "replace")
    continued = len(bodies) == 2 and bodies[1]["messages"][-1]["role"] == "assistant"
    check = "" if DONE in out and continued else f"{len(bodies)} requests, answer printed: {DONE in out}"
    outcome = judge(proc, {"finished"}, check=check)
    return Outcome(
        outcome.ok, f"{outcome.detail}; {len(bodies)} requests, the paused reply sent back", outcome.traceback
    )


def _unknown_block(wire: Sequence[str], where: Path) -> Outcome:
    """A reply with a block (Anthropic) or output item (Responses) of a type nobody knows: skipped,
    the answer printed, no pydantic warning dump on stderr."""
    project = project_in(where, QUICK)
    provider = "openai" if wire else "anthropic"
    odd = {"type": "hologram", "payload": {"frames": [1, 2, 3]}}
    with FakeModelServer() as server:
        server.queue(Reply(DONE, extra=[odd]))
        proc = agent(["-p", "hi", *wire], project, env_for(where, server, provider))
    err = _err(proc)
    dump = "Pydantic" in err or "serialized value" in err
    check = f"a warning dump on stderr ({len(err.splitlines())} lines)" if dump else ""
    if not check and DONE not in proc.stdout.decode("utf-8", "replace"):
        check = "the answer was not printed"
    outcome = judge(proc, {"finished"}, check=check)
    return Outcome(outcome.ok, f"{outcome.detail}; stderr {len(err.splitlines())} lines", outcome.traceback)


def _hostile_search(wire: Sequence[str], where: Path) -> Outcome:
    """The provider's own web search with a query full of terminal escapes: the search event keeps
    no raw control byte on stdout or stderr, and its blocks go back on the next request."""
    project = project_in(where, QUICK, {"notes.txt": "notes\n"})
    provider = "openai" if wire else "anthropic"
    query = "news\x1b]0;owned\x07\x1b[2J\nrm -rf ~"
    with FakeModelServer() as server:
        read = ToolCallSpec("read_file", {"path": "notes.txt"})
        server.queue(Reply("Reading.", [read], searches=[query]), Reply(DONE))
        args = ["-p", "look it up", *wire, "--yes", "--output-format", "stream-json"]
        proc = agent(args, project, env_for(where, server, provider))
        bodies = [r.body for r in server.requests]
    raw = proc.stdout + proc.stderr
    sent = json.dumps(bodies[1] if len(bodies) > 1 else {})
    check = "a raw control byte reached the output" if b"\x1b" in raw or b"\x07" in raw else ""
    if not check and ("web_search_call" if wire else "web_search_tool_result") not in sent:
        check = "the search was not sent back"
    if not check and b'"type": "web_search"' not in proc.stdout and b'"type":"web_search"' not in proc.stdout:
        check = "no web_search event"
    outcome = judge(proc, {"finished"}, check=check)
    return Outcome(outcome.ok, f"{outcome.detail}; {len(bodies)} requests", outcome.traceback)


def _twenty_compacts(where: Path) -> Outcome:
    """A file read, then twenty compact calls in a row: one summary call; the other nineteen say
    there is nothing new to compact."""
    project = project_in(where, QUICK, {"notes.txt": "the parser reads tokens one at a time\n" * 200})
    script: list[ScriptItem] = [_read("notes.txt")]
    script += [Reply("Compacting.", tool_calls=[ToolCallSpec("compact", {})]) for _ in range(20)]
    with FakeModelServer(responder=_responder(script, Reply(SUMMARY))) as server:
        proc = agent(["-p", "read notes.txt"], project, env_for(where, server))
        summaries = sum(1 for r in server.requests if is_summary_request(r.body))
    outcome = judge(proc, {"finished"}, check="" if summaries == 1 else f"{summaries} summary calls")
    return Outcome(
        outcome.ok, f"{outcome.detail}; {summaries} summary call for 20 compact calls", outcome.traceback
    )


# ---- the Responses API's ids (item 11) ---------------------------------------------------------


def _reasoning_ids(where: Path) -> Outcome:
    """A tool loop on the Responses wire with a reasoning model: each reasoning item goes back with
    its id, summary and encrypted_content (the fake refuses one without its id, as the API does)."""
    project = project_in(where, QUICK, {"a.py": "x = 1\n"})
    with FakeModelServer() as server:
        server.queue(
            Reply("", tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})], thinking="Read a.py first."),
            Reply(DONE, thinking="Answer."),
        )
        proc = agent(["-p", "what is x?", *OPENAI_RESPONSES], project, env_for(where, server, "openai"))
        bodies = [r.body for r in server.requests]
        accepted = [r.reasoning_accepted for r in server.requests]
    sent = [i for i in (bodies[1]["input"] if len(bodies) > 1 else []) if i.get("type") == "reasoning"]
    whole = bool(sent) and all(i.get("id") and i.get("encrypted_content") and "summary" in i for i in sent)
    check = "" if whole and accepted[-1:] == [1] else f"reasoning sent back: {[sorted(i) for i in sent]}"
    outcome = judge(proc, {"finished"}, check=check)
    ids = ", ".join(str(i.get("id"))[:10] + "…" for i in sent)
    return Outcome(
        outcome.ok, f"{outcome.detail}; reasoning {ids} sent back whole and read", outcome.traceback
    )


# ---- what a compaction says about its summary (item 12) ----------------------------------------


def _compact_message(summary: ScriptItem, where: Path) -> Outcome:
    """Two compactions (the compact tool: the engine's /compact path) whose summaries do not hold:
    the call refused (a digest stands in), or a record used though it names none of the files."""
    notes: dict[str, str | bytes] = {
        f"n{i}.txt": f"note {i}: the lexer splits words\n" * 200 for i in range(2)
    }
    project = project_in(where, QUICK, notes)
    compact = Reply("Compacting.", tool_calls=[ToolCallSpec("compact", {})])
    script = [_read("n0.txt"), compact, _read("n1.txt"), compact]
    with FakeModelServer(responder=_responder(script, summary)) as server:
        proc = agent(["-p", "read the notes", "--output-format", "json"], project, env_for(where, server))
    err = _err(proc)
    try:
        compactions = json.loads(proc.stdout.decode().strip().splitlines()[-1]).get("compactions") or []
    except (ValueError, IndexError):
        compactions = []
    warnings = [line for line in err.splitlines() if line.startswith("agent: warning:")]
    digest = isinstance(summary, Fault)
    degraded = [bool(c.get("degraded")) for c in compactions if c.get("layer") == "manual"]
    check = ""
    if degraded != [digest, digest]:
        check = f"panels degraded {degraded} (want {[digest, digest]})"
    elif len(warnings) != 2:
        check = f"{len(warnings)} warnings for two compactions (want one each)"
    elif ("mechanical digest" if digest else "in use, but it") not in warnings[0]:
        check = f"the first says: {warnings[0][:90]}"
    elif "2 summaries in a row did not hold" not in warnings[1]:
        check = f"the second says: {warnings[1][:90]}"
    elif not digest and "failed" in " ".join(warnings):
        check = "a record in use is called failed"
    outcome = judge(proc, {"finished"}, check=check)
    return Outcome(
        outcome.ok,
        f"{outcome.detail}; panels degraded {degraded}, {len(warnings)} warnings",
        outcome.traceback,
    )


def cases() -> list[Case]:
    c = partial(Case, SUITE)
    refused = Fault(400, "the summary request is refused")
    return [
        c(
            "a reply that drips a byte at a time (Anthropic) is cut at provider.timeout",
            partial(_endless, Drip(0.05), ()),
        ),
        c(
            "a reply that drips (Chat Completions, not streamed) is cut at provider.timeout",
            partial(_endless, Drip(0.05), OPENAI_CHAT, streaming=False),
        ),
        c(
            "a stream of nothing but pings (Anthropic) is cut at provider.timeout",
            partial(_endless, Pings(0.2, 60), ()),
        ),
        c(
            "a stream of nothing but keep-alives (Responses) is cut at provider.timeout",
            partial(_endless, Pings(0.2, 60), OPENAI_RESPONSES),
        ),
        c("usage reports far below the truth: requests stay under the window", _under_reported),
        c("a negative usage figure: totals sane, said once", partial(_odd_usage, -5000)),
        c("a huge usage figure (10**30): totals sane, said once", partial(_odd_usage, 10**30)),
        c(
            "a usage figure that is a string: no internal error, said once",
            partial(_odd_usage, "lots"),
            sample=True,
        ),
        c("pause_turn is continued and the final answer printed", _pause_turn, sample=True),
        c(
            "an unknown block type (Anthropic): skipped, no warning dump",
            partial(_unknown_block, ()),
            sample=True,
        ),
        c(
            "an unknown output item type (Responses): skipped, no warning dump",
            partial(_unknown_block, OPENAI_RESPONSES),
        ),
        c(
            "a provider web search whose query holds escapes (Anthropic): shown safe, sent back",
            partial(_hostile_search, ()),
        ),
        c(
            "a provider web search whose query holds escapes (Responses): shown safe, sent back",
            partial(_hostile_search, OPENAI_RESPONSES),
        ),
        c("twenty compact calls in a row make one summary call", _twenty_compacts),
        c(
            "Responses reasoning items go back with their ids (the fake refuses one without)",
            _reasoning_ids,
            sample=True,
        ),
        c(
            "two compactions whose summary call fails: a digest, said once and right",
            partial(_compact_message, refused),
        ),
        c(
            "two compactions whose records fall short: not called failed calls",
            partial(_compact_message, Reply("## Work state\nDone.")),
        ),
    ]

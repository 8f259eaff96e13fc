"""Faults on every wire, streaming and not, in a normal turn and in a summary call.

Each case scripts one fault (or a run of them) where it strikes, then answers normally, and says
how the run must end: a fault the agent retries ends in the finished task; one it must not retry
(400, 401) ends in one line. In a summary call every fault must end in the finished task: a
summary retries at most twice and then builds its record by code.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import (
    Drop,
    FakeModelServer,
    Fault,
    RecordedRequest,
    Reply,
    ScriptItem,
    Stall,
    StreamError,
    ToolCallSpec,
    Truncate,
)
from agent_cli.testing.summary_shape import is_summary_request
from tests.reliability.harness import (
    FINISHED,
    LINE,
    QUICK_CONFIG,
    Case,
    Outcome,
    agent,
    env_for,
    judge,
    project_in,
)

WIRES = {
    "anthropic": ("anthropic", []),
    "chat": ("openai", ["--wire", "chat"]),
    "responses": ("openai", ["--wire", "responses"]),
}
HTML = "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>nginx</body></html>"

# name: (what the server does, how a normal turn must end)
FAULTS: dict[str, tuple[list[ScriptItem], set[str]]] = {
    "429 rate limit": ([Fault(429, "Rate limited", {"retry-after": "0"})], {FINISHED}),
    "529 overloaded": ([Fault(529, "Overloaded", kind="overloaded_error")], {FINISHED}),
    "500 server error": ([Fault(500, "Internal server error")], {FINISHED}),
    "HTML 502 from a proxy": ([Fault(502, raw=HTML)], {FINISHED}),
    "200 whose body is not JSON": ([Fault(200, raw=HTML)], {FINISHED}),
    "dropped connection": ([Drop(after_events=3)], {FINISHED}),
    "stalled stream": ([Stall(after_events=2, seconds=4)], {FINISHED}),
    "error event in the stream": ([StreamError()], {FINISHED}),
    "stream ends without a stop": ([Truncate()], {FINISHED}),
    "four 529s in a row": ([Fault(529, "Overloaded", kind="overloaded_error")] * 4, {LINE}),
    "400 bad request": (
        [Fault(400, "messages: something is malformed", kind="invalid_request_error")],
        {LINE},
    ),
    "401 bad key": ([Fault(401, "invalid x-api-key", kind="authentication_error")], {LINE}),
}
STREAMING = {"streaming": "true", "whole replies": "false"}
# The stalled stream's own limits: a stall of 1 s, well inside the fake's 4 s of silence. On a busy
# machine a late event may trip it early too: that is one more retry, which the fault allows.
STALL_CONFIG = "[provider]\nmax_retries = 3\nstall_timeout = 1.0\ntimeout = 8.0\n"
FILE_TEXT = "\n".join(f"line {n:03d}: a note that fills the window, value {n * 7}" for n in range(220)) + "\n"


def _summary_responder(
    faults: list[ScriptItem], state: dict[str, int]
) -> Callable[[RecordedRequest], ScriptItem]:
    """Read files until the engine asks for a summary; the first summary requests get the faults."""
    state.update(step=0, faulted=0, summaries=0)

    def answer(request: RecordedRequest) -> ScriptItem:
        if is_summary_request(request.body):
            state["summaries"] += 1
            if state["faulted"] < len(faults):
                state["faulted"] += 1
                return faults[state["faulted"] - 1]
            return Reply("Record of the work so far: the notes files were read; next, finish the task.")
        state["step"] += 1
        if state["summaries"] == 0 and state["step"] <= 12:
            call = ToolCallSpec("read_file", {"path": f"notes/n{state['step']}.txt"})
            notes = " ".join(f"Observation {k} on step {state['step']}." for k in range(90))
            return Reply(f"{notes}\nReading notes/n{state['step']}.txt.", tool_calls=[call])
        return Reply("FAULT-CASE-DONE")

    return answer


def _run(
    where: Path, wire: str, streaming: str, phase: str, items: list[ScriptItem], expect: set[str]
) -> Outcome:
    provider, flags = WIRES[wire]
    stalls = any(isinstance(item, Stall) for item in items)
    config = (STALL_CONFIG if stalls else QUICK_CONFIG) + f"streaming = {streaming}\n"
    files = {f"notes/n{i}.txt": FILE_TEXT for i in range(1, 13)} if phase == "summary" else {}
    project = project_in(where, config, files)
    args = ["-p", "Read the notes one by one.", "--provider", provider, "--yes", *flags]
    state: dict[str, int] = {}
    with FakeModelServer() as server:
        if phase == "turn":
            server.queue(*items, Reply("FAULT-CASE-DONE"))
        else:
            server.responder = _summary_responder(items, state)
            args += ["--context-window", "16000"]
        proc = agent(args, project, env_for(where, server, provider))
    check = ""
    if proc.returncode == 0 and b"FAULT-CASE-DONE" not in proc.stdout:
        check = "finished without the final answer"
    if phase == "summary" and not state.get("faulted"):
        check = "no summary call was made, so the fault never struck one"
    return judge(proc, expect, check=check)


def cases() -> list[Case]:
    found = []
    n = 0
    for phase in ("turn", "summary"):
        for wire in WIRES:
            for streaming, value in STREAMING.items():
                for fault, (items, expect) in FAULTS.items():
                    if phase == "summary":
                        expect = {FINISHED}
                    name = f"{fault} · {wire} · {streaming} · {phase}"

                    run = partial(_run, wire=wire, streaming=value, phase=phase, items=items, expect=expect)

                    sample = n % 26 == 0 or (fault.startswith("200") and value == "false" and phase == "turn")
                    found.append(Case("faults", name, run, sample=sample))
                    n += 1
    return found

"""A running tool's output as it arrives: the tap the bash tool writes to, the progress events the
runner yields from it (redacted, a few a second, and one with how the command ended), a Ctrl-C
thrown in at one of them, and what the session log and headless stream-json keep of them (nothing).
Real bash in a temp dir; a scripted provider for the loop."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import pytest

from agent_cli.agent.approvals import AutoApprover
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.tool_runner import PROGRESS_SECONDS, ToolRunner, run_through
from agent_cli.core.events import Event, ToolProgress, ToolResultEvent
from agent_cli.core.messages import ToolUse
from agent_cli.providers.retry import RetryPolicy
from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, call, say
from agent_cli.tools.base import ToolContext
from agent_cli.tools.head_tail import HEAD_BYTES, TAIL_BYTES
from agent_cli.tools.live import LiveOutput, last_lines
from agent_cli.tools.registry import default_tools
from agent_cli.ui.headless import render_headless

COUNT = "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.2; done"


@pytest.mark.parametrize(
    ("text", "n", "lines"),
    [
        ("", 5, ()),
        ("a\nb\n", 5, ("a", "b")),
        ("a\nb", 5, ("a", "b")),  # a line still being written shows too
        ("1\n2\n3\n4\n5\n6\n7\n", 5, ("3", "4", "5", "6", "7")),
        ("10%\r50%\r90%", 5, ("90%",)),  # a progress bar: what its last redraw left
        ("done\r\nnext\r\n", 5, ("done", "next")),  # Windows line ends
        ("a\n\nb\n", 5, ("a", "", "b")),
        ("a\nb\n", 0, ()),
    ],
)
def test_last_lines_are_what_a_terminal_leaves(text: str, n: int, lines: tuple[str, ...]) -> None:
    assert last_lines(text, n) == lines


def test_the_tap_keeps_only_its_tail_and_counts_every_byte() -> None:
    tap = LiveOutput(keep=100)
    assert not tap.used
    for i in range(10_000):
        tap.write(f"line {i}\n".encode())
    snap = tap.snapshot()
    assert len(snap.text) <= 100 and snap.text.endswith("line 9999\n")
    assert snap.size == sum(len(f"line {i}\n") for i in range(10_000)) and snap.status is None
    tap.end("exit 0")
    assert tap.used and tap.snapshot().status == "exit 0"


@pytest.mark.parametrize(
    ("command", "timeout", "status"),
    [
        ("printf 'one\\ntwo\\n'", 10.0, "exit 0"),
        ("echo x; exit 3", 10.0, "exit 3"),
        ("kill -9 $$", 10.0, "killed by signal 9"),
        ("echo started; sleep 30", 0.5, "timed out after 0.5s"),
    ],
)
def test_bash_writes_its_output_to_the_tap_and_says_how_it_ended(
    tmp_path: Path, command: str, timeout: float, status: str
) -> None:
    tap = LiveOutput()
    out = default_tools().run(
        "bash", {"command": command, "timeout": timeout}, ToolContext(root=tmp_path, live=tap)
    )
    snap = tap.snapshot()
    assert snap.status == status
    body = out.content.rsplit("\n[", 1)[0]  # the output, without the tool's own status line
    assert snap.text == (body + "\n" if body and body != "(no output)" else "")


def test_the_tap_sees_every_byte_while_the_result_keeps_head_and_tail(tmp_path: Path) -> None:
    tap = LiveOutput()
    command = "head -c 200000 /dev/zero | tr '\\0' 'x'; echo; echo last"
    out = default_tools().run("bash", {"command": command}, ToolContext(root=tmp_path, live=tap))
    assert tap.snapshot().size == 200_000 + len("\nlast\n")
    assert len(out.content) < HEAD_BYTES + TAIL_BYTES + 1000 and tap.snapshot().text.endswith("x\nlast\n")


def _runner(redact: object = None) -> ToolRunner:
    return ToolRunner(default_tools(), AutoApprover(), Hooks(), redact=redact)  # type: ignore[arg-type]


def test_the_runner_yields_the_last_lines_and_seconds_while_bash_runs_then_how_it_ended(
    tmp_path: Path,
) -> None:
    steps = _runner().run(ToolUse("toolu_1", "bash", {"command": COUNT}), ToolContext(root=tmp_path))
    seen: list[tuple[float, ToolProgress]] = []
    started = time.monotonic()
    while True:
        try:
            seen.append((time.monotonic() - started, next(steps)))
        except StopIteration as stop:
            output, duration = stop.value
            break
    running = [p for _, p in seen if p.status is None]
    final = seen[-1][1]
    assert (
        final.status == "exit 0"
        and final.size == 36
        and final.lines[-5:] == tuple(f"line{i}" for i in range(2, 7))
    )
    assert not output.is_error and "line6" in output.content and duration >= 1.0
    # Before the end: lines that came so far, with the seconds counting up, a few a second at most.
    early = next(p for t, p in seen if "line2" in p.lines)
    assert early.status is None and "line6" not in early.lines and 0.2 < early.elapsed < duration
    assert all(len(p.lines) <= 5 for p in running)
    assert [p.elapsed for p in running] == sorted(p.elapsed for p in running)
    assert len(running) <= duration / PROGRESS_SECONDS + 1


def test_progress_lines_are_redacted_before_anything_shows_them(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    command = f"echo key={secret}; sleep 0.6"
    steps = _runner(lambda text: text.replace(secret, "[REDACTED]")).run(
        ToolUse("toolu_1", "bash", {"command": command}), ToolContext(root=tmp_path)
    )
    shown: list[str] = []
    while True:
        try:
            shown += next(steps).lines
        except StopIteration:
            break
    assert "key=[REDACTED]" in shown and not any(secret in line for line in shown)


@pytest.mark.parametrize("how", ["interrupt", "close"])
def test_an_interrupt_at_a_progress_event_kills_the_command(tmp_path: Path, how: str) -> None:
    ctx = ToolContext(root=tmp_path)
    steps = _runner().run(ToolUse("toolu_1", "bash", {"command": "echo up; sleep 300"}), ctx)
    first = next(steps)
    assert first.status is None
    started = time.monotonic()
    if how == "interrupt":  # what the REPL's turn driver throws in for Ctrl-C
        with pytest.raises(KeyboardInterrupt):
            steps.throw(KeyboardInterrupt())
    else:  # the turn abandoned
        steps.close()
    assert ctx.cancel.is_set() and time.monotonic() - started < 60  # killed, not waited for (300 s)


def test_a_tool_without_a_tap_reports_seconds_and_no_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    output, _ = run_through(
        _runner().run(ToolUse("toolu_1", "read_file", {"path": "a.txt"}), ToolContext(root=tmp_path))
    )
    assert "hello" in output.content
    steps = _runner().run(ToolUse("toolu_2", "read_file", {"path": "a.txt"}), ToolContext(root=tmp_path))
    assert [p for p in _drain(steps) if p.status is not None] == []


def _drain(steps: object) -> list[ToolProgress]:
    found = []
    for item in steps:  # type: ignore[attr-defined]
        found.append(item)
    return found


def _loop(tmp_path: Path, script: list[object]) -> tuple[AgentLoop, MemorySession]:
    log = MemorySession()
    loop = AgentLoop(
        provider=ScriptedProvider(script),  # type: ignore[arg-type]
        tools=default_tools(),
        context=PassThroughContext(),
        system="You are a test agent.",
        log=log,
        approver=AutoApprover(),
        tool_context=ToolContext(root=tmp_path),
        retry=RetryPolicy(max_retries=0),
        sleep=lambda s: None,
    )
    return loop, log


def test_the_loop_passes_progress_on_but_the_session_log_keeps_none(tmp_path: Path) -> None:
    loop, log = _loop(tmp_path, [call("bash", command=COUNT), say("Counted.")])
    events = list(loop.run("count"))
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert progress and progress[-1].status == "exit 0"
    result = next(i for i, e in enumerate(events) if isinstance(e, ToolResultEvent))
    assert all(events.index(p) < result for p in progress), "progress comes before the result"
    assert not any(isinstance(e, ToolProgress) for e in log.events)


def test_headless_output_leaves_progress_out(tmp_path: Path) -> None:
    loop, _ = _loop(tmp_path, [call("bash", command=COUNT), say("Counted.")])
    events: list[Event] = list(loop.run("count"))
    assert any(isinstance(e, ToolProgress) for e in events)
    out, err = io.StringIO(), io.StringIO()
    render_headless(events, "stream-json", out=out, err=err)
    types = [json.loads(line)["type"] for line in out.getvalue().splitlines()]
    assert "tool_progress" not in types and "tool_result" in types
    without = [e for e in events if not isinstance(e, ToolProgress)]
    for fmt in ("text", "json"):
        with_progress, plain = io.StringIO(), io.StringIO()
        render_headless(events, fmt, out=with_progress, err=io.StringIO())  # type: ignore[arg-type]
        render_headless(without, fmt, out=plain, err=io.StringIO())  # type: ignore[arg-type]
        assert with_progress.getvalue() == plain.getvalue()


def test_a_cancel_from_another_thread_still_stops_a_live_command(tmp_path: Path) -> None:
    """The REPL's Ctrl-C while a progress event renders: the cancel signal, then the interrupt."""
    ctx = ToolContext(root=tmp_path)
    steps = _runner().run(ToolUse("toolu_1", "bash", {"command": "sleep 30"}), ctx)
    next(steps)
    threading.Timer(0.1, ctx.cancel.set).start()
    output, _ = run_through(steps)
    assert output.is_error and "cancelled by the user" in output.content

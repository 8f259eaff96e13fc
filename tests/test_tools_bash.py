"""The bash tool run for real: exit codes, timeouts, cancels, group kills, capped output, memory."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.head_tail import HEAD_BYTES, TAIL_BYTES, HeadTail
from agent_cli.tools.registry import default_tools

REGISTRY = default_tools()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(root=tmp_path, bash_timeout=120)


def bash(ctx: ToolContext, command: Any, **args: Any) -> ToolOutput:
    return REGISTRY.run("bash", {"command": command, **args}, ctx)


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a parent that never reaps it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for_file(path: Path, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.01)
    raise AssertionError(f"{path} never written")


def cancel_once_written(ctx: ToolContext, path: Path) -> threading.Thread:
    """Cancel the call once the command has written `path`: by then it is surely running, however
    busy the machine (a timer could fire before the shell had started)."""

    def cancel() -> None:
        wait_for_file(path)
        ctx.cancel.set()

    thread = threading.Thread(target=cancel, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("command", "expected", "failed"),
    [
        ("echo hello", "hello\n[exit code 0]", False),
        ("echo out; echo err >&2; exit 3", "out\nerr\n[exit code 3]", True),
        ("false", "(no output)\n[exit code 1]", True),
        ("kill -9 $$", "(no output)\n[killed by signal 9]", True),
        ("printf 'no newline'", "no newline\n[exit code 0]", False),
        ("cat", "(no output)\n[exit code 0]", False),  # stdin is /dev/null: nothing to wait for
        ("echo $PAGER", "cat\n[exit code 0]", False),
    ],
)
def test_exit_codes_are_reported_with_the_output(
    ctx: ToolContext, command: str, expected: str, failed: bool
) -> None:
    out = bash(ctx, command)
    assert out == ToolOutput(expected, is_error=failed)


def test_runs_in_the_project_root(ctx: ToolContext) -> None:
    assert bash(ctx, "pwd").content.split("\n")[0] == str(ctx.root)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"command": None}, "missing required argument 'command'"),
        ({"command": "  "}, "argument 'command' is empty"),
        ({"command": ["ls"]}, "must be a string"),
        ({"command": "true", "timeout": -1}, "timeout must be a positive number"),
        ({"command": "true", "timeout": "soon"}, "'timeout' must be a number"),
    ],
)
def test_bad_arguments(ctx: ToolContext, args: dict[str, Any], expected: str) -> None:
    out = REGISTRY.run("bash", args, ctx)
    assert out.is_error
    assert expected in out.content


def test_timeout_over_the_maximum_is_clamped(ctx: ToolContext) -> None:
    out = bash(ctx, "echo ok", timeout=10_000)
    assert out.content.startswith("[timeout 10000s is over the maximum; used 600s]\nok\n")


def test_never_ending_command_returns_at_timeout_with_its_output_and_group_dead(ctx: ToolContext) -> None:
    # A child and a grandchild, both in the command's process group, both recorded.
    # A timeout of 2 s, so that even on a busy machine the shells have started and written their pids.
    command = "echo started; sh -c 'echo $$ > child.pid; sleep 1000' & echo $$ > bash.pid; wait"
    t0 = time.monotonic()
    out = bash(ctx, command, timeout=2)
    elapsed = time.monotonic() - t0
    assert out.is_error
    assert out.content.startswith("started\n")
    assert "[timed out after 2s; the command and its child processes were killed]" in out.content
    assert elapsed < 60  # cut at its timeout, not run for its 1000 s
    for name in ("bash.pid", "child.pid"):
        pid = int(wait_for_file(ctx.root / name))
        assert not alive(pid), f"{name} {pid} survived"


def test_term_ignoring_command_is_killed(ctx: ToolContext) -> None:
    command = "trap '' TERM; sh -c 'trap \"\" TERM; echo $$ > child.pid; sleep 1000'"
    t0 = time.monotonic()
    out = bash(ctx, command, timeout=2)  # 2 s: time for the child to start and write its pid
    assert out.is_error and "timed out" in out.content
    assert time.monotonic() - t0 < 60  # timeout + the TERM grace, then KILL: not the 1000 s it asks for
    assert not alive(int(wait_for_file(ctx.root / "child.pid")))


def test_cancel_from_another_thread(ctx: ToolContext) -> None:
    cancel_once_written(ctx, ctx.root / "bash.pid")
    t0 = time.monotonic()
    out = bash(ctx, "echo waiting; echo $$ > bash.pid; sleep 1000", timeout=600)
    assert time.monotonic() - t0 < 60  # stopped by the cancel, not run for its 1000 s
    assert out.is_error
    assert out.content == (
        "waiting\n[cancelled by the user; the command and its child processes were killed]"
    )
    assert not alive(int(wait_for_file(ctx.root / "bash.pid")))


def test_background_job_holding_the_pipe_does_not_block(ctx: ToolContext) -> None:
    t0 = time.monotonic()
    out = bash(ctx, "sleep 30 & echo $! > bg.pid; echo done")
    pid = int(wait_for_file(ctx.root / "bg.pid"))
    try:
        assert time.monotonic() - t0 < 20  # not held until the background job's 30 s are over
        assert not out.is_error
        assert out.content.startswith("done\n[exit code 0]")
        assert "background process" in out.content
    finally:
        os.kill(pid, signal.SIGKILL)


def test_head_and_tail_are_kept_around_a_marker(ctx: ToolContext) -> None:
    out = bash(ctx, "seq 1 100000").content
    total = sum(len(f"{i}\n") for i in range(1, 100001))
    omitted = total - HEAD_BYTES - TAIL_BYTES
    assert out.startswith("1\n2\n3\n")
    assert out.endswith("99999\n100000\n[exit code 0]")
    assert f"[... {omitted} bytes of output omitted ({total} in all)" in out


def test_100_mb_of_output_is_capped_without_holding_it(ctx: ToolContext) -> None:
    tracemalloc.start()
    try:
        out = bash(ctx, "head -c 100000000 /dev/zero | tr '\\0' a", timeout=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not out.is_error
    assert len(out.content) < HEAD_BYTES + TAIL_BYTES + 500
    assert f"[... {100_000_000 - HEAD_BYTES - TAIL_BYTES} bytes of output omitted" in out.content
    assert out.content.startswith("a" * HEAD_BYTES + "\n[...")
    assert peak < 2 * 1024 * 1024, f"peak Python allocation {peak} bytes"


# --- HeadTail on its own -------------------------------------------------------------------------


@given(chunks=st.lists(st.binary(max_size=30), max_size=20), head=st.integers(0, 20), tail=st.integers(0, 20))
def test_head_tail_keeps_exactly_the_ends(chunks: list[bytes], head: int, tail: int) -> None:
    sink = HeadTail(head, tail)
    for chunk in chunks:
        sink.write(chunk)
    data = b"".join(chunks)
    assert sink.total == len(data)
    text = sink.text()
    if len(data) <= head + tail:
        assert text == data.decode("utf-8", errors="replace")
        assert sink.omitted == 0
    else:
        assert sink.omitted == len(data) - head - tail
        before, _, after = text.partition(f"\n[... {sink.omitted} bytes of output omitted")
        assert before == data[:head].decode("utf-8", errors="replace")
        assert after.endswith("...]\n" + data[len(data) - tail :].decode("utf-8", errors="replace"))


# --- commands that close their output (issue 16, item 7) -----------------------------------------


def run_in_thread(ctx: ToolContext, command: str, **args: Any) -> tuple[threading.Thread, list[ToolOutput]]:
    """Run the tool in a daemon thread, so a test of a hang fails instead of hanging."""
    out: list[ToolOutput] = []
    worker = threading.Thread(target=lambda: out.append(bash(ctx, command, **args)), daemon=True)
    worker.start()
    return worker, out


def test_the_timeout_holds_after_the_command_closes_its_output(ctx: ToolContext) -> None:
    t0 = time.monotonic()
    worker, out = run_in_thread(ctx, "echo $$ > bash.pid; echo bye; exec >&- 2>&-; sleep 999", timeout=2)
    worker.join(120)
    pid = int(wait_for_file(ctx.root / "bash.pid"))
    try:
        assert not worker.is_alive(), "the command ran on past its timeout"
        assert time.monotonic() - t0 < 60  # cut at its timeout of 2 s, not run for its 999 s
        assert out[0].is_error
        assert out[0].content.startswith("bye\n")
        assert "[timed out after 2s; the command and its child processes were killed]" in out[0].content
        assert not alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def test_a_cancel_holds_after_the_command_closes_its_output(ctx: ToolContext) -> None:
    cancel_once_written(ctx, ctx.root / "bash.pid")
    worker, out = run_in_thread(ctx, "echo $$ > bash.pid; exec >&- 2>&-; sleep 999", timeout=600)
    worker.join(120)
    pid = int(wait_for_file(ctx.root / "bash.pid"))
    try:
        assert not worker.is_alive(), "a cancel did not stop the command"
        assert "[cancelled by the user" in out[0].content
        assert not alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def test_a_command_that_closes_its_output_and_exits_reports_its_exit_code(ctx: ToolContext) -> None:
    out = bash(ctx, "echo early; exec >&- 2>&-; sleep 0.3; exit 4")
    assert out == ToolOutput("early\n[exit code 4]", is_error=True)

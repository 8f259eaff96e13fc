"""The bash tool: one command, in the project root, bounded in time and in memory.

The command runs as `bash -c` in its own session (so in its own process group)
with stdin on /dev/null and stderr merged into stdout, in the order printed.
Output is read in chunks into a `HeadTail` buffer (tools/head_tail.py) that keeps the first and
last 16 KiB and only counts the middle, so a command printing gigabytes costs
32 KiB. A timeout or a cancel (Ctrl-C sets `ctx.cancel`) kills the whole group:
TERM, a short grace, then KILL. While it runs the group is registered in
`children`, so the agent ending any other way (SIGTERM, SIGHUP, exit) kills
it too; if the agent dies outright, the kernel kills the shell (Linux) and the watchdog the rest.
What the command started with `setsid` is found by a marker in its environment and killed with it.
What it leaves running when it returns (a daemon) ends with the agent (`tools/containment.py`).
Under the session's sandbox (`ToolContext.sandbox`, unless the user approved this one call outside
it) the command is started through bubblewrap with the policy's environment, and a failure the
sandbox caused gets a line saying so (`confine.Confinement.denial`).

A non-zero exit, a timeout and a cancel are error results that still carry all
the output (capped), so the model sees why and the UI shows the failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools import children
from agent_cli.tools.args import optional_number, require_str
from agent_cli.tools.base import Approval, CallView, FileEffect, ToolContext, ToolError, ToolOutput
from agent_cli.tools.confine import Confinement
from agent_cli.tools.head_tail import HeadTail, Spans
from agent_cli.tools.live import LiveOutput

__all__ = ["BackgroundStarter", "Bash", "CommandResult", "run_command"]

MAX_TIMEOUT = 600.0
CHUNK_BYTES = 64 * 1024
POLL_SECONDS = 0.05
KILL_GRACE_SECONDS = 1.0
# After bash exits, a background job may still hold the pipe open; read what it
# has already written for this long, then stop rather than wait for it.
DRAIN_SECONDS = 0.2


# Starts a command in the background: (command, cwd, sandbox) -> the line the model is told.
BackgroundStarter = Callable[[str, Path, Confinement | None], str]


@dataclass(frozen=True, slots=True)
class CommandResult:
    output: str
    exit_code: int | None  # None when killed by us
    timed_out: bool = False
    cancelled: bool = False
    lingering: bool = False  # bash exited but something it started still held the output open
    duration: float = 0.0


def run_command(
    command: str,
    cwd: str | os.PathLike[str],
    timeout: float,
    cancel: threading.Event | None = None,
    *,
    sink: HeadTail | None = None,
    spans: Spans | None = None,
    live: LiveOutput | None = None,
    sandbox: Confinement | None = None,
) -> CommandResult:
    """Run `command` with `bash -c` in `cwd`; stop at `timeout` seconds or when `cancel` is set.
    `spans` finds secrets, so the output's cut does not fall inside one; `live` gets every chunk
    as it arrives, for the screen; `sandbox` wraps the command (bwrap, the filtered environment)."""
    sink = sink if sink is not None else HeadTail()
    env = dict(os.environ)
    # Nothing can answer a pager or a prompt: stdin is /dev/null and output goes to a pipe.
    env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
    marker = children.new_marker()  # finds what the command starts outside its group (setsid)
    env[children.MARKER_VAR] = marker
    argv = ["bash", "-c", command]
    if sandbox is not None:
        launch = sandbox.launch(argv, Path(cwd), env)
        argv, env = launch.argv, launch.env
    started = time.monotonic()
    try:
        proc = children.popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    except BaseException:
        children.withdraw(marker)
        raise
    children.register(proc.pid, marker)
    try:
        return _collect(proc, _Tee(sink, live), started, timeout, cancel, spans)
    finally:
        children.unregister(proc.pid)


class _Tee:
    """The output's sink, and the live tap beside it (when there is one)."""

    def __init__(self, sink: HeadTail, live: LiveOutput | None) -> None:
        self._sink = sink
        self._live = live

    def write(self, data: bytes) -> None:
        self._sink.write(data)
        if self._live is not None:
            self._live.write(data)

    def text(self, spans: Spans | None = None) -> str:
        return self._sink.text(spans)


def _collect(
    proc: subprocess.Popen[bytes],
    sink: _Tee,
    started: float,
    timeout: float,
    cancel: threading.Event | None,
    spans: Spans | None,
) -> CommandResult:
    """Read the command's output until it ends, times out or is cancelled.

    EOF is not the end: a command can close its output and run on (`exec >&-; sleep 999`), so
    after it the loop waits for the shell, still bound by the deadline and the cancel."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = started + timeout
    timed_out = cancelled = lingering = eof = False
    exited_at: float | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        try:
            while True:
                if eof:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(POLL_SECONDS)
                elif sel.select(POLL_SECONDS):
                    chunk = os.read(fd, CHUNK_BYTES)
                    if chunk:
                        sink.write(chunk)
                    else:  # every writer is gone; the shell may not be
                        eof = True
                        sel.unregister(fd)
                now = time.monotonic()
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and eof:
                    break
                if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                    lingering = True
                    break
                if cancel is not None and cancel.is_set():
                    cancelled = True
                    break
                if now >= deadline:
                    timed_out = True
                    break
        except BaseException:  # e.g. KeyboardInterrupt while reading: leave nothing running
            _kill_group(proc)
            proc.stdout.close()
            raise
        if timed_out or cancelled:
            _kill_group(proc)
            # Keep what was still in the pipe: "what it printed so far" includes it.
            drain_end = time.monotonic() + DRAIN_SECONDS
            while not eof and time.monotonic() < drain_end and sel.select(0):
                chunk = os.read(fd, CHUNK_BYTES)
                if not chunk:
                    break
                sink.write(chunk)
    proc.stdout.close()
    exit_code = proc.wait() if not (timed_out or cancelled) else None
    return CommandResult(
        output=sink.text(spans),
        exit_code=exit_code,
        timed_out=timed_out,
        cancelled=cancelled,
        lingering=lingering,
        duration=time.monotonic() - started,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """TERM the process group, give it a moment, then KILL whatever is left. Reaps the leader."""
    # start_new_session made the child a group leader with pgid == pid
    children.kill_group(proc.pid, proc.poll, KILL_GRACE_SECONDS)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


class Bash:
    spec = ToolSpec(
        name="bash",
        description=(
            "Run a shell command with `bash -c` in the project root and return its output "
            "(stderr merged into stdout) and exit code. stdin is empty, so interactive commands "
            "cannot prompt. Output over 32 KiB keeps the first and last 16 KiB. The command is "
            "killed at the timeout (default from the config, max 600 s). For a long-running "
            "process (a dev server, a watcher), set run_in_background: the call returns at once "
            "with a shell id; read its output with bash_output, stop it with kill_shell."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {
                    "type": "number",
                    "description": f"Seconds before the command is killed (max {int(MAX_TIMEOUT)}).",
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Start it and return at once with a shell id (no timeout); it "
                    "runs until it ends, kill_shell stops it, or the session ends.",
                },
            },
            "required": ["command"],
        },
    )
    approval: Approval = "command"
    effect: FileEffect = "tree"
    view = CallView(main="command")

    def __init__(self, background: BackgroundStarter | None = None) -> None:
        self.background = background

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        command = require_str(args, "command")
        background = args.get("run_in_background", False)
        if not isinstance(background, bool):
            raise ToolError(f"run_in_background must be true or false, got {background!r}")
        if background:
            return self._start(command, ctx)
        default = min(ctx.bash_timeout, MAX_TIMEOUT)
        timeout = optional_number(args, "timeout", default)
        if timeout <= 0:
            raise ToolError(f"timeout must be a positive number of seconds, got {args.get('timeout')!r}")
        note = ""
        if timeout > MAX_TIMEOUT:
            note = f"[timeout {timeout:g}s is over the maximum; used {MAX_TIMEOUT:g}s]\n"
            timeout = MAX_TIMEOUT
        if not ctx.root.is_dir():
            raise ToolError(f"the project root {ctx.root} is not a directory")
        sandbox = None if ctx.unconfined else ctx.sandbox
        before = None
        if sandbox is not None and ctx.protect:
            sandbox = sandbox.protecting()  # auto mode, unasked: .git/config, .agent/ ... read-only
            before = sandbox.present()
        result = run_command(
            command, ctx.root, timeout, ctx.cancel, spans=ctx.secret_spans, live=ctx.live, sandbox=sandbox
        )
        if ctx.live is not None:
            ctx.live.end(_status_words(result, timeout))
        output = format_result(result, timeout, note)
        denied = sandbox.denial(result.output) if sandbox is not None and output.is_error else None
        if denied is not None:
            output = dataclasses.replace(output, content=f"{output.content}\n[{denied}]", sandbox_denied=True)
        made = None if sandbox is None or before is None else sandbox.created_line(before)
        if made is not None:
            output = dataclasses.replace(output, content=f"{output.content}\n[{made}]")
        return output

    def _start(self, command: str, ctx: ToolContext) -> ToolOutput:
        if self.background is None:
            raise ToolError(
                "background commands are not available in this session: run it without run_in_background"
            )
        if not ctx.root.is_dir():
            raise ToolError(f"the project root {ctx.root} is not a directory")
        try:
            return ToolOutput(self.background(command, ctx.root, None if ctx.unconfined else ctx.sandbox))
        except (OSError, RuntimeError) as exc:
            raise ToolError(str(exc)) from None


def _status_words(result: CommandResult, timeout: float) -> str:
    """How a command ended, in a few words: `exit 0`, `killed by signal 9`, `timed out after 5s`."""
    if result.timed_out:
        return f"timed out after {timeout:g}s"
    if result.cancelled:
        return "cancelled"
    code = result.exit_code
    return f"exit {code}" if code is None or code >= 0 else f"killed by signal {-code}"


def format_result(result: CommandResult, timeout: float, note: str = "") -> ToolOutput:
    body = result.output if result.output else "(no output)"
    if not body.endswith("\n"):
        body += "\n"
    if result.timed_out:
        status = f"[timed out after {timeout:g}s; the command and its child processes were killed]"
    elif result.cancelled:
        status = "[cancelled by the user; the command and its child processes were killed]"
    else:
        code = result.exit_code
        status = f"[exit code {code}]" if code is None or code >= 0 else f"[killed by signal {-code}]"
        if result.lingering:
            status += (
                "\n[a background process still holds the output open; later output is not captured: "
                "redirect it to a file]"
            )
    failed = result.timed_out or result.cancelled or result.exit_code != 0
    return ToolOutput(note + body + status, is_error=failed)

"""Commands that run in the background: a dev server stays up while the model works.

`bash` with `run_in_background` starts its command here and returns at once with a shell id
(`bg1`, `bg2`, ...). The command starts as the bash tool starts one (its own process group, stdin
on /dev/null, stderr merged, the session's sandbox and container, registered with the watchdog),
from a thread of its own that lives as long as it does: the kernel's parent-death signal is tied
to the thread that started a process, so a command started from a turn's thread would die with
the turn. That thread reads the output as it comes: what was not read yet is kept in a `HeadTail`
(the first and last 16 KiB of it, the middle counted), and the whole of it goes to a private
temporary file, which is saved to the session's archive when the command ends (or is stopped),
so recall finds any line of it later.

`bash_output` returns what a command printed since the last read and whether it still runs;
`kill_shell` stops one (TERM to its group, then KILL); `/ps` lists them and `/stop ID` stops one;
all of them end with the session (`close`), and with the agent however it ends (they are the
watchdog's and the container's like any command).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.core.text import visible
from agent_cli.store.log_records import LogRecord, StateRecord
from agent_cli.tools import children
from agent_cli.tools.bash import CHUNK_BYTES, KILL_GRACE_SECONDS
from agent_cli.tools.confine import Confinement
from agent_cli.tools.head_tail import HeadTail, Spans

__all__ = [
    "ARCHIVE_CAP",
    "MAX_SHELLS",
    "TOPIC",
    "BackgroundShell",
    "BackgroundShells",
    "ShellState",
    "died_notice",
    "died_with",
    "running_record",
]

TOPIC = "background"  # the session log's state record: the commands running, after each change

MAX_SHELLS = 16  # running at once; a model that starts more is told to stop one first
ARCHIVE_CAP = 8 * 1024 * 1024  # bytes of a command's log saved whole; beyond, its head and tail
_START_WAIT = 30.0  # seconds to wait for the starting thread to report the process (or its error)


@dataclass(frozen=True, slots=True)
class ShellState:
    """One background command as `/ps` shows it."""

    shell_id: str
    command: str
    running: bool
    exit_code: int | None  # None while it runs, or when it was stopped
    stopped: bool  # ended by kill_shell, /stop or the session's end
    started: float  # time.time() at its start
    printed: int  # bytes printed so far

    def status(self) -> str:
        if self.running:
            return "running"
        if self.stopped:
            return "stopped"
        code = self.exit_code
        return f"exited with code {code}" if code is None or code >= 0 else f"killed by signal {-code}"


@dataclass(eq=False)
class BackgroundShell:
    shell_id: str
    command: str
    started: float
    proc: subprocess.Popen[bytes] | None = None
    unread: HeadTail = field(default_factory=HeadTail)
    printed: int = 0
    exit_code: int | None = None
    stopped: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    log: tempfile._TemporaryFileWrapper[bytes] | None = None
    archived: str | None = None  # where the whole log was saved
    lock: threading.Lock = field(default_factory=threading.Lock)

    def started_as(self, proc: subprocess.Popen[bytes], log: tempfile._TemporaryFileWrapper[bytes]) -> None:
        self.proc, self.log = proc, log

    def took(self, chunk: bytes) -> None:
        """`chunk` arrived: kept until read, and in the log up to `ARCHIVE_CAP`."""
        with self.lock:
            self.unread.write(chunk)
            self.printed += len(chunk)
            if self.log is not None and self.printed <= ARCHIVE_CAP:
                self.log.write(chunk)

    def ended(self, code: int) -> None:
        with self.lock:
            self.exit_code = None if self.stopped else code

    def stopping(self) -> None:
        with self.lock:
            self.stopped = True

    def take_unread(self, spans: Spans | None) -> str:
        """What was printed since the last read (head and tail of it), and start anew."""
        with self.lock:
            text = self.unread.text(spans)
            self.unread = HeadTail()
        return text

    def archive_log(self, save: Callable[[str, str], str] | None) -> None:
        """Save the whole log (to `save`), close it, and mark the command done."""
        log = self.log
        if log is not None:
            with contextlib.suppress(OSError, ValueError):
                log.flush()
                log.seek(0)
                text = log.read().decode("utf-8", "replace")
                if self.printed > ARCHIVE_CAP:
                    text += (
                        f"\n[... the log went on for {self.printed - ARCHIVE_CAP:,} more bytes, not kept]\n"
                    )
                if save is not None:
                    self.archived = save(f"background {self.shell_id}: {self.command}", text)
            with contextlib.suppress(OSError):
                log.close()
        self.done.set()

    def state(self) -> ShellState:
        with self.lock:
            return ShellState(
                self.shell_id,
                self.command,
                not self.done.is_set(),
                self.exit_code,
                self.stopped,
                self.started,
                self.printed,
            )


class BackgroundShells:
    """The session's background commands. `save` writes a finished command's whole log to the
    archive ((label, text) -> the path the model is told); `spans` finds secrets (no cut in one)."""

    def __init__(
        self,
        save: Callable[[str, str], str] | None = None,
        spans: Spans | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._save = save
        self._spans = spans
        self._clock = clock
        self._shells: dict[str, BackgroundShell] = {}
        self._count = 0
        self._lock = threading.Lock()
        self._on_change: Callable[[list[ShellState]], None] | None = None

    def watch(self, on_change: Callable[[list[ShellState]], None]) -> None:
        """Call `on_change` with every command's state after one starts or ends (the session logs
        which run, so a session resumed after the agent died can say which ended with it)."""
        self._on_change = on_change

    def _changed(self) -> None:
        if self._on_change is not None:
            with contextlib.suppress(Exception):  # a log that cannot be written must not stop a command
                self._on_change(self.states())

    # -- starting ----------------------------------------------------------

    def start(self, command: str, cwd: Path, sandbox: Confinement | None = None) -> BackgroundShell:
        """Start `command`; raises OSError (it could not start) or RuntimeError (too many run)."""
        with self._lock:
            running = sum(1 for s in self._shells.values() if not s.done.is_set())
            if running >= MAX_SHELLS:
                raise RuntimeError(
                    f"{running} background commands are running, the most there may be: stop one "
                    "with kill_shell first"
                )
            self._count += 1
            shell = BackgroundShell(f"bg{self._count}", command, self._clock())
            self._shells[shell.shell_id] = shell
        ready = threading.Event()
        failure: list[BaseException] = []
        thread = threading.Thread(
            target=self._run,
            args=(shell, cwd, sandbox, ready, failure),
            name=f"background-{shell.shell_id}",
            daemon=True,
        )
        thread.start()
        ready.wait(_START_WAIT)
        if failure:
            with self._lock:
                self._shells.pop(shell.shell_id, None)
            raise OSError(f"the command could not start: {failure[0]}")
        self._changed()
        return shell

    def _run(
        self,
        shell: BackgroundShell,
        cwd: Path,
        sandbox: Confinement | None,
        ready: threading.Event,
        failure: list[BaseException],
    ) -> None:
        env = dict(os.environ)
        env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
        marker = children.new_marker()
        env[children.MARKER_VAR] = marker
        argv = ["bash", "-c", shell.command]
        try:
            if sandbox is not None:
                launch = sandbox.launch(argv, cwd, env)
                argv, env = launch.argv, launch.env
            log = tempfile.NamedTemporaryFile(prefix="agent-bg-", suffix=".log")  # noqa: SIM115 (kept open)
            proc = children.popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        except BaseException as exc:
            children.withdraw(marker)
            failure.append(exc)
            shell.done.set()
            ready.set()
            return
        children.register(proc.pid, marker)
        shell.started_as(proc, log)
        ready.set()
        try:
            self._read(shell, proc)
        finally:
            children.unregister(proc.pid)
            shell.archive_log(self._save)
            self._changed()

    def _read(self, shell: BackgroundShell, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, CHUNK_BYTES)
            except OSError:
                break
            if not chunk:
                break
            shell.took(chunk)
        proc.stdout.close()
        shell.ended(proc.wait())

    # -- reading and stopping ------------------------------------------------

    def get(self, shell_id: str) -> BackgroundShell | None:
        with self._lock:
            return self._shells.get(shell_id.strip())

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._shells)

    def read(self, shell_id: str) -> tuple[str, ShellState] | None:
        """What `shell_id` printed since the last read, and its state; None for an unknown id."""
        shell = self.get(shell_id)
        if shell is None:
            return None
        return shell.take_unread(self._spans), shell.state()

    def stop(self, shell_id: str, grace: float = KILL_GRACE_SECONDS) -> ShellState | None:
        """Stop a command (TERM to its group, KILL after `grace`); its state after; None if unknown."""
        shell = self.get(shell_id)
        if shell is None:
            return None
        proc = shell.proc
        if proc is not None and not shell.done.is_set():
            shell.stopping()
            children.kill_group(proc.pid, proc.poll, grace)
            shell.done.wait(grace + 10.0)  # the reader saves the log and marks it done
        return shell.state()

    def states(self) -> list[ShellState]:
        with self._lock:
            shells = list(self._shells.values())
        return [s.state() for s in shells]

    def running(self) -> list[ShellState]:
        return [s for s in self.states() if s.running]

    def close(self, grace: float = KILL_GRACE_SECONDS) -> list[ShellState]:
        """Stop every command still running (the session ends); the ones that were stopped."""
        stopped = []
        for state in self.running():
            after = self.stop(state.shell_id, grace)
            if after is not None:
                stopped.append(after)
        return stopped


def running_record(states: list[ShellState]) -> dict[str, object]:
    """What the session log keeps: the commands running now, by id and command line."""
    return {"running": [{"id": s.shell_id, "command": s.command} for s in states if s.running]}


def died_with(records: Sequence[LogRecord]) -> list[tuple[str, str]]:
    """The commands an earlier run of this session left running when it ended (its log's last
    background record): (id, command) pairs."""
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    running = last.data.get("running") if last is not None else None
    if not isinstance(running, list):
        return []
    return [
        (str(item.get("id")), str(item.get("command")))
        for item in running
        if isinstance(item, dict) and isinstance(item.get("command"), str)
    ]


def died_notice(records: Sequence[LogRecord]) -> str | None:
    """The line that says which commands an earlier run of this session left when it ended (each
    made safe for a terminal and cut to 80 characters); None when it left none."""
    died = died_with(records)
    if not died:
        return None
    shown = "; ".join(f"{i}: {' '.join(visible(c).split())[:80]}" for i, c in died)
    return f"background commands that ended with the earlier session: {shown}"

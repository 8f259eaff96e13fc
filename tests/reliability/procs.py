"""Starting the agent in the background (headless, or the REPL on a pseudo-terminal) and finding
the commands it started: live processes by exact command line, read from /proc."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e import agent_cmd

_tags = itertools.count(700 + os.getpid() % 100 * 40)
_tags_lock = threading.Lock()


def new_tag() -> str:
    """A number no other run uses: `sleep <tag>` then names one case's command."""
    with _tags_lock:
        return str(next(_tags))


def processes(*argv: str) -> list[int]:
    """Live processes whose command line is exactly `argv`."""
    want = [a.encode() for a in argv]
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")[:-1]
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmd == want and state not in (b"Z", b"X"):
            found.append(int(pid))
    return found


def cpu_seconds(pid: int) -> float | None:
    """The processor time `pid` has used (user and system, all its threads); None once it is reaped.
    A zombie (exited, not yet waited for) still tells its total."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime and stime


def exited(pid: int) -> bool:
    """Whether `pid` has exited (a zombie or gone): its processor time is then final."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def wait_for(check: Callable[[], object], timeout: float = 120.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return False


def start_headless(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """`agent ARGS` in the background, its output piped (read it with `communicate`)."""
    return subprocess.Popen(
        agent_cmd(*args),
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def spawn_repl(project: Path, env: dict[str, str], timeout: float = 90) -> Any:
    """The REPL on a pseudo-terminal (a `pexpect.spawn`)."""
    import pexpect

    return pexpect.spawn(
        sys.executable,
        ["-c", "from agent_cli.cli import main; main()"],
        cwd=str(project),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=timeout,
    )


# What a REPL on a pseudo-terminal asks of its terminal (the cursor's position), and the escapes
# a test strips to read the screen's text.
CPR_REQUEST = re.compile(re.escape("\x1b[6n"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def expect(child: Any, pattern: object) -> str:
    """`child.expect(pattern)`, answering the cursor-position requests a terminal would answer;
    the text that came before the match, escapes removed."""
    seen = []
    while child.expect([CPR_REQUEST, pattern]) == 0:
        seen.append(child.before)
        child.send("\x1b[1;1R")
    seen.append(child.before)
    return ANSI.sub("", "".join(seen))

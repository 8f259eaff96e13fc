"""Finding the commands an agent started: live processes by exact command line, read from /proc."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable

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


def wait_for(check: Callable[[], object], timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return False

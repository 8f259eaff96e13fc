"""The session's bound on processes: `pids.max` on a cgroup that holds the agent and everything it
starts, so a fork bomb is refused there (`fork` fails with EAGAIN) instead of at the machine's limit.

It binds root too, which RLIMIT_NPROC does not: the kernel exempts the real user 0 from that limit,
and bubblewrap maps the sandbox's user to the agent's, so as root the `ulimit -u` the sandbox sets
inside holds nothing. Where the bound goes, best first (`apply`, once, when the session's container
is chosen, `tools/containment.py`):

- the session cgroup itself, where it has the pids controller: cgroup v2 with `pids` enabled for
  it by its parent (enabled here when the parent offers it and lets us), or cgroup v1's `pids`
  hierarchy when that is the container;
- else a cgroup of its own in cgroup v1's `pids` hierarchy (a hybrid system, whose unified
  hierarchy has no controllers: this machine), named as the session cgroup, which the agent joins
  too (a process is in one cgroup of each hierarchy); at the end the agent leaves it and it is
  removed (`release`), and one left by an agent killed outright is swept by the next;
- else nothing: `describe` says so. Then a user's fork bomb inside the sandbox stops at its
  RLIMIT_NPROC; root's does not stop before the machine's limits (`kernel.pid_max`,
  `kernel.threads-max`): only the command's timeout ends it, and the sandbox's PID namespace takes
  every process of it down at once.

The count is of tasks (threads too), the agent's own among them: the bound is at least `FLOOR`
above what the agent already runs. The watchdog leaves the cgroup as it starts (`home_procs`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass

from agent_cli.tools import cgroups

__all__ = ["DEFAULT_MAX", "FLOOR", "Bound", "apply", "bound", "configure", "release"]

DEFAULT_MAX = 1024  # `[sandbox] max_processes`: tasks the session may hold, the agent's included
FLOOR = 64  # the least room above the agent's own tasks, whatever the config says


@dataclass(frozen=True, slots=True)
class Bound:
    """Where the session's processes are bounded: the `pids.max` file and its value (None: nowhere),
    and the cgroup made for it alone (v1's pids hierarchy), which the agent must leave at the end."""

    limit_file: str | None = None
    limit: int = 0
    own: cgroups.Cgroup | None = None

    def describe(self) -> str:
        if self.limit_file is None:
            return "processes unbounded (no pids controller here; a user's RLIMIT_NPROC in the sandbox)"
        return f"at most {self.limit} processes ({self.limit_file})"


_lock = threading.Lock()
_wanted = DEFAULT_MAX
_bound: Bound | None = None


def configure(limit: int) -> None:
    """The bound the session wants (`[sandbox] max_processes`); applied when the container is chosen,
    or at once if it already was."""
    global _wanted
    with _lock:
        _wanted = limit
        if _bound is not None and _bound.limit_file is not None:
            _write(_bound.limit_file, str(_room(limit)))


def bound() -> Bound | None:
    """The bound applied (None: the container is not chosen yet)."""
    with _lock:
        return _bound


def home_procs() -> str | None:
    """The `cgroup.procs` the watchdog moves to, out of the bound's own cgroup (None: there is none)."""
    with _lock:
        return None if _bound is None or _bound.own is None else _bound.own.home_procs_file


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError:
        return False
    return True


def _tasks() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _room(limit: int) -> int:
    return max(limit, _tasks() + FLOOR)


def _on_session(session: cgroups.Cgroup, limit: int) -> str | None:
    """`pids.max` of the session cgroup itself, set; None where it has no pids controller."""
    file = os.path.join(session.path, "pids.max")
    if session.kind == "cgroup2" and not os.path.exists(file):
        parent = os.path.dirname(session.path)
        with contextlib.suppress(OSError), open(os.path.join(parent, "cgroup.controllers")) as f:
            if "pids" in f.read().split():
                _write(os.path.join(parent, "cgroup.subtree_control"), "+pids")
    if session.kind in ("cgroup2", "pids") and _write(file, str(limit)):
        return file
    return None


def _own_cgroup(mountinfo: str, own: str, name: str, limit: int) -> Bound | None:
    """A cgroup of v1's pids hierarchy for the bound alone, the agent moved in, `pids.max` set."""
    for kind, parent in cgroups.places(mountinfo, own):
        if kind != "pids":
            continue
        made = cgroups.make("pids", parent, name)
        if made is None:
            return None
        cgroups.sweep(made)
        file = os.path.join(made.path, "pids.max")
        if _write(file, str(limit)) and _write(made.procs_file, str(os.getpid())):
            return Bound(file, limit, made)
        cgroups.remove(made, 0)
    return None


def apply(session: cgroups.Cgroup | None) -> Bound:
    """Bound the session's processes (once: later calls give the first answer)."""
    global _bound
    with _lock:
        if _bound is not None:
            return _bound
        limit = _room(_wanted)
        found = Bound()
        file = _on_session(session, limit) if session is not None else None
        if file is not None:
            found = Bound(file, limit)
        else:
            try:
                with open("/proc/self/mountinfo") as f:
                    mountinfo = f.read()
                with open("/proc/self/cgroup") as f:
                    own = f.read()
            except OSError:
                mountinfo = own = ""
            name = cgroups.owner_name(os.getpid())
            found = _own_cgroup(mountinfo, own, name, limit) or Bound()
        _bound = found
        return found


def release(wait: float) -> None:
    """The agent ends: it leaves the bound's own cgroup, which is removed once its last member is
    gone (the session's cgroup was killed whole before this, so that is soon)."""
    with _lock:
        own = _bound.own if _bound is not None else None
    if own is None:
        return
    if _write(own.home_procs_file, str(os.getpid())):
        cgroups.remove(own, wait)

"""A session's cgroup: where every process the agent starts is put, so that all of them end with it.

A *session cgroup* is a directory `agent-cli-<pidns>-<pid>-<start>` made inside the agent's own
cgroup of one hierarchy (named after the agent: its pid namespace, pid and start time, so a later
agent can tell whether its owner still runs). The *places* a session cgroup can go, best first:

- `cgroup2`: the unified hierarchy, where the agent may write to its own cgroup (root, or a user
  inside a subtree systemd delegated: `user@UID.service/...`). Ended by `cgroup.kill` (Linux 5.14),
  else by freezing it (`cgroup.freeze`), killing each member, thawing.
- `freezer`: cgroup v1's freezer hierarchy: frozen, each member killed, thawed.
- `pids`: cgroup v1's pids hierarchy: `pids.max` set to 0 (no member can fork any more), then each
  member killed until none is left.

The agent moves itself into its session cgroup once, at its first command, and every process it
starts from then on is born inside (a child is in its parent's cgroup from its first instruction):
nothing a command starts, however it detaches (`setsid`, a double fork, `env -i`), is outside, and
the cost per command is nothing. At the end the agent moves back out and the cgroup is killed whole;
each way of killing is race-free (no member can start one we miss).

`sweep` removes the session cgroups of earlier agents that are gone (one killed together with its
watchdog), killing what they still hold; the cgroups of agents in another pid namespace are left
alone (we cannot tell whether their owner runs).

Standard library only: the watchdog (a plain `python -I -S` process) uses it too. Linux only;
elsewhere `places` finds nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass

__all__ = [
    "KINDS",
    "PREFIX",
    "Cgroup",
    "kill",
    "make",
    "members",
    "owner_name",
    "places",
    "remove",
    "signal_members",
    "start_time",
    "sweep",
]

PREFIX = "agent-cli-"
KINDS = ("cgroup2", "freezer", "pids")
FREEZE_WAIT = 2.0  # seconds a v1 freezer may take to reach FROZEN


@dataclass(frozen=True, slots=True)
class Cgroup:
    """One session cgroup: its directory and its hierarchy's kind (one of `KINDS`)."""

    path: str
    kind: str

    @property
    def procs_file(self) -> str:
        return os.path.join(self.path, "cgroup.procs")

    @property
    def home_procs_file(self) -> str:
        """The `cgroup.procs` of the cgroup it was made in (where the agent came from)."""
        return os.path.join(os.path.dirname(self.path), "cgroup.procs")


def _unescape(field: str) -> str:
    """A mountinfo field with its octal escapes (`\\040` for a space) undone."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def places(mountinfo: str, own_cgroups: str) -> list[tuple[str, str]]:
    """Where a session cgroup could go, best first: `(kind, directory)` pairs, each directory the
    agent's own cgroup in a mounted hierarchy. `mountinfo` is /proc/self/mountinfo's text,
    `own_cgroups` /proc/self/cgroup's. Pure: whether a place is writable is for `make` to find."""
    own: dict[str, str] = {}
    for line in own_cgroups.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if not number.isdigit() or not path.startswith("/"):
            continue
        for name in controllers.split(",") if controllers else ["cgroup2"]:
            own.setdefault(name, path)
    mounts: dict[str, str] = {}
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        root, point, fstype, options = _unescape(fields[3]), _unescape(fields[4]), tail[0], tail[2]
        names = ["cgroup2"] if fstype == "cgroup2" else options.split(",") if fstype == "cgroup" else []
        for name in names:
            mine = own.get(name)
            if name not in KINDS or name in mounts or mine is None:
                continue
            # The mount shows the hierarchy from `root` down: our cgroup must lie below it.
            if root != "/" and mine != root and not mine.startswith(root.rstrip("/") + "/"):
                continue
            inside = mine[len(root.rstrip("/")) :] if root != "/" else mine
            mounts[name] = os.path.normpath(point + "/" + inside.removesuffix(" (deleted)"))
    return [(kind, mounts[kind]) for kind in KINDS if kind in mounts]


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ("" if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def _pid_namespace(pid: int | str = "self") -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid").partition("[")[2].rstrip("]")
    except OSError:
        return ""


def owner_name(pid: int) -> str:
    """The session cgroup's name for the agent `pid`."""
    return f"{PREFIX}{_pid_namespace()}-{pid}-{start_time(pid)}"


def make(kind: str, parent: str, name: str) -> Cgroup | None:
    """Make the session cgroup `name` in `parent`; None where it cannot be made or joined."""
    path = os.path.join(parent, name)
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    except OSError:
        return None
    cgroup = Cgroup(path, kind)
    # Moving a process in also needs write access where it comes from (cgroup2: the common ancestor).
    if not (
        os.access(cgroup.procs_file, os.W_OK) and os.access(os.path.join(parent, "cgroup.procs"), os.W_OK)
    ):
        remove(cgroup, 0)
        return None
    return cgroup


def _tree(path: str) -> list[str]:
    """`path` and every cgroup below it, deepest first."""
    found: list[str] = []
    for top, dirs, _ in os.walk(path, topdown=False, onerror=lambda _: None):
        found.extend(os.path.join(top, d) for d in dirs)
    return [*found, path]


def members(path: str) -> list[int]:
    """The processes in the cgroup at `path` and below it."""
    pids: list[int] = []
    for directory in _tree(path):
        with contextlib.suppress(OSError), open(os.path.join(directory, "cgroup.procs"), "rb") as f:
            pids.extend(int(p) for p in f.read().split())
    return pids


def signal_members(cgroup: Cgroup, sig: int) -> None:
    for pid in members(cgroup.path):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError:
        return False
    return True


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def kill(cgroup: Cgroup) -> None:
    """SIGKILL everything in the cgroup and below it, none able to fork past it."""
    path, kind = cgroup.path, cgroup.kind
    if kind == "cgroup2" and _write(os.path.join(path, "cgroup.kill"), "1"):
        return
    if kind == "cgroup2":  # before Linux 5.14: freeze, kill, thaw
        frozen = _write(os.path.join(path, "cgroup.freeze"), "1")
        signal_members(cgroup, signal.SIGKILL)
        if frozen:
            _write(os.path.join(path, "cgroup.freeze"), "0")
    elif kind == "freezer":
        state = os.path.join(path, "freezer.state")
        if _write(state, "FROZEN"):
            end = time.monotonic() + FREEZE_WAIT
            while _read(state) == "FREEZING" and time.monotonic() < end:
                time.sleep(0.01)
        signal_members(cgroup, signal.SIGKILL)  # a frozen process dies as it thaws
        _write(state, "THAWED")
    else:
        _write(os.path.join(path, "pids.max"), "0")  # limits the subtree: nothing forks any more
    # Whatever escaped a freeze that failed (or a pids cgroup): kill until none is left.
    end = time.monotonic() + FREEZE_WAIT
    while members(path) and time.monotonic() < end:
        signal_members(cgroup, signal.SIGKILL)
        time.sleep(0.01)


def remove(cgroup: Cgroup, wait: float) -> bool:
    """Remove the cgroup and those below it, waiting up to `wait` seconds for the last members to
    exit; whether it is gone."""
    end = time.monotonic() + wait
    while True:
        for directory in _tree(cgroup.path):
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        if not os.path.exists(cgroup.path):
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)


def _stale(name: str, namespace: str) -> bool:
    """Whether the session cgroup `name` belongs to an agent of our pid namespace that is gone."""
    parts = name[len(PREFIX) :].split("-")
    if len(parts) != 3 or parts[0] != namespace or not parts[1].isdigit():
        return False
    return start_time(int(parts[1])) != parts[2]


def sweep(cgroup: Cgroup) -> int:
    """Kill and remove the session cgroups beside `cgroup` whose agents are gone; how many."""
    parent = os.path.dirname(cgroup.path)
    namespace = _pid_namespace()
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if entry.name.startswith(PREFIX) and entry.is_dir() and _stale(entry.name, namespace):
                old = Cgroup(entry.path, cgroup.kind)
                kill(old)
                removed += remove(old, 1.0)
    return removed

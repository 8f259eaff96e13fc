"""The session's process container: what every command the agent starts is put in, so that when the
agent ends, everything those commands started ends too, daemons included.

The bash tool, `!command`, hooks and MCP servers over stdio all start their processes through
`tools/children.py`, which asks here how. The container is chosen once, at the first command, by
what the system offers (measured and explained in docs/processes.md):

- `cgroup`: a session cgroup (`tools/cgroups.py`: cgroup v2 where the agent may move itself,
  else v1's freezer or pids hierarchy). The agent moves itself in, once; every child is then born
  inside, so nothing it starts can be outside, at no cost per command (a child that moved itself in
  between fork and exec cost 2-6 ms per command here: docs/processes.md). The watchdog is moved out
  as it starts. At the end the agent moves back out and kills the cgroup whole; if the agent was
  killed outright, the watchdog does. Stale cgroups of earlier agents are removed when one is made.
- `subreaper` (Linux with no cgroup the agent may use): the agent becomes a child subreaper
  (`PR_SET_CHILD_SUBREAPER`), so what a command leaves behind (`setsid ... &`, a double fork)
  becomes the agent's child instead of init's, and at the end every descendant is killed. If the
  agent is killed outright, its descendants go to init: the watchdog then kills what carries the
  session's marker in its environment; what cleared its environment (`env -i`) escapes.
- `none` (macOS and elsewhere): the commands' process groups and markers, while they run.

`AGENT_CLI_CONTAINER` (cgroup2, freezer, pids, subreaper or none) chooses where to start; a choice
the system refuses falls to the next one. Once chosen, the session's processes are bounded
(`tools/process_cap.py`: `pids.max`, so a fork bomb stops there, root's too).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from agent_cli.tools import cgroups, process_cap

__all__ = [
    "ENV_VAR",
    "Container",
    "children_of",
    "chosen",
    "current",
    "descendants",
    "leave",
    "libc_prctl",
    "outside",
    "reap_adopted",
]

ENV_VAR = "AGENT_CLI_CONTAINER"
CHOICES = ("cgroup2", "freezer", "pids", "subreaper", "none")
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True, slots=True)
class Container:
    """How this session holds what its commands start: `kind` is cgroup, subreaper or none."""

    kind: str
    cgroup: cgroups.Cgroup | None = None

    def describe(self) -> str:
        if self.cgroup is not None:
            return f"a {self.cgroup.kind} cgroup ({self.cgroup.path})"
        if self.kind == "subreaper":
            return "the agent as child subreaper (no cgroup the agent may use)"
        return "process groups only (no cgroup, no subreaper on this system)"


_lock = threading.Lock()
_chosen: Container | None = None
_left = False  # the agent has left its session cgroup (it is ending)


def current(env: Mapping[str, str] | None = None) -> Container:
    """The session's container, chosen at the first call (which, with a cgroup, moves the agent
    into it: from then on every child starts inside, at no cost per child)."""
    global _chosen
    with _lock:
        if _chosen is None:
            _chosen = _choose(os.environ if env is None else env)
            process_cap.apply(_chosen.cgroup)
        return _chosen


def chosen() -> Container | None:
    """The container if one was chosen (no command ran: None)."""
    with _lock:
        return _chosen


def leave() -> bool:
    """The agent leaves its session cgroup (back to the cgroup it came from), so the cgroup can be
    killed whole without it; whether it is outside (True where there is no cgroup)."""
    global _left
    with _lock:
        if _chosen is None or _chosen.cgroup is None or _left:
            return True
        _left = _write_pid(_chosen.cgroup.home_procs_file, os.getpid())
        return _left


def outside() -> Callable[[], None] | None:
    """A `preexec_fn` that moves the child out of the session cgroup and the process bound's own
    (the watchdog, which must outlive the one and is no member of the other), else None."""
    container = current()
    homes = [] if container.cgroup is None else [container.cgroup.home_procs_file]
    capped = process_cap.home_procs()
    homes += [capped] if capped is not None else []
    if not homes:
        return None

    def leave_cgroup() -> None:  # in the child between fork and exec: system calls only
        for home in homes:
            fd = os.open(home, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # 0: the writer itself
            finally:
                os.close(fd)

    return leave_cgroup


def _write_pid(procs_file: str, pid: int) -> bool:
    try:
        fd = os.open(procs_file, os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, str(pid).encode())
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _choose(env: Mapping[str, str]) -> Container:
    if not sys.platform.startswith("linux"):
        return Container("none")
    wanted = env.get(ENV_VAR, "").strip().lower()
    wanted = wanted if wanted in CHOICES else ""
    kinds = CHOICES[CHOICES.index(wanted) if wanted else 0 :]
    cgroup = _join_cgroup([k for k in kinds if k in cgroups.KINDS])
    if cgroup is not None:
        cgroups.sweep(cgroup)
        return Container("cgroup", cgroup)
    if "subreaper" in kinds and _become_subreaper():
        return Container("subreaper")
    return Container("none")


def _join_cgroup(kinds: list[str]) -> cgroups.Cgroup | None:
    """Make the session cgroup in the first place that lets the agent move into it, and move in."""
    try:
        with open("/proc/self/mountinfo") as f:
            mountinfo = f.read()
        with open("/proc/self/cgroup") as f:
            own = f.read()
    except OSError:
        return None
    name = cgroups.owner_name(os.getpid())
    for kind, parent in cgroups.places(mountinfo, own):
        if kind not in kinds:
            continue
        made = cgroups.make(kind, parent, name)
        if made is None:
            continue
        if _write_pid(made.procs_file, os.getpid()):  # the test that counts: may we move a process?
            return made
        cgroups.remove(made, 0)
    return None


@functools.cache
def libc_prctl() -> Callable[..., int] | None:
    """The C library's `prctl` (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)  # glibc; elsewhere the C library's own name
    except OSError:
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        except OSError:
            return None
    prctl: Callable[..., int] | None = getattr(libc, "prctl", None)
    return prctl


def _become_subreaper() -> bool:
    prctl = libc_prctl()
    if prctl is None:
        return False
    import ctypes

    args = (ctypes.c_int(_PR_SET_CHILD_SUBREAPER), *(ctypes.c_ulong(v) for v in (1, 0, 0, 0)))
    return prctl(*args) == 0


def _parents() -> dict[int, int]:
    """Every live process's parent (pid -> ppid), from /proc."""
    table: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] not in (b"Z", b"X"):
                table[int(entry.name)] = int(fields[1])
    return table


def children_of(pid: int | str = "self") -> list[int]:
    """The process's children, from its threads' `children` files (Linux 3.5; a few reads, where a
    scan of /proc reads every process); empty where the files are missing."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(os.path.join(task.path, "children"), "rb") as f:
                found.extend(int(p) for p in f.read().split())
    return found


def descendants(root: int, spare: Iterable[int] = ()) -> list[int]:
    """The live processes below `root`, not counting `spare` and what is below them."""
    below: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        below.setdefault(ppid, []).append(pid)
    skip, found, todo = set(spare), [], list(below.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in skip:
            continue
        found.append(pid)
        todo.extend(below.get(pid, []))
    return found


def reap_adopted(spare: Iterable[int] = ()) -> int:
    """Reap this process's zombie children but `spare`: the orphans it adopted as subreaper and
    killed at the end (nothing else waits for them). Only at the end: during the session a zombie
    may be a child some `Popen` still means to wait for. How many were reaped."""
    me, skip, reaped = str(os.getpid()), set(spare), 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) in skip:
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] == b"Z" and fields[1].decode() == me:
                with contextlib.suppress(ChildProcessError, OSError):
                    reaped += os.waitpid(int(entry.name), os.WNOHANG)[0] != 0
    return reaped

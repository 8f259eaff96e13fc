"""The session's process container: what every command the agent starts is put in, so that when the
agent ends, everything those commands started ends too, daemons included.

The bash tool, `!command`, hooks and MCP servers over stdio all start their processes through
`tools/children.py`, which asks here how. The container is chosen once, at the first command, by
what the system offers (measured and explained in docs/processes.md):

- `cgroup`: a session cgroup (`tools/cgroups.py`: cgroup v2 where the agent may write, else v1's
  freezer or pids hierarchy). Each child joins it between fork and exec, so nothing it starts can be
  outside it; at the end it is killed whole, by the agent or, if the agent was killed outright, by
  the watchdog. Stale cgroups of earlier agents are removed when the session's is made.
- `subreaper` (Linux with no cgroup the agent may use): the agent becomes a child subreaper
  (`PR_SET_CHILD_SUBREAPER`), so what a command leaves behind (`setsid ... &`, a double fork)
  becomes the agent's child instead of init's, and at the end every descendant is killed. If the
  agent is killed outright, its descendants go to init: the watchdog then kills what carries the
  session's marker in its environment; what cleared its environment (`env -i`) escapes.
- `none` (macOS and elsewhere): the commands' process groups and markers, while they run.

`AGENT_CLI_CONTAINER` (cgroup2, freezer, pids, subreaper or none) forces a choice; a choice the
system refuses falls to the next one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from agent_cli.tools import cgroups

__all__ = ["ENV_VAR", "Container", "current", "descendants", "dropped", "libc_prctl", "reap_adopted", "wrap"]

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
_refused: set[str] = set()  # places a child could not join: never chosen again


def current(env: Mapping[str, str] | None = None) -> Container:
    """The session's container, chosen at the first call."""
    global _chosen
    with _lock:
        if _chosen is None:
            _chosen = _choose(os.environ if env is None else env)
        return _chosen


def dropped(container: Container) -> Container:
    """A child could not join `container`'s cgroup: choose again without it; the new container."""
    global _chosen
    with _lock:
        if container.cgroup is not None:
            _refused.add(container.cgroup.kind)
            cgroups.remove(container.cgroup, 0)
        if _chosen is None or _chosen == container:
            _chosen = _choose(os.environ)
        return _chosen


def _choose(env: Mapping[str, str]) -> Container:
    if not sys.platform.startswith("linux"):
        return Container("none")
    wanted = env.get(ENV_VAR, "").strip().lower()
    wanted = wanted if wanted in CHOICES else ""
    start = CHOICES.index(wanted) if wanted else 0
    kinds = [k for k in CHOICES[start:] if k not in _refused]
    cgroup = _make_cgroup([k for k in kinds if k in cgroups.KINDS]) if kinds and kinds[0] != "none" else None
    if cgroup is not None:
        cgroups.sweep(cgroup)
        return Container("cgroup", cgroup)
    if "subreaper" in kinds and _become_subreaper():
        return Container("subreaper")
    return Container("none")


def _make_cgroup(kinds: list[str]) -> cgroups.Cgroup | None:
    try:
        with open("/proc/self/mountinfo") as f:
            mountinfo = f.read()
        with open("/proc/self/cgroup") as f:
            own = f.read()
    except OSError:
        return None
    name = cgroups.owner_name(os.getpid())
    for kind, parent in cgroups.places(mountinfo, own):
        if kind in kinds:
            made = cgroups.make(kind, parent, name)
            if made is not None:
                return made
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


def wrap(command: str, args: Iterable[str], env: Mapping[str, str]) -> tuple[str, list[str]]:
    """`command args` for a spawner we do not control (the MCP SDK): with a session cgroup, a shell
    that joins it, then `exec`s the command (the same process: it is inside before it starts).
    Unchanged where there is no cgroup, or the command is not found (its spawner says so)."""
    container = current()
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    sh = shutil.which("sh", path=os.defpath) or "/bin/sh"
    if container.cgroup is None or found is None:
        return command, list(args)
    join = 'echo 0 > "$0" 2>/dev/null; exec "$@"'
    return sh, ["-c", join, container.cgroup.procs_file, found, *args]


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

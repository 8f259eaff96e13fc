"""The bubblewrap command line for a `SandboxPolicy`: a pure function of the policy, the command and
what each hidden path is (a directory, a file, or absent), which the caller looks up.

The mounts, in order (a later mount covers an earlier one, so the hidden paths come last and stay
hidden inside the project too):

    --ro-bind / /             the whole file system, read-only (bwrap remounts every submount too)
    --dev /dev, --proc /proc  a private /dev, and a /proc of the sandbox's own PID namespace (so
                              /proc/self/root is the sandbox's root, and /proc/1 is its own init)
    --bind P P                workspace-write: the project, the temporary directory, the user's paths
    --tmpfs /tmp              read-only: a private, empty temporary directory instead
    --bind D D, --ro-bind R R a read-only path inside a writable one (auto mode's protected files),
                              its folder bound onto itself first so that it cannot be renamed away
    --tmpfs D --remount-ro D  a hidden directory: empty and read-only
    --ro-bind /dev/null F     a hidden file: empty

bwrap binds by path after resolving it, so a symlink planted in the project that points outside
leads to the read-only (or hidden) outside: the mount table, not the link, decides.

The process: `--unshare-all` (user, IPC, PID, UTS, cgroup, network) and `--share-net` back only when
the policy opens the network; `--disable-userns` (no nested user namespace inside);
`--die-with-parent` (the agent dies, so does the sandbox); the PID namespace ends with its first
process, so a daemon a command left behind dies when the command returns; `--new-session` (a new
session: TIOCSTI cannot push keys into the user's terminal; the bash tool already runs commands in a
session of their own, so no job control is lost); `--cap-drop ALL` (as root, no capability survives:
no remount, no raw socket, no ptrace).

The command starts under `sh -c 'ulimit -u N || ulimit -p N; exec "$@"'`: RLIMIT_NPROC bounds a
fork bomb for a user (counted in the sandbox's user namespace on kernels since 5.14, across the
user's processes before); root is exempt from that limit, so there the session's cgroup
(`pids.max`) is the bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from agent_cli.sandbox.policy import SandboxPolicy

__all__ = ["PathKind", "bwrap_argv"]

PathKind = Literal["dir", "file"] | None


def bwrap_argv(
    policy: SandboxPolicy,
    argv: Sequence[str],
    cwd: Path,
    *,
    bwrap: str,
    kind: Callable[[Path], PathKind],
) -> list[str]:
    """`argv` run by `bwrap` under `policy`, started in `cwd`. `kind` says what a path is now (a
    writable path or hidden path that is absent is left out: nothing there to bind or to hide)."""
    if not policy.confined:
        return list(argv)
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if policy.mode == "workspace-write":
        for path in (policy.project, policy.tmp, *policy.writable):
            if kind(path) is not None:
                out += ["--bind", str(path), str(path)]
    else:  # read-only: a private temporary directory, nothing else writable
        out += ["--tmpfs", str(policy.tmp)]
    # The folder holding a read-only path (`.git` for `.git/config`) is bound onto itself first: a
    # mount point cannot be renamed or removed, so `mv .git x && mkdir .git` cannot put a new one,
    # with hooks of the command's own, in its place.
    holders = [p.parent for p in policy.read_only if p.parent != policy.project and kind(p) is not None]
    for path in dict.fromkeys(holders):
        if kind(path) == "dir":
            out += ["--bind", str(path), str(path)]
    for path in policy.read_only:  # after the writable binds, which they cover; before the hidden
        if kind(path) is not None:
            out += ["--ro-bind", str(path), str(path)]
    for path in policy.hidden:
        what = kind(path)
        if what == "dir":
            out += ["--tmpfs", str(path), "--remount-ro", str(path)]
        elif what == "file":
            out += ["--ro-bind", "/dev/null", str(path)]
    # A user namespace always (not only "where it can"), so that --disable-userns can hold: no nested
    # namespace, in which a command would be root enough to mount over what it sees.
    out += ["--unshare-all", "--unshare-user", "--disable-userns"]
    if policy.network:
        out += ["--share-net"]
    out += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--chdir", str(cwd), "--"]
    # RLIMIT_NPROC set inside, by the shell that then becomes the command: a fork bomb stops there.
    return [*out, "/bin/sh", "-c", _LIMIT.format(n=policy.max_processes), "sh", *argv]


# dash (Debian's sh) names it -p, bash and busybox -u.
_LIMIT = 'ulimit -u {n} 2>/dev/null || ulimit -p {n} 2>/dev/null; exec "$@"'

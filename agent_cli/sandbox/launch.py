"""A command made sandboxed: the argv and environment to start, from a policy and the probe's bwrap.

The one impure step before `bwrap.bwrap_argv`: it looks at the disk (what each writable and hidden
path is now, and where a symlinked one really leads, since a mount lands on the link's target), adds
the ssh-agent socket the environment names to the hidden paths, and hands the pure builder the
answers. The caller starts the result as it starts any command (its own process group, its cgroup,
its watchdog): nothing here spawns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.sandbox.bwrap import PathKind, bwrap_argv
from agent_cli.sandbox.policy import SandboxPolicy, agent_sockets, child_env

__all__ = ["Launch", "path_kind", "sandboxed"]


@dataclass(frozen=True, slots=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


def path_kind(path: Path) -> PathKind:
    """"dir", "file" or None (absent, or not to be looked at): what a mount over `path` needs."""
    try:
        if path.is_dir():
            return "dir"
        return "file" if path.exists() else None
    except OSError:
        return None


def _real(path: Path) -> Path:
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError):  # a symlink loop: keep the path as written
        return path


def _read_only(policy: SandboxPolicy) -> tuple[Path, ...]:
    """The read-only paths as mounted: where each leads (a mount lands on a link's target), and only
    one that leads inside a writable path and holds none. Elsewhere it is read-only already, and a
    link a command planted (`.vscode -> /`, `.agent -> .`) must not make a mount that covers the
    sandbox's own or a whole writable path."""
    if policy.mode != "workspace-write":
        return ()  # nothing but a private /tmp is writable
    roots = [_real(p) for p in (policy.project, policy.tmp, *policy.writable)]
    reals = (_real(p) for p in policy.read_only)
    kept = (
        r
        for r in reals
        if any(r.is_relative_to(w) for w in roots) and not any(w.is_relative_to(r) for w in roots)
    )
    return tuple(dict.fromkeys(kept))


def sandboxed(
    policy: SandboxPolicy, argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, bwrap: str
) -> Launch:
    """What to start for `argv` in `cwd` under `policy` (mode "off": the command and `env` as given)."""
    if not policy.confined:
        return Launch(list(argv), dict(env))
    # Both the path as written and where it leads are hidden: a mount follows the link to its target,
    # and the target is what must not be read (it may be reached by another name).
    every = (*policy.hidden, *agent_sockets(env))
    hidden = tuple(dict.fromkeys(p for path in every for p in (path, _real(path))))
    real = SandboxPolicy(
        mode=policy.mode,
        project=_real(policy.project),
        tmp=_real(policy.tmp),
        writable=tuple(_real(p) for p in policy.writable),
        network=policy.network,
        hidden=hidden,
        max_processes=policy.max_processes,
        read_only=_read_only(policy),
    )
    return Launch(bwrap_argv(real, argv, _real(cwd), bwrap=bwrap, kind=path_kind), child_env(env))

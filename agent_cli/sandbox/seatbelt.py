"""The macOS sandbox for a `SandboxPolicy`: a Seatbelt profile (SBPL) as text, and the
`sandbox-exec -p PROFILE -- argv` that runs a command under it. Pure; written and unit-tested here,
not yet run (no macOS machine in CI): docs/sandbox.md has the design and what is left to check.

The profile denies by default, then allows what a build needs: running and forking programs,
signals inside the sandbox, reading the whole file system but the hidden paths, writing the
project, the temporary directories and the user's paths (workspace-write) or only a private
temporary directory (read-only: the caller points TMPDIR at one), the system's services
(mach-lookup, sysctl reads, pseudo-terminals), and the network only when the policy opens it.
Seatbelt has no PID namespace: what a command leaves behind is the caller's to kill (its process
group), and no RLIMIT_NPROC beyond the caller's.

Paths are written as SBPL string literals (backslash and double quote escaped), and the later
rule wins in SBPL, so the hidden paths' denials come after the reads they cut into.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_cli.sandbox.policy import SandboxPolicy

__all__ = ["seatbelt_argv", "seatbelt_profile"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

_BASE = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm-read-data ipc-posix-shm-write-data ipc-posix-sem)
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
(allow file-read*)
(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")
  (regex #"^/dev/ttys[0-9]+$"))
"""


def _quote(path: Path) -> str:
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def seatbelt_profile(policy: SandboxPolicy, *, private_tmp: Path | None = None) -> str:
    """The SBPL profile for `policy`. `private_tmp`: read-only mode's own temporary directory."""
    lines = [_BASE.rstrip("\n")]
    if policy.mode == "workspace-write":
        roots = (
            policy.project,
            policy.tmp,
            Path("/private/tmp"),
            Path("/private/var/folders"),
            *policy.writable,
        )
        lines.append("(allow file-write* " + " ".join(f"(subpath {_quote(p)})" for p in roots) + ")")
    elif private_tmp is not None:
        lines.append(f"(allow file-write* (subpath {_quote(private_tmp)}))")
    if policy.hidden:
        # Both the directory and anything under it; a hidden file is its own subpath.
        lines.append(
            "(deny file-read* file-write* " + " ".join(f"(subpath {_quote(p)})" for p in policy.hidden) + ")"
        )
    if policy.network:
        lines.append("(allow network*)")
    else:
        # Unix sockets on the disk still work (a build's own daemons); nothing leaves by IP.
        lines.append("(allow network-outbound (remote unix-socket))")
    return "\n".join(lines) + "\n"


def seatbelt_argv(
    policy: SandboxPolicy, argv: Sequence[str], *, private_tmp: Path | None = None
) -> list[str]:
    """`argv` under sandbox-exec with `policy`'s profile ("off": the command as given)."""
    if not policy.confined:
        return list(argv)
    return [SANDBOX_EXEC, "-p", seatbelt_profile(policy, private_tmp=private_tmp), "--", *argv]

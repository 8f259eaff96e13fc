"""What confining one command costs to start: `true` run N times bare, under bubblewrap (the exact
command line `agent_cli.sandbox` builds, workspace-write), and under Landlock (applied between fork
and exec through ctypes: the kernel's own cost, no helper process), as root and as nobody.

Also says what each mechanism holds here: Landlock's ABI, whether bwrap and Landlock start as root
and as an unprivileged user (`setpriv --reuid=65534 --regid=65534 --clear-groups`).

    python benchmarks/sandbox_start.py [-n 200]

Prints the median and the 90th percentile per way, in milliseconds; docs/sandbox.md and
docs/performance.md hold a run's figures.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from agent_cli.sandbox.launch import sandboxed
from agent_cli.sandbox.policy import SandboxPolicy
from agent_cli.sandbox.probe import find_bwrap, probe

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# Landlock (linux/landlock.h): syscalls on x86_64 and aarch64 alike.
_CREATE, _ADD, _RESTRICT = 444, 445, 446
_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read file, read dir
_FS_ALL = (1 << 16) - 1  # every right up to ABI 5 (ioctl on devices)
_NET_ALL = (1 << 0) | (1 << 1)  # bind and connect TCP (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets, signals (ABI 6)


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32))


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi() -> int:
    return int(_libc.syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION)))


def landlock_preexec(writable: Sequence[str], abi: int) -> Callable[[], None]:
    """A preexec_fn: the whole tree readable and executable, `writable` writable, TCP closed."""
    fs = _FS_ALL if abi >= 5 else (1 << 15) - 1 if abi >= 3 else (1 << 14) - 1
    attr = _RulesetAttr(fs, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)

    def apply() -> None:
        size = ctypes.c_size_t(ctypes.sizeof(attr))
        fd = _libc.syscall(_CREATE, ctypes.byref(attr), size, ctypes.c_uint32(0))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        for path, rights in [("/", _FS_READ), *((w, fs) for w in writable)]:
            dfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            rule = _PathBeneath(rights, dfd)
            kind = ctypes.c_int(_RULE_PATH_BENEATH)
            if _libc.syscall(_ADD, ctypes.c_int(fd), kind, ctypes.byref(rule), 0) < 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule")
            os.close(dfd)
        if _libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if _libc.syscall(_RESTRICT, ctypes.c_int(fd), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        os.close(fd)

    return apply


def _noop() -> None:
    """A preexec_fn that does nothing: Python then forks (no vfork), as the Landlock rows must."""


def _times(argv: Sequence[str], n: int, preexec: Callable[[], None] | None = None) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(argv, check=True, preexec_fn=preexec, stdout=subprocess.DEVNULL)
        out.append((time.perf_counter() - start) * 1000)
    return out


def _line(name: str, times: list[float]) -> str:
    p90 = sorted(times)[int(len(times) * 0.9)]
    return f"{name:34} median {statistics.median(times):6.2f} ms   p90 {p90:6.2f} ms"


def _works(argv: Sequence[str], preexec: Callable[[], None] | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, preexec_fn=preexec, check=False)
    return "works" if done.returncode == 0 else f"fails: {(done.stderr.strip().splitlines() or ['?'])[-1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200)
    n = parser.parse_args().n
    verdict = probe(find_bwrap(os.environ.get("PATH")))
    print(f"bwrap: {verdict.reason}")
    abi = landlock_abi()
    print(f"landlock ABI: {abi if abi > 0 else 'none (' + os.strerror(ctypes.get_errno()) + ')'}")
    with tempfile.TemporaryDirectory() as base:
        os.chmod(base, 0o777)
        project = Path(base)
        env = dict(os.environ)
        policy = SandboxPolicy.for_user(
            "workspace-write", project, home=Path.home(), state_dir=Path.home() / ".local/state/agent-cli"
        )
        rows: list[tuple[str, list[str], Callable[[], None] | None]] = []
        rows.append(("bare (fork + exec true)", ["true"], None))
        rows.append(("bare, no-op preexec (fork path)", ["true"], _noop))
        if verdict.works and verdict.bwrap:
            wrapped = sandboxed(policy, ["true"], project, env, bwrap=verdict.bwrap).argv
            rows.append(("bwrap, workspace-write", wrapped, None))
            opened_policy = replace(policy, network=True)
            opened = sandboxed(opened_policy, ["true"], project, env, bwrap=verdict.bwrap).argv
            rows.append(("bwrap, network on (no new netns)", opened, None))
            if os.geteuid() == 0:  # nobody's policy: a home of its own (root's is closed to it)
                (project / "home").mkdir()
                mine = SandboxPolicy.for_user(
                    "workspace-write", project, home=project / "home", state_dir=project / "home/.state"
                )
                as_nobody = sandboxed(mine, ["true"], project, env, bwrap=verdict.bwrap).argv
                rows.append(("bwrap, as nobody (setpriv)", [*NOBODY, *as_nobody], None))
                rows.append(("setpriv alone (to subtract)", [*NOBODY, "true"], None))
        if abi > 0:
            land = landlock_preexec([str(project), "/tmp"], abi)
            rows.append(("landlock (preexec, ctypes)", ["true"], land))
            if os.geteuid() == 0:
                rows.append(("landlock, as nobody", [*NOBODY, "true"], land))
        print(f"\n{n} runs of `true` each:")
        for name, argv, pre in rows:
            print(f"  {name:34} {_works(argv, pre)}")
        for name, argv, pre in rows:
            print("  " + _line(name, _times(argv, n, pre)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

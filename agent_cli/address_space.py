"""The process under an address-space limit (`ulimit -v`, RLIMIT_AS): fit in it, or say in one line
that it cannot.

Two things reserve address space far beyond what they use: glibc's malloc gives each thread that
allocates an arena of its own (64 MiB reserved on 64-bit), and each new thread gets a stack of
`ulimit -s` (8 MiB by default). Under a limit of 150 MB these reservations used it up, and the first
allocation refused was one of a Rust extension's (pydantic-core's, in the SDK), which aborts the
process ("memory allocation of 148 bytes failed") instead of raising: no line of ours, no exit code
of ours. So when a limit is set, `fit_address_space` asks malloc for one arena and gives the
threads Python starts smaller stacks (both only then: without a limit nothing changes); and under
`MIN_ADDRESS_SPACE`, in which start-up does not fit even so, it returns the line to say instead.
The tokenizer's vocabulary (43-81 MiB while it is built, also in Rust) is built only when
`headroom` leaves room for it; otherwise tokens are estimated from characters.
"""

from __future__ import annotations

import contextlib
import resource
import threading

__all__ = [
    "MIN_ADDRESS_SPACE",
    "THREAD_STACK",
    "fit_address_space",
    "headroom",
    "out_of_memory",
]

MIN_ADDRESS_SPACE = 128 * 1024 * 1024  # `agent -p` runs from 106 MiB here (tokens then estimated)
THREAD_STACK = 2 * 1024 * 1024  # the threads Python starts (the SDK's, the key watch, the watchdog)
_M_ARENA_MAX = -8  # mallopt's parameter number (glibc's malloc.h)


def _limit() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def headroom() -> int | None:
    """Bytes of address space left under the limit now, or None when no limit is set (or the
    process's size cannot be read: only Linux has /proc/self/status)."""
    limit = _limit()
    if limit is None:
        return None
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return limit - int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MiB"


def fit_address_space() -> str | None:
    """Under an address-space limit, reserve less; None, or the line to exit with when the limit is
    below what start-up needs."""
    limit = _limit()
    if limit is None:
        return None
    if limit < MIN_ADDRESS_SPACE:
        return (
            f"the address-space limit (ulimit -v) is {_mib(limit)}; agent-cli needs at least "
            f"{_mib(MIN_ADDRESS_SPACE)}: raise it (ulimit -v {MIN_ADDRESS_SPACE // 1024} or more)"
        )
    with contextlib.suppress(OSError, AttributeError):  # glibc's; elsewhere the call is not there
        import ctypes

        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)
    with contextlib.suppress(ValueError, RuntimeError):  # a platform that does not let it be set
        threading.stack_size(THREAD_STACK)
    return None


def out_of_memory() -> str:
    """The line for a MemoryError: the limit named when there is one."""
    limit = _limit()
    if limit is None:
        return "out of memory"
    return f"out of memory under the address-space limit (ulimit -v) of {_mib(limit)}; raise it"

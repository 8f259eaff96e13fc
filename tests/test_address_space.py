"""`agent` under an address-space limit (`ulimit -v`): it runs at 150 MB, and below what start-up
needs it says so in one line of its own, never a Rust extension's "memory allocation of N bytes
failed" and an abort (SIGABRT), which is what 150 MB gave before."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply
from tests.e2e import agent_cmd, agent_env


def _run_limited(tmp_path: Path, kib: int) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # in the child only
        resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    with FakeModelServer() as server:
        server.default = Reply("DONE-UNDER-A-LIMIT")
        return subprocess.run(
            agent_cmd("-p", "hi"),
            cwd=project,
            env=agent_env(tmp_path / "home", server),
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
            preexec_fn=limit,
        )


def test_agent_runs_or_says_why_under_a_150_mb_address_space_limit(tmp_path: Path) -> None:
    # The figure. `agent -p` peaked at 145,320 KiB of address space under a limit here (the old
    # code passed at 160,000 and aborted at 150,000: exit -6, SIGABRT, "memory allocation of 148 bytes
    # failed" from pydantic-core). That left a few MB, and building the tokenizer's vocabulary after the
    # reply took them on another machine (SIGABRT from tiktoken's Rust half); the vocabulary is now
    # built only when there is room for it, and the run peaks near 105 MiB. What must hold on any
    # machine is that it either answers or says why in one line of its own.
    proc = _run_limited(tmp_path, 150_000)
    assert proc.returncode in (0, 1), proc.stderr[-600:]
    assert "memory allocation" not in proc.stderr
    if proc.returncode == 0:
        assert "DONE-UNDER-A-LIMIT" in proc.stdout
    else:
        said = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(said) == 1 and said[0].startswith("agent: "), proc.stderr[-600:]


def test_below_what_start_up_needs_it_says_so_in_one_line(tmp_path: Path) -> None:
    proc = _run_limited(tmp_path, 100_000)
    said = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, proc.stderr[-600:]
    assert len(said) == 1 and said[0].startswith("agent: the address-space limit (ulimit -v) is 98 MiB")


_BUILD_UNDER_A_LIMIT = """
import resource, sys
from agent_cli.address_space import fit_address_space
from agent_cli.tokens.encodings import VocabularyError, get_encoding
size = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1]) * 1024
limit = size + int(sys.argv[1]) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
fit_address_space()
try:
    get_encoding("o200k_base")
except VocabularyError as exc:
    print("ESTIMATE", exc)
else:
    print("BUILT")
"""


def _build_with_room(mib: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BUILD_UNDER_A_LIMIT, str(mib)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parent.parent,
    )


def test_a_vocabulary_that_does_not_fit_is_estimated_not_an_abort() -> None:
    # 40 MiB of room: o200k_base needs about 81 at its peak, and its Rust half aborts the process
    # (SIGABRT, "memory allocation of N bytes failed") when an allocation is refused. The room is
    # checked first, and the counter falls back to its character estimate.
    proc = _build_with_room(40)
    assert proc.returncode == 0, proc.stderr[-600:]
    assert proc.stdout.startswith("ESTIMATE the address-space limit (ulimit -v) leaves"), proc.stdout
    assert "o200k_base" in proc.stdout


def test_a_vocabulary_with_room_is_built_under_a_limit() -> None:
    proc = _build_with_room(400)
    assert (proc.returncode, proc.stdout.strip()) == (0, "BUILT"), proc.stderr[-600:]

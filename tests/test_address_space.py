"""`agent` under an address-space limit (`ulimit -v`): it runs at 150 MB, and below what start-up
needs it says so in one line of its own, never a Rust extension's "memory allocation of N bytes
failed" and an abort (SIGABRT), which is what 150 MB gave before."""

from __future__ import annotations

import resource
import subprocess
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
    # The figure. `agent -p` peaks at 145,320 KiB of address space under a limit here (the old
    # code passed at 160,000 and aborted at 150,000: exit -6, SIGABRT, "memory allocation of 148 bytes
    # failed" from pydantic-core). The margin is a few MB, and a library's next release may take them:
    # what must hold on any machine is that it either answers or says why in one line of its own.
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

"""What the sandbox tests share: a world-readable scratch tree (project, outside, fake home, temp),
a policy over it, and a command run through the launcher as the user or as `nobody`.

Every escape is tried twice: under the policy's mode (it must be refused) and under "off" (it must
work), so each test can fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_cli.sandbox.launch import sandboxed
from agent_cli.sandbox.policy import SandboxMode, SandboxPolicy
from agent_cli.sandbox.probe import find_bwrap, probe

VERDICT = probe(find_bwrap(os.environ.get("PATH")))
needs_bwrap = pytest.mark.skipif(not VERDICT.works, reason=f"no working sandbox here: {VERDICT.reason}")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@dataclass(frozen=True)
class Tree:
    base: Path
    project: Path
    outside: Path
    home: Path
    tmp: Path
    state: Path

    def policy(self, mode: SandboxMode, **kw: object) -> SandboxPolicy:
        return SandboxPolicy.for_user(
            mode, self.project, home=self.home, state_dir=self.state, tmp=self.tmp, **kw  # type: ignore[arg-type]
        )

    def run(
        self,
        mode: SandboxMode,
        script: str,
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        prefix: Sequence[str] = (),
        policy: SandboxPolicy | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """`sh -c script` under `mode` (or `policy`), through the launcher, `prefix` before it all."""
        assert VERDICT.bwrap is not None
        chosen = policy if policy is not None else self.policy(mode)
        base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home)}
        argv, where = ["/bin/sh", "-c", script], cwd or self.project
        launch = sandboxed(chosen, argv, where, {**base_env, **(env or {})}, bwrap=VERDICT.bwrap)
        return subprocess.run(
            [*prefix, *launch.argv],
            env=launch.env,
            cwd=where,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture
def tree() -> Iterator[Tree]:
    # Not under pytest's tmp_path: that is private to root, and some cases run as nobody; and not under
    # the policy's temporary directory, which the sandbox leaves writable.
    base = Path(tempfile.mkdtemp(prefix="agent-sandbox-"))
    base.chmod(0o777)
    dirs = {name: base / name for name in ("project", "outside", "home", "tmp")}
    for path in dirs.values():
        path.mkdir()
        path.chmod(0o777)
    state = dirs["home"] / ".local" / "state" / "agent-cli"
    state.mkdir(parents=True)
    try:
        yield Tree(base, dirs["project"], dirs["outside"], dirs["home"], dirs["tmp"], state)
    finally:
        shutil.rmtree(base, ignore_errors=True)

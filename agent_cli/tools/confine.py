"""The session's sandbox as the tools use it: the policy a command runs under, whether it can run
under it here, and the one line a command the sandbox refused gets in its result.

`Confinement.for_session` is made once per session (app.py) from `[sandbox]` (mode, network,
writable, hidden), the user's home and state directory, and the probe's cached verdict
(`sandbox/probe.py`). Three states:

    off          mode "off": commands run as the user runs them
    active       the mode is on and bubblewrap works here: `launch` wraps every command
    missing      the mode is on but the sandbox cannot work here (the probe failed, or the policy
                 would confine next to nothing, `policy.too_wide`): commands run unconfined, so
                 the approver asks before every one (no allow rule or "always" applies) and the
                 start-up line says why

`protecting()` is the same confinement with the protected files read-only (`protected`: the
project's files that make tools run commands, `.git/config`, `.git/hooks`, `.agent/` ..., and the
files its hooks and servers run): what auto mode runs a command in when nobody was asked, so that a
command cannot plant what git or the agent later runs outside the sandbox.

`launch` is the argv and environment to start (the caller starts them as it starts any command:
its process group, its cgroup, its watchdog; bwrap is the agent's child, so the cgroup holds it).
`denial` reads a failed command's output for the sandbox's refusals (a read-only file system, a
hidden path that is empty or absent, a closed network) and names which: the model then knows to
ask the user rather than work around it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agent_cli.core.text import visible_exact
from agent_cli.sandbox.launch import Launch, sandboxed
from agent_cli.sandbox.policy import SandboxMode, SandboxPolicy, too_wide
from agent_cli.sandbox.probe import Verdict

__all__ = ["Confinement"]

_NETWORK_SIGNS = (
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
)
_READ_SIGNS = ("No such file or directory", "Permission denied")
_ASK = "ask the user, who may approve it outside the sandbox"
_PROTECTED = (
    "git, this agent or an editor run what it names; in auto mode no command writes it unasked: ask the "
    "user, who may approve it outside the sandbox"
)


@dataclass(frozen=True, slots=True)
class Confinement:
    policy: SandboxPolicy
    bwrap: str | None  # the bubblewrap that works here; None: the sandbox is missing (or off)
    reason: str  # the probe's one line, or why the policy is refused
    protected: tuple[Path, ...] = ()  # read-only under `protecting()` (auto mode's unasked commands)

    @classmethod
    def off(cls, project: Path) -> Confinement:
        return cls(SandboxPolicy(mode="off", project=project), None, "off")

    @classmethod
    def for_session(
        cls,
        mode: SandboxMode,
        project: Path,
        *,
        home: Path,
        state_dir: Path,
        verdict: Verdict | None,
        network: bool = False,
        writable: Iterable[str] = (),
        hidden: Iterable[str] = (),
        protected: Iterable[Path] = (),
    ) -> Confinement:
        """The session's confinement; `verdict` is looked at only when the mode is on."""
        policy = SandboxPolicy.for_user(
            mode, project, home=home, state_dir=state_dir, network=network, writable=writable, hidden=hidden
        )
        if not policy.confined:
            return cls(policy, None, "off")
        assert verdict is not None
        wide = too_wide(
            SandboxPolicy(mode, project.resolve(), writable=tuple(p.resolve() for p in policy.writable)),
            home.resolve(),
        )
        if wide is not None:
            return cls(policy, None, f"the sandbox would not confine: {wide}")
        if not verdict.works or verdict.bwrap is None:
            return cls(policy, None, verdict.reason)
        return cls(policy, verdict.bwrap, verdict.reason, tuple(protected))

    def protecting(self) -> Confinement:
        """This confinement with the protected files read-only inside the writable project."""
        return replace(self, policy=replace(self.policy, read_only=self.protected))

    def present(self) -> frozenset[Path]:
        """The protected paths that exist now (a mount covers only those)."""
        return frozenset(p for p in self.protected if os.path.lexists(p))

    def created_line(self, before: frozenset[Path]) -> str | None:
        """The line a result gets when the command made a protected path that was not there to be
        covered (`git init` then a hook): git or the agent may run it later, outside the sandbox."""
        made = sorted(self.present() - before)
        if not made:
            return None
        names = ", ".join(_shown(p, self.policy.project) for p in made[:4]) + (
            ", ..." if len(made) > 4 else ""
        )
        return (
            f"this command created {names}: files that make git, this agent or an editor run commands, "
            "which may run outside the sandbox; tell the user what they are for"
        )

    @property
    def active(self) -> bool:
        return self.policy.confined and self.bwrap is not None

    @property
    def missing(self) -> bool:
        """The mode asks for a sandbox this machine cannot give."""
        return self.policy.confined and self.bwrap is None

    def launch(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """What to start for `argv` (as given when the sandbox is off or missing)."""
        if self.bwrap is None or not self.policy.confined:
            return Launch(list(argv), dict(env))
        return sandboxed(self.policy, argv, cwd, env, bwrap=self.bwrap)

    def status(self) -> str:
        """One line for /status: the mode and the probe's verdict."""
        if not self.policy.confined:
            return "off (commands run with all of your rights)"
        net = "network open" if self.policy.network else "no network"
        if self.active:
            return f"{self.policy.mode}, {net} ({self.reason})"
        return f"{self.policy.mode} wanted, but unavailable: {self.reason}; every command is asked"

    def start_line(self, *, yes: bool) -> str | None:
        """The start-up line when the sandbox is wanted but missing (None otherwise)."""
        if not self.missing:
            return None
        if yes:
            return f"no sandbox ({self.reason}): with --yes, commands run unconfined, with all of your rights"
        return f"no sandbox ({self.reason}): commands would run unconfined, so every one is asked"

    def denial(self, output: str) -> str | None:
        """The line a failed command's result gets when its output shows the sandbox refused it."""
        if not self.active:
            return None
        if "Read-only file system" in output:
            if self.policy.read_only and any(
                _names(output, p, self.policy.project) for p in self.policy.read_only
            ):
                return f"denied by the sandbox: write to a protected file ({_PROTECTED})"
            if self.policy.mode == "read-only":
                return f"denied by the sandbox: write in read-only mode ({_ASK})"
            return f"denied by the sandbox: write outside the project ({_ASK})"
        hidden = [str(p) for p in self.policy.hidden]
        for line in output.splitlines():
            if any(sign in line for sign in _READ_SIGNS) and any(p in line for p in hidden):
                return f"denied by the sandbox: read of a hidden path ({_ASK})"
        if not self.policy.network and any(sign in output for sign in _NETWORK_SIGNS):
            return f"denied by the sandbox: network closed ({_ASK})"
        return None


def _names(output: str, path: Path, project: Path) -> bool:
    """Whether `output` names `path`, whole or relative to the project (`.git/config`)."""
    if str(path) in output:
        return True
    try:
        return str(path.relative_to(project)) in output
    except ValueError:
        return False


def _shown(path: Path, project: Path) -> str:
    try:
        return visible_exact(str(path.relative_to(project)))
    except ValueError:
        return visible_exact(str(path))

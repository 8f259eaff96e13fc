"""Auto mode: inside an active sandbox, what stays in the project runs without asking.

The sandbox, not a guess about the command, is what holds a command to the project: under
`workspace-write` (or `read-only`) a command can write only the project and the temporary
directory, reads no credential and reaches no network. So in auto mode, with the sandbox active:

    runs unasked   the tools that read; a command (bash), in the sandbox with the protected files
                   read-only (`Decision.protect`: `.git/config`, `.git/hooks`, `.agent/`, `.claude/`,
                   `.mcp.json`, the files the session's hooks and servers run ...); a file edit
                   (write_file, edit_file) whose path resolves inside the project
    still asks     a command a rule guard names (`RuleGuard`: git in a repository whose config names
                   programs, a write to a file that makes tools run commands, and every command where
                   no sandbox confines); a command the sandbox refused before, asked again
                   (`refused_by_sandbox`: only the user's `[o]` runs it outside); a command whose
                   program reaches the network while the sandbox closes it (curl, git push, pip
                   install ...); an edit outside the project; MCP tools (a server's read-only hint is
                   its own word) and any other tool that asks
    headless       what would ask is refused, with the reason, as in default mode

The reasons a command is asked in auto mode reach the question (and a headless refusal) through the
session's rule guard (`guard`), so an "always" answer to one is only a "yes", never a rule.

Where the sandbox does not confine (mode off, or wanted but missing here), auto mode is default
mode: every command and edit asks (`AutoMode.sandboxed` is False; the mode says so once,
`agent.modes.ModeState.unconfined_notice`). Nothing here ever decides that a call runs outside the
sandbox: `Decision.unconfined` comes only from the user's answer (`approvals.InteractiveApprover`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_cli.agent import programs
from agent_cli.agent.approvals import ApprovalOf, Decision
from agent_cli.agent.rule_guard import RuleGuard
from agent_cli.agent.shell_words import plain_command
from agent_cli.core.text import visible_exact
from agent_cli.tools.base import FileEffect

__all__ = ["NETWORK_PROGRAMS", "NETWORK_VERBS", "AutoMode", "needs_network"]

# Programs whose every run reaches the network.
NETWORK_PROGRAMS = frozenset(
    {
        "curl",
        "wget",
        "ssh",
        "scp",
        "sftp",
        "ftp",
        "telnet",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "rsync",
        "ping",
        "dig",
        "nslookup",
        "host",
        "aria2c",
        "http",
        "https",
        "xh",
    }
)
# Programs whose named verbs reach the network (a package manager's install, git's remote verbs).
NETWORK_VERBS: dict[str, frozenset[str]] = {
    "git": frozenset({"clone", "fetch", "pull", "push", "ls-remote", "submodule"}),
    "pip": frozenset({"install", "download"}),
    "uv": frozenset({"add", "sync", "lock", "pip"}),
    "npm": frozenset({"install", "i", "ci", "add", "update", "publish", "exec", "view"}),
    "pnpm": frozenset({"install", "i", "add", "update", "dlx"}),
    "yarn": frozenset({"install", "add", "upgrade", "dlx"}),
    "cargo": frozenset({"install", "fetch", "update", "publish", "add"}),
    "go": frozenset({"get", "install", "mod"}),
    "gem": frozenset({"install", "update", "push"}),
    "apt": frozenset({"install", "update", "upgrade"}),
    "apt-get": frozenset({"install", "update", "upgrade"}),
    "gh": frozenset({"pr", "issue", "repo", "api", "release", "auth"}),
}
_REFUSED = (
    "the sandbox refused this command before (see its result): yes runs it in the sandbox again, "
    "[o] outside the sandbox with all of your rights (only you can choose that)"
)


def needs_network(command: str) -> str | None:
    """The program (and verb) of a plain command that reaches the network (None: not known to).
    A command that is not plain is not read here: the sandbox refuses it and the retry is asked."""
    line = plain_command(command)
    if line is None or not line.words or not line.words[0].literal:
        return None
    program = programs.identity(line.words[0].text)
    if program in NETWORK_PROGRAMS:
        return program
    verbs = NETWORK_VERBS.get(program)
    rest = [w.text for w in line.words[1:] if w.literal and not w.text.startswith("-")]
    if verbs is not None and rest and rest[0] in verbs:
        return f"{program} {rest[0]}"
    return None


class AutoMode:
    """What auto mode runs unasked in one session: its project, its sandbox, what that refused."""

    def __init__(
        self,
        root: Path,
        *,
        sandboxed: bool,
        network: bool = False,
        approval_of: ApprovalOf,
        effect_of: Callable[[str], FileEffect],
    ) -> None:
        self.root = root
        self.sandboxed = sandboxed  # the sandbox is active: it confines every command the model runs
        self.network = network  # the sandbox's network is open
        self.approval_of = approval_of
        self.effect_of = effect_of
        self.refused: set[tuple[str, str]] = set()  # (tool, command line) the sandbox refused

    def refused_by_sandbox(self, name: str, args: Mapping[str, Any]) -> None:
        command = args.get("command")
        if isinstance(command, str):
            self.refused.add((name, command))

    def reason(self, name: str, args: Mapping[str, Any]) -> str | None:
        """Why auto mode asks this command all the same (None: nothing of auto mode's own)."""
        command = args.get("command")
        if self.approval_of(name) != "command" or not isinstance(command, str):
            return None
        if (name, command) in self.refused:
            return _REFUSED
        program = None if self.network else needs_network(command)
        if program is not None:
            return (
                f"{visible_exact(program)} reaches the network, which the sandbox closes: yes runs it in "
                "the sandbox (where it fails), [o] outside it with all of your rights"
            )
        return None

    def guard(self, base: RuleGuard, active: Callable[[], bool]) -> RuleGuard:
        """`base` and, while auto mode is `active`, this mode's own reasons to ask."""

        def check(name: str, args: Mapping[str, Any]) -> str | None:
            why = base(name, args)
            if why is None and active() and self.sandboxed:
                why = self.reason(name, args)
            return why

        return check

    def decide(self, name: str, args: Mapping[str, Any], guard: RuleGuard) -> Decision | None:
        """The call runs unasked (a Decision), or None: it goes to the approver that asks."""
        if not self.sandboxed:
            return None  # no sandbox confines: auto is default mode
        approval = self.approval_of(name)
        if approval == "never":
            return Decision.allow()
        if guard(name, args) is not None or self.reason(name, args) is not None:
            return None
        if self.effect_of(name) == "path":
            return Decision.allow() if self._inside(args.get("path")) else None
        if approval == "command":
            return Decision(True, protect=True)
        return None  # MCP tools and the rest: asked

    def _inside(self, raw: object) -> bool:
        """Whether a file tool's path resolves inside the project (symlinks followed)."""
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            return False
        path = Path(raw.strip()).expanduser()
        root = self.root.resolve()
        try:
            resolved = (path if path.is_absolute() else root / path).resolve()
        except (OSError, RuntimeError):
            return False
        return resolved != root and resolved.is_relative_to(root)

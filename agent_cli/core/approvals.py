"""Who may run which tool: the approval policy and the approvers that apply it.

The loop asks an `Approver` before every tool call and gets a `Decision`. The
policy itself is pure:

- Read-only tools (read_file, glob, grep, recall, compact) never ask.
  Everything else (bash, write_file, edit_file, and any tool not known to be
  read-only) asks.
- A bash command runs without asking when it matches an allow-listed prefix
  (`approvals.allow` in the config). Matching is deliberately strict: the
  command must contain no shell control operator, redirection or substitution
  (`;` `&` `|` `` ` `` `$(` `${` `>` `<` or a newline), and the prefix must match
  whole words. So the prefix `ls` allows `ls -la src` but neither `lsblk` nor
  `ls; rm -rf /`. A prefix allows any arguments after it, so prefer narrow
  prefixes such as `git status` over `git`.

Approvers:

- `AutoApprover` (--yes): everything runs.
- `HeadlessApprover`: nobody to ask; allow-listed bash runs, anything else is
  denied with a reason telling the model (and the user reading the output)
  how to allow it.
- `InteractiveApprover`: asks the user through an injected function. "always"
  approves more of the same for the rest of the session, see `always_rule`:
  write_file / edit_file: that tool, for any path it may reach (the project,
  unless tools.allow_outside_root widens that).
  bash: the command's first word (e.g. `pytest`), or its first two words for
  tools whose subcommands do very different things (`git status`, `npm test`);
  the remembered rule is then matched like an allow-list prefix, so it never
  covers a compound command. Commands whose first word says nothing about
  what they will do (`rm`, `sudo`, `bash`, `python`, `xargs`, ...) and compound
  commands are remembered only as that exact command line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

__all__ = [
    "READ_ONLY_TOOLS",
    "AlwaysRule",
    "Answer",
    "Approver",
    "Asker",
    "AutoApprover",
    "Decision",
    "HeadlessApprover",
    "InteractiveApprover",
    "always_rule",
    "is_simple_command",
    "matches_prefix",
    "needs_approval",
]

READ_ONLY_TOOLS = frozenset({"read_file", "glob", "grep", "recall", "compact"})

Answer: TypeAlias = Literal["yes", "no", "always"]
Asker: TypeAlias = Callable[[str, Mapping[str, Any]], Answer]  # shows a call, returns the user's answer

# Any of these lets one command line run more than one program, or write where
# the prefix did not say: such a line never matches a prefix. `${` is here too
# because some parameter expansions (`${x@P}`) can run command substitutions.
_CONTROL = re.compile(r"[;&|`<>\n\r]|\$[({]")

# First words that say nothing about what the command will do: "always" for them
# would approve anything, so only the exact command line is remembered.
_EXACT_ONLY = frozenset({
    "rm", "rmdir", "dd", "mkfs", "shred", "sudo", "su", "doas", "env", "xargs", "exec", "eval",
    "command", "builtin", "nohup", "nice", "time", "timeout", "watch", "sh", "bash", "zsh", "dash",
    "fish", "python", "python3", "node", "perl", "ruby", "php", "deno", "bun", "ssh", "scp", "curl",
    "wget", "chmod", "chown", "kill", "pkill", "killall", "find", "source", ".", "mv", "cp",
})
# Programs whose subcommand is the real verb: `git status` must not approve `git push --force`.
_SUBCOMMAND_TOOLS = frozenset({
    "git", "npm", "npx", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "cargo", "go", "docker",
    "podman", "kubectl", "helm", "make", "gh", "dotnet", "mvn", "gradle", "terraform", "brew",
    "apt", "apt-get", "systemctl", "conda",
})


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer for one tool call. A denial's `reason` goes back to the model as the tool result."""

    allowed: bool
    reason: str = ""

    @classmethod
    def allow(cls) -> Decision:
        return cls(True)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        return cls(False, reason)


class Approver(Protocol):
    def decide(self, name: str, args: Mapping[str, Any]) -> Decision: ...


def needs_approval(name: str) -> bool:
    return name not in READ_ONLY_TOOLS


def is_simple_command(command: str) -> bool:
    """True when the line has no control operator, redirection or substitution."""
    return _CONTROL.search(command) is None


def matches_prefix(command: str, prefix: str) -> bool:
    """Whether an allow-list `prefix` covers `command`: whole words, simple commands only."""
    words = prefix.split()
    if not words or not is_simple_command(command) or not is_simple_command(prefix):
        return False
    return command.split()[: len(words)] == words


def _allow_listed(name: str, args: Mapping[str, Any], prefixes: Iterable[str]) -> bool:
    command = args.get("command")
    if name != "bash" or not isinstance(command, str):
        return False
    return any(matches_prefix(command, p) for p in prefixes)


@dataclass(frozen=True, slots=True)
class AlwaysRule:
    """What answering "always" to one call approves for the rest of the session."""

    tool: str
    prefix: str | None = None  # bash: an allow-list-style prefix
    exact: str | None = None  # bash: this exact command line only

    def covers(self, name: str, args: Mapping[str, Any]) -> bool:
        if name != self.tool:
            return False
        if self.prefix is None and self.exact is None:
            return True
        command = args.get("command")
        if not isinstance(command, str):
            return False
        if self.exact is not None:
            return command.strip() == self.exact
        return self.prefix is not None and matches_prefix(command, self.prefix)

    def describe(self) -> str:
        """For the prompt: 'always' will allow ..."""
        if self.exact is not None:
            return f"this exact bash command: {self.exact}"
        if self.prefix is not None:
            return f"bash commands starting with `{self.prefix}` (without ; & | > < or substitutions)"
        return f"every {self.tool} call in this session"


def always_rule(name: str, args: Mapping[str, Any]) -> AlwaysRule:
    """The rule an "always" answer to this call adds (pure: the UI can show it before asking)."""
    if name != "bash":
        return AlwaysRule(name)
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return AlwaysRule(name, exact=str(command))
    command = command.strip()
    words = command.split()
    first = words[0]
    if not is_simple_command(command) or first in _EXACT_ONLY or "=" in first:
        return AlwaysRule(name, exact=command)
    if first in _SUBCOMMAND_TOOLS:
        if len(words) > 1 and not words[1].startswith("-"):
            return AlwaysRule(name, prefix=f"{first} {words[1]}")
        return AlwaysRule(name, exact=command)  # `git -C x push`: the verb is not where we look
    return AlwaysRule(name, prefix=first)


class AutoApprover:
    """--yes: every call runs."""

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        return Decision.allow()


class HeadlessApprover:
    """No one to ask: read-only and allow-listed bash run; the rest is denied with a way forward."""

    def __init__(self, allow_prefixes: Iterable[str] = ()) -> None:
        self.allow_prefixes = tuple(p for p in allow_prefixes if p.strip())

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        if not needs_approval(name) or _allow_listed(name, args, self.allow_prefixes):
            return Decision.allow()
        if name == "bash":
            return Decision.deny(
                "bash needs approval: rerun with --yes or add a prefix to approvals.allow in the config "
                "(commands with ; & | > < or $( ) never match a prefix)"
            )
        return Decision.deny(
            f"{name} needs approval: rerun with --yes "
            "(approvals.allow in the config covers bash commands only)"
        )


class InteractiveApprover:
    """Asks the user through `ask(name, args)`; remembers "always" answers for this session."""

    def __init__(
        self, ask: Asker, allow_prefixes: Iterable[str] = ()
    ) -> None:
        self.ask = ask
        self.allow_prefixes = tuple(p for p in allow_prefixes if p.strip())
        self.rules: list[AlwaysRule] = []

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        if not needs_approval(name) or _allow_listed(name, args, self.allow_prefixes):
            return Decision.allow()
        if any(rule.covers(name, args) for rule in self.rules):
            return Decision.allow()
        answer = self.ask(name, args)
        if answer == "always":
            self.rules.append(always_rule(name, args))
            return Decision.allow()
        if answer == "yes":
            return Decision.allow()
        return Decision.deny(
            f"the user declined this {name} call; do not retry it as is: ask the user how to proceed"
        )

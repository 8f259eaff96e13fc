"""What a rule covers: the allow-list's prefixes, tool names and hosts, and the rule an "always"
answer adds for the rest of the session; pure (the approvers in approvals.py apply them).

- A shell command (a call of a tool whose approval is "command": bash) is covered by an allow-list
  prefix only when bash would run it as one plain simple command (`shell_words`) whose first words
  are unquoted literal words equal to the prefix's (`matches_prefix`).
- A tool's full name in the allow-list covers every call of that tool, a shell tool's excepted;
  a host covers every call of a URL tool ("host") whose `url` is on it (`url_host`).
- "always" (`always_rule`) remembers the tool, the command's first word or first two words (a
  subcommand program's known verb), a URL's host, or else the exact command line; a prefix rule
  still asks for an argument that makes the program run code (`programs.risky_argument`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agent_cli.agent import programs
from agent_cli.agent.shell_words import plain_command
from agent_cli.tools.base import Approval

__all__ = ["AlwaysRule", "allow_listed", "always_rule", "is_simple_command", "matches_prefix", "url_host"]


def is_simple_command(command: str) -> bool:
    """True when bash would run the line as one plain simple command (see `shell_words`)."""
    return plain_command(command) is not None


def matches_prefix(command: str, prefix: str) -> bool:
    """Whether an allow-list `prefix` covers `command`: the command is plain and its first words
    are literal words equal to the prefix's (which must be plain literal words itself)."""
    rule = plain_command(prefix)
    if rule is None or not all(w.literal for w in rule.words):
        return False
    line = plain_command(command)
    if line is None or len(line.words) < len(rule.words):
        return False
    return all(w.literal and w.text == r.text for w, r in zip(line.words, rule.words, strict=False))


def url_host(args: Mapping[str, Any]) -> str | None:
    """The host of a call's `url` argument as the lists compare it, or None when it names none."""
    url = args.get("url")
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def allow_listed(
    name: str,
    approval: Approval,
    args: Mapping[str, Any],
    prefixes: Iterable[str],
    hosts: frozenset[str] = frozenset(),
) -> bool:
    if approval in ("ask", "host") and name in prefixes:  # a whole tool by its full name
        return True
    if approval == "host":
        host = url_host(args)
        return host is not None and host in hosts
    command = args.get("command")
    if approval != "command" or not isinstance(command, str):
        return False
    return any(matches_prefix(command, p) for p in prefixes)


@dataclass(frozen=True, slots=True)
class AlwaysRule:
    """What answering "always" to one call approves for the rest of the session."""

    tool: str
    prefix: str | None = None  # a shell command: an allow-list-style prefix
    exact: str | None = None  # a shell command: this exact command line only
    host: str | None = None  # a URL tool: calls to this host

    def covers(self, name: str, args: Mapping[str, Any]) -> bool:
        if name != self.tool:
            return False
        if self.host is not None:
            return url_host(args) == self.host
        if self.prefix is None and self.exact is None:
            return True
        command = args.get("command")
        if not isinstance(command, str):
            return False
        if self.exact is not None:
            return command == self.exact  # character for character: no strip eats a trailing \f
        if self.prefix is None or not matches_prefix(command, self.prefix):
            return False
        line = plain_command(command)
        if line is None:
            return False
        arguments = line.words[1:]
        return not programs.risky_argument(
            line.words[0].text, [w.source for w in arguments], all_literal=all(w.literal for w in arguments)
        )

    def describe(self) -> str:
        """For the prompt: 'always' will allow ..."""
        if self.host is not None:
            return f"{self.tool} calls to {self.host} in this session"
        if self.exact is not None:
            return f"this exact {self.tool} command: {self.exact}"
        if self.prefix is not None:
            return (
                f"{self.tool} commands starting with `{self.prefix}` (one plain command: "
                "no ; & | > <, substitutions or control characters)"
            )
        return f"every {self.tool} call in this session"


def always_rule(name: str, args: Mapping[str, Any], approval: Approval) -> AlwaysRule:
    """The rule an "always" answer to this call adds (pure: shown in the question before asking)."""
    if approval == "host":
        host = url_host(args)
        return AlwaysRule(name, host=host if host is not None else "")  # "" covers no URL
    if approval != "command":
        return AlwaysRule(name)
    command = args.get("command")
    if not isinstance(command, str):
        return AlwaysRule(name, exact=str(command))
    exact = AlwaysRule(name, exact=command)
    line = plain_command(command)
    if line is None or not line.words[0].literal:
        return exact  # compound, substituted, quoted or spelled strangely: this line only
    first = line.words[0].text
    if programs.is_exact_only(first):
        return exact
    verbs = programs.SUBCOMMAND_VERBS.get(programs.identity(first))
    if verbs is None:
        return AlwaysRule(name, prefix=first)  # a path stays a path: `./ls` never covers `ls`
    if len(line.words) > 1 and line.words[1].literal and line.words[1].text in verbs:
        return AlwaysRule(name, prefix=f"{first} {line.words[1].text}")
    return exact  # `git -C x push`, `git push`: the verb is not one we remember

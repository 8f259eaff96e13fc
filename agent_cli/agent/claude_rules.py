"""Claude Code's permission rules (`allow`, `deny`, `ask` in its settings files), applied.

A rule is `Tool` or `Tool(specifier)` with Claude Code's tool names (`tools.claude_names`):

- `Bash(npm run build)` is that command exactly; `Bash(git diff:*)` and `Bash(git diff *)` are
  `git diff` and anything after it (a word boundary: not `git difftool`); any other `*` matches
  any characters (`Bash(git * main)`).
- `Read(...)`, `Edit(...)` (and `Write(...)`) name paths as gitignore does: `//abs/path`,
  `~/in/home`, `/from/the/project`, `./here` or `here`; a pattern without a slash matches at any
  depth (`Read(*.env)`); `*` stays within a folder, `**` crosses them. `Read` covers read_file,
  grep and glob; `Edit`/`Write` cover write_file and edit_file.
- `mcp__server` (or `mcp__server__*`) is every tool of that server; `mcp__server__tool` one.

`SettingsRules` wraps the session's approver and weighs them as Claude Code does, deny, then
ask, then allow, the first that matches deciding: a `deny` refuses the call whatever else says so
(an allow rule, the approval mode, --yes); an `ask` asks even where a rule or mode would run it
(headless, with no one to ask, it refuses and says why). An `allow` runs a call unasked only with
the same safety as `approvals.allow`:

- only the user's own file's: a project's `allow` rules never apply (a repository may not approve
  its own commands, as `approvals.allow` may not be set in `.agent/config.toml`); they are named;
- a command only when it is one plain simple command (`shell_words`) whose program is named as a
  literal word; a rule that names no program (`Bash`, `Bash(*)`, `Bash(* --help)`) is not applied;
- never past the `RuleGuard` (git in a repository whose config runs programs, writes to files that
  make tools run commands) or in plan mode.

A `deny` or `ask` for Bash is looked for in the whole line and in each command of a compound one
(`a && b`, `a | b`, `$(b)`), with leading `VAR=value`, `timeout`, `nice`, `nohup` taken off, as
Claude Code does; like Claude Code's, it matches text, and a line can be spelt to slip past it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_cli.agent.approval_rules import url_host
from agent_cli.agent.approvals import (
    ASKED_EACH_TIME,
    WHY_ASKED,
    ApprovalOf,
    Approver,
    Asker,
    Decision,
    Instead,
)
from agent_cli.agent.modes import ModeState
from agent_cli.agent.rule_guard import RuleGuard
from agent_cli.agent.shell_words import plain_command
from agent_cli.config.claude_settings import PermissionRule
from agent_cli.tools.claude_names import path_argument, tools_named

__all__ = ["SettingsRules", "bash_covers", "inert_reason", "path_covers", "rule_covers"]

_PATH_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "Glob", "Grep"})
_SPLIT = re.compile(r"\|\||&&|[;|&\n()`]|\$\(")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*\s+")
_WRAPPER = re.compile(r"(?:timeout(?:\s+-\S+)*\s+\S+|nice(?:\s+-n\s*\S+|\s+-\S+)*|nohup)\s+")
_SPACES = re.compile(r"\s+")
_PATH_MAX = 4096  # Linux's PATH_MAX: the path regexes never see more of the model's text


def inert_reason(rule: PermissionRule) -> str | None:
    """Why a rule is read but never applied (None: it applies)."""
    if rule.kind == "allow" and rule.project:
        return "a project's allow rules never apply: put the ones you want in ~/.claude/settings.json"
    spec = rule.specifier
    if rule.tool == "Bash":
        if rule.kind == "allow" and (spec is None or not spec.strip() or spec.strip().startswith("*")):
            return "an allow rule must name the program (agent-cli allows commands by prefix only)"
        return None
    if rule.tool == "WebFetch" and spec is not None and spec.strip().startswith("domain:"):
        return None
    if spec is not None and spec.strip() not in ("", "*") and rule.tool not in _PATH_TOOLS:
        return f"agent-cli does not read a specifier for {rule.tool}"
    return None


def rule_covers(rule: PermissionRule, name: str, args: Mapping[str, Any], root: Path, home: Path) -> bool:
    """Whether `rule` is about this call of our tool `name` (inert rules never are)."""
    if inert_reason(rule) is not None or not _names(rule.tool, name):
        return False
    spec = rule.specifier
    if spec is None or spec.strip() in ("", "*"):
        return True
    if rule.tool == "Bash":
        command = args.get("command")
        return isinstance(command, str) and bash_covers(spec, command, strict=rule.kind == "allow")
    if rule.tool == "WebFetch":  # `WebFetch(domain:docs.python.org)`: that host, as the URL names it
        domain = spec.strip().removeprefix("domain:").strip().rstrip(".").lower()
        return bool(domain) and url_host(args) == domain
    where = path_argument(name, args)
    return where is not None and path_covers(spec, where, root, home)


def _names(tool: str, name: str) -> bool:
    if tool.startswith("mcp__"):
        server = tool[:-3] if tool.endswith("__*") else tool
        return name == tool or (server.count("__") == 1 and name.startswith(server + "__"))
    return name in tools_named(tool)


class _BashPattern:
    """A Bash rule's specifier, matched without backtracking (the command is the model's: a regex
    of several `.*` could be made to take minutes): the prefix form, or `*`s matched leftmost."""

    def __init__(self, spec: str) -> None:
        text = _SPACES.sub(" ", spec.strip())
        if text.endswith(":*"):
            text = text[:-2].rstrip() + " *"
        self.prefix = text[:-2] if text.count("*") == 1 and text.endswith(" *") else None
        self.parts = text.split("*")

    def fullmatch(self, command: str) -> bool:
        if self.prefix is not None:  # the prefix alone, or the prefix and a space and more
            return command == self.prefix or command.startswith(self.prefix + " ")
        if len(self.parts) == 1:
            return command == self.parts[0]
        first, *middle, last = self.parts
        end = len(command) - len(last)
        if end < len(first) or not command.startswith(first) or not command.endswith(last):
            return False
        at = len(first)
        for part in middle:  # each piece at its leftmost place after the last: a match if any is
            found = command.find(part, at, end)
            if found < 0:
                return False
            at = found + len(part)
        return True


def bash_covers(spec: str, command: str, *, strict: bool) -> bool:
    """Whether a Bash rule's specifier matches `command`. `strict` (an allow rule): only a plain
    simple command whose program is a literal word, matched as bash passes its words; otherwise
    (deny, ask) the whole line and every command in it."""
    pattern = _BashPattern(spec)
    if strict:
        line = plain_command(command)
        if line is None or not line.words[0].literal:
            return False
        return pattern.fullmatch(" ".join(w.text for w in line.words))
    return any(pattern.fullmatch(form) for form in _command_forms(command))


def _command_forms(command: str) -> list[str]:
    forms = [_SPACES.sub(" ", command.strip())]
    for part in [command, *_SPLIT.split(command)]:
        text = _SPACES.sub(" ", part.strip()) + " "
        while True:
            stripped = _ASSIGNMENT.sub("", text, count=1) if _ASSIGNMENT.match(text) else text
            stripped = _WRAPPER.sub("", stripped, count=1) if _WRAPPER.match(stripped) else stripped
            if stripped == text:
                break
            text = stripped
        forms.append(text.strip())
        line = plain_command(part)
        if line is not None:
            forms.append(" ".join(w.text for w in line.words))
    return [f for f in forms if f]


def _glob_regex(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def path_covers(spec: str, path: str, root: Path, home: Path) -> bool:
    """Whether a Read/Edit rule's path pattern covers `path` (as a tool takes it, from `root`),
    as written or with its links followed."""
    spec = spec.strip()
    if len(path) > _PATH_MAX:  # no file has such a name (the tool fails on it): not matched at all
        return False
    if spec.startswith("//"):
        base, pattern = "/", spec[2:]
    elif spec.startswith("~/"):
        base, pattern = str(home), spec[2:]
    elif spec.startswith("/"):
        base, pattern = str(root), spec[1:]
    else:
        base, pattern = str(root), spec[2:] if spec.startswith("./") else spec
    pattern = pattern.rstrip("/")
    if not pattern:
        return False
    anchored = "/" in pattern
    regex = re.compile(("" if anchored else "(?:.*/)?") + _glob_regex(pattern) + "(?:/.*)?", re.DOTALL)
    target = os.path.normpath(os.path.join(root, os.path.expanduser(path)))
    for candidate in {target, os.path.realpath(target)}:
        rel = os.path.relpath(candidate, base) if base != "/" else candidate.lstrip("/")
        if rel == "." or rel.startswith(".."):
            continue
        if regex.fullmatch(rel):
            return True
    return False


class SettingsRules:
    """Claude Code's rules around the session's approver: deny, then ask, then allow, then it."""

    def __init__(
        self,
        inner: Approver,
        rules: Sequence[PermissionRule],
        *,
        root: Path,
        home: Path,
        ask: Asker | None,
        guard: RuleGuard,
        mode: ModeState,
        approval_of: ApprovalOf,
    ) -> None:
        self.inner = inner
        self.rules = tuple(r for r in rules if inert_reason(r) is None)
        self.root = root
        self.home = home
        self.ask = ask
        self.guard = guard
        self.mode = mode
        self.approval_of = approval_of

    def _first(self, kind: str, name: str, args: Mapping[str, Any]) -> PermissionRule | None:
        return next(
            (r for r in self.rules if r.kind == kind and rule_covers(r, name, args, self.root, self.home)),
            None,
        )

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        rule = self._first("deny", name, args)
        if rule is not None:
            return Decision.deny(f"{name} is denied by the permission rule {rule.text} in {rule.source}")
        rule = self._first("ask", name, args)
        if rule is not None:
            return self._asked(rule, name, args)
        unruled = name in ASKED_EACH_TIME  # remember: the user approves each memory, no rule does
        if self.mode.mode in ("default", "acceptEdits") and self.approval_of(name) != "never" and not unruled:
            rule = self._first("allow", name, args)
            if rule is not None and self.guard(name, args) is None:
                return Decision.allow()
        return self.inner.decide(name, args)

    def _asked(self, rule: PermissionRule, name: str, args: Mapping[str, Any]) -> Decision:
        why = f"the permission rule {rule.text} in {rule.source} asks for it"
        if self.ask is None:
            return Decision.deny(f"{name} needs approval: {why}; run it in the REPL, where it is asked")
        shown = {k: v for k, v in args.items() if k != WHY_ASKED} | {WHY_ASKED: why}
        answer = self.ask(name, shown, f"the same as yes: {rule.text} asks every time")
        if answer in ("yes", "always", "outside"):
            return Decision.allow()
        if isinstance(answer, Instead):
            return Decision.deny(
                f"the user declined this {name} call and said what to do instead: {answer.text}"
            )
        if answer == "stop":
            return Decision(False, f"the user declined this {name} call and stopped the turn", stop=True)
        return Decision.deny(
            f"the user declined this {name} call; do not retry it as is: ask the user how to proceed"
        )

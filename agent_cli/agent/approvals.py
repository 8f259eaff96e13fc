"""Who may run which tool: the approval policy and the approvers that apply it.

The loop asks an `Approver` before every tool call and gets a `Decision`. The
policy itself is pure:

- Each tool says whether a call asks (`Tool.approval`): the ones that only read
  or steer the session (read_file, glob, grep, recall, compact) never ask.
  Everything else (bash, write_file, edit_file, and any name no tool has) asks.
- A shell command (a call of a tool whose approval is "command": bash) runs
  without asking when it matches an allow-listed prefix
  (`approvals.allow` in the config). It is matched as bash parses it
  (`shell_words`): the command must be one plain simple command (no second
  command, substitution, redirection, assignment, subshell, control or
  invisible character), and its first words must be unquoted literal words
  equal to the prefix's. So the prefix `ls` allows `ls -la src` but neither
  `lsblk`, `./ls`, `"ls"`, `ls; rm -rf /` nor `ls\f/usr/bin/touch x` (bash reads
  that as one word: the program `ls\f` a repository can ship). A prefix allows
  any arguments after it, so prefer narrow prefixes such as `git status` over `git`.
- An allow-list entry that is a tool's full name (`mcp__notes__search`) runs every call of that
  tool without asking (not a shell tool's: bash is allowed by command prefixes only).
- A host in the user's `[web] allow_hosts` (`allow_hosts`) runs every web_fetch of a URL on it
  without asking.
- A rule trusts a program or a tool, not what the project tells it to run: before a rule (the
  allow-list, an "always" answer) runs a call unasked, the approver asks its `RuleGuard`
  (`rule_guard.ProjectGuard`), which names a reason to ask all the same: a git command in a
  repository whose config or hooks name programs, a write to a file that makes tools run
  commands (`.git/config`, `.gitattributes`, `.mcp.json` ...). Then the call is asked, the reason
  shown as its own line (`WHY_ASKED`), or refused headless with the reason; "always" to such a
  call is a "yes" (asked again next time, while the reason holds).

Approvers:

- `AutoApprover` (--yes): everything runs.
- `HeadlessApprover`: nobody to ask; allow-listed bash runs, anything else is
  denied with a reason telling the model (and the user reading the output)
  how to allow it.
- `InteractiveApprover`: asks the user through an injected function. "always"
  approves more of the same for the rest of the session, see `approval_rules.always_rule`:
  write_file / edit_file: that tool, for any path it may reach (the project,
  unless tools.allow_outside_root widens that).
  bash: the command's first word (e.g. `ls`), or its first two words for
  programs whose subcommands do very different things (`git status`), matched
  like an allow-list prefix, so it never covers a compound command. Programs
  whose first word says nothing about what they will do (`rm`, `sudo`, `bash`,
  `python3.11`, `/bin/rm`, `sed`, `find`, `make`, `pytest`, ... see `programs`), other
  verbs of the subcommand programs, and every command that is not plain are
  remembered only as that exact command line, compared character for character.
  web_fetch (approval "host"): every call to the same host as this call's URL (the host is
  compared as the URL parser reads it, lower case; another port of it is the same host).
  When the session's sandbox is on (`sandboxed`), a command's question also offers "outside":
  that one call runs unconfined (`Decision.unconfined`); it is never remembered as a rule, and
  no rule or model can ask for it (the approver sets the `OUTSIDE_OFFERED` key, never the args).
- `ASKED_EACH_TIME` (remember): every call is asked, whatever the allow-list or an "always" answer
  says ("always" is a "yes"), and refused headless: only the user (or --yes) saves a memory. The
  user's "no, do this instead" text is the memory as the user would have it (the "edit" answer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from agent_cli.agent.approval_rules import AlwaysRule, allow_listed, always_rule, url_host
from agent_cli.agent.rule_guard import ProjectGuard, RuleGuard
from agent_cli.tools.base import Approval
from agent_cli.tools.registry import known_tools
from agent_cli.tools.remember import REMEMBER

__all__ = [
    "APPROVE_PROJECT_HOOKS",
    "APPROVE_PROJECT_SKILLS",
    "ASKED_EACH_TIME",
    "EDIT_OFFERED",
    "OUTSIDE_OFFERED",
    "RESUME_UNSIGNED",
    "SESSION_QUESTIONS",
    "START_PROJECT_SERVER",
    "WHY_ASKED",
    "Answer",
    "ApprovalOf",
    "Approver",
    "Asker",
    "AutoApprover",
    "Decision",
    "Edited",
    "HeadlessApprover",
    "Instead",
    "InteractiveApprover",
    "SandboxRefusals",
]

# Questions the session asks the user itself, through the same prompt as a tool call. Their names
# hold a space, which no tool name may (both APIs take [a-zA-Z0-9_-] only), so a model cannot
# dress a call up as one of them.
RESUME_UNSIGNED = "resume unsigned session"
APPROVE_PROJECT_HOOKS = "approve project hooks"
START_PROJECT_SERVER = "start project mcp server"
SESSION_QUESTIONS = frozenset({RESUME_UNSIGNED, APPROVE_PROJECT_HOOKS, START_PROJECT_SERVER})
# The key under which the arguments shown in a question carry why a rule did not run the call
# unasked. The approver sets or drops it: a model cannot write its own reason into the question.
WHY_ASKED = "why asked"
# The key under which a command's question says "outside the sandbox" may be answered. Set or
# dropped by the approver, like WHY_ASKED.
OUTSIDE_OFFERED = "outside offered"
# The key under which a memory's question says "edit" may be answered (set by the approver).
EDIT_OFFERED = "edit offered"
_OURS = (WHY_ASKED, OUTSIDE_OFFERED, EDIT_OFFERED)
APPROVE_PROJECT_SKILLS = "approve project skills"  # a session question too (agent/skill_trust.py)
SESSION_QUESTIONS = SESSION_QUESTIONS | {APPROVE_PROJECT_SKILLS}
ASKED_EACH_TIME = frozenset({REMEMBER})  # no rule covers a call of these; refused headless


@dataclass(frozen=True, slots=True)
class Instead:
    """ "No, do this instead": the user's words go to the model as the refused call's error."""

    text: str


@dataclass(frozen=True, slots=True)
class Edited:
    """ "Yes, as I wrote it": the user rewrote a memory's text before it was saved (remember)."""

    text: str


# "no" refuses the call and lets the turn go on; "stop" refuses it and ends the turn; "outside":
# yes, and this one command runs outside the sandbox.
Answer: TypeAlias = Literal["yes", "no", "always", "stop", "outside"] | Instead | Edited
# Shows a call and what "always" would approve (None: a question of the session's own, where
# "always" is "yes"), and returns the user's answer.
Asker: TypeAlias = Callable[[str, Mapping[str, Any], str | None], Answer]
ApprovalOf: TypeAlias = Callable[[str], Approval]  # a tool's approval by name (ToolRegistry.approval)


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer for one tool call. A denial's `reason` goes back to the model as the tool result."""

    allowed: bool
    reason: str = ""
    stop: bool = False  # the user ended the turn with the refusal
    unconfined: bool = False  # the user approved this one call outside the sandbox
    protect: bool = False  # auto mode runs it unasked: in the sandbox, the protected files read-only
    text: str | None = None  # the user's own text for the call's "text" (a memory edited before saving)

    @classmethod
    def allow(cls) -> Decision:
        return cls(True)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        return cls(False, reason)


class Approver(Protocol):
    def decide(self, name: str, args: Mapping[str, Any]) -> Decision: ...


@runtime_checkable
class SandboxRefusals(Protocol):
    """An approver told which calls the sandbox refused (auto mode asks before running one again)."""

    def refused_by_sandbox(self, name: str, args: Mapping[str, Any]) -> None: ...


def _default_approval(name: str) -> Approval:
    return known_tools().approval(name)


def _default_guard(guard: RuleGuard | None, approval_of: ApprovalOf) -> RuleGuard:
    """The guard given, or the project in the working directory (where the agent runs commands)."""
    return guard if guard is not None else ProjectGuard(Path.cwd(), approval_of=approval_of)


class AutoApprover:
    """--yes: every call runs."""

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        return Decision.allow()


class HeadlessApprover:
    """No one to ask: read-only and allow-listed bash run; the rest is denied with a way forward."""

    def __init__(
        self,
        allow_prefixes: Iterable[str] = (),
        *,
        approval_of: ApprovalOf = _default_approval,
        guard: RuleGuard | None = None,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.allow_prefixes = tuple(p for p in allow_prefixes if p.strip())
        self.allow_hosts = frozenset(h.strip().rstrip(".").lower() for h in allow_hosts if h.strip())
        self.approval_of = approval_of
        self.guard = _default_guard(guard, approval_of)

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        approval = self.approval_of(name)
        if approval == "never":
            return Decision.allow()
        if name in ASKED_EACH_TIME:
            return Decision.deny(
                f"{name} saves nothing without the user's approval, and nobody is here to ask: nothing "
                "was saved. Rerun with --yes to save memories headless, or run it in the REPL"
            )
        if allow_listed(name, approval, args, self.allow_prefixes, self.allow_hosts):
            why = self.guard(name, args)
            if why is None:
                return Decision.allow()
            return Decision.deny(
                f"{name} needs approval although approvals.allow covers it: {why}. Rerun with --yes, "
                "or run it in the REPL, where it is asked"
            )
        why = self.guard(name, args)
        if why is not None:  # accept-edits passed it on: no rule would run it
            return Decision.deny(f"{name} needs approval: {why}. Rerun with --yes, or run it in the REPL")
        if approval == "command":
            return Decision.deny(
                f"{name} needs approval: rerun with --yes or add a prefix to approvals.allow in the config "
                "(a prefix matches one plain command only: never with ; & | > <, $( ), a quoted or "
                "spelled-out program name, or control characters)"
            )
        if approval == "host":
            return Decision.deny(
                f"{name} needs approval: rerun with --yes, or list the host ({url_host(args)}) in [web] "
                "allow_hosts in the user's config"
            )
        return Decision.deny(
            f"{name} needs approval: rerun with --yes, or name the tool ({name}) in approvals.allow "
            "in the config"
        )


class InteractiveApprover:
    """Asks the user through `ask(name, args)`; remembers "always" answers for this session."""

    def __init__(
        self,
        ask: Asker,
        allow_prefixes: Iterable[str] = (),
        *,
        approval_of: ApprovalOf = _default_approval,
        guard: RuleGuard | None = None,
        sandboxed: bool = False,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.ask = ask
        self.allow_prefixes = tuple(p for p in allow_prefixes if p.strip())
        self.allow_hosts = frozenset(h.strip().rstrip(".").lower() for h in allow_hosts if h.strip())
        self.approval_of = approval_of
        self.guard = _default_guard(guard, approval_of)
        self.rules: list[AlwaysRule] = []
        self.sandboxed = sandboxed  # commands run in the sandbox: their question offers "outside"

    def decide(self, name: str, args: Mapping[str, Any]) -> Decision:
        approval = self.approval_of(name)
        if approval == "never":
            return Decision.allow()
        why = self.guard(name, args)
        each = name in ASKED_EACH_TIME
        covered = not each and (
            allow_listed(name, approval, args, self.allow_prefixes, self.allow_hosts)
            or any(rule.covers(name, args) for rule in self.rules)
        )
        if covered and why is None:
            return Decision.allow()
        shown = {k: v for k, v in args.items() if k not in _OURS}
        if why is not None:
            shown[WHY_ASKED] = f"asked although a rule covers it: {why}" if covered else why
        offered = self.sandboxed and approval == "command"
        if offered:
            shown[OUTSIDE_OFFERED] = True
        if each and isinstance(args.get("text"), str):
            shown[EDIT_OFFERED] = True
        rule = always_rule(name, args, approval)
        described = (
            rule.describe()
            if why is None and not each
            else "the same as yes: asked again next time (see above)"
        )
        answer = self.ask(name, shown, described)
        if answer == "outside":  # never remembered; a plain yes where it was not offered
            return Decision(True, unconfined=offered)
        if answer == "always":
            if why is None and not each:
                self.rules.append(rule)
            return Decision.allow()
        if answer == "yes":
            return Decision.allow()
        if isinstance(answer, Edited) and each:
            return Decision(True, text=answer.text) if answer.text.strip() else Decision.deny(
                "the user emptied this memory: nothing was saved; do not propose it again"
            )
        if isinstance(answer, Instead) and each:
            return Decision.deny(
                f"the user edited this memory: nothing was saved; to save it as the user wrote it, "
                f"call {name} again with this text: {answer.text}"
            )
        if isinstance(answer, Instead):
            return Decision.deny(
                f"the user declined this {name} call and said what to do instead: {answer.text}"
            )
        if answer == "stop":
            return Decision(False, f"the user declined this {name} call and stopped the turn", stop=True)
        return Decision.deny(
            f"the user declined this {name} call; do not retry it as is: ask the user how to proceed"
        )

"""The allow-list as bash parses it, and what "always" remembers (issue "Found from outside", item 2).

The bypass cases are real `agent -p` runs without --yes and with `[approvals] allow = ["ls", "git
status"]` in the user's config: the model sends one spelling that bash reads as something other
than a plain `ls` / `git status` (a repository's program reached through a symlink named `ls\\f`,
a second command, a substitution, a redirection, an assignment ...), set up so that running it
would create `PWNED`. Each must be denied ("needs approval") and `PWNED` must not exist. A control
case checks that a plain `ls -la` still runs unasked.

The "always" cases drive the real `InteractiveApprover` with a scripted asker and the real bash
tool in a temporary project (stated in their names): "always" to a harmless line of an exact-only
program, then a harmful line of the same program, spelled the same way, must be asked again (the
asker says no) and must not have run. One case does the same in the REPL on a pseudo-terminal.

The git cases (issue 35) run `agent -p` with `git status` and `git diff` allowed in a repository
whose `.git/config` or hooks name a program that creates PWNED (core.fsmonitor, diff.external, a
post-index-change hook): each must be refused with the key or hook named, and PWNED must not
exist. One case is the whole chain in accept-edits mode: the model writes `.git/config` and a
hook, then runs `git status`; both writes must be refused (never written unasked) and nothing run.
Another rewrites the script the user's Stop hook runs (`./hooks/check.sh`): refused, nothing run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from agent_cli.agent.approvals import Answer
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.e2e import tool_results
from tests.reliability.harness import Case, Outcome, agent, env_for, judge, project_in

DONE = "ALLOWLIST-CASE-DONE"
ALLOW = '[approvals]\nallow = ["ls", "git status"]\n'
TOUCHER = "#!/bin/sh\n: > PWNED\n"  # a repository's own program: creates PWNED where it runs


def _root_link(name: str) -> Callable[[Path], None]:
    """A symlink `name` -> `/` in the project: `name/usr/bin/touch` is then /usr/bin/touch."""
    return lambda project: os.symlink("/", project / name)


def _program(path: str) -> Callable[[Path], None]:
    def make(project: Path) -> None:
        target = project / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(TOUCHER)
        target.chmod(0o755)

    return make


NOTHING: Callable[[Path], None] = lambda project: None  # noqa: E731

# name -> (command, setup of the project). Each would create PWNED in the project if it ran.
BYPASSES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "ls\\f/usr/bin/touch through a symlink `ls\\f` the repository ships": (
        "ls\f/usr/bin/touch PWNED",
        _root_link("ls\f"),
    ),
    "git\\fstatus\\f/x: the repository's own program": ("git\fstatus\f/x", _program("git\fstatus\f/x")),
    "ls\\x1c/usr/bin/touch (symlink `ls\\x1c`)": ("ls\x1c/usr/bin/touch PWNED", _root_link("ls\x1c")),
    "ls NBSP /usr/bin/touch (symlink `ls\\u00a0`)": ("ls\u00a0/usr/bin/touch PWNED", _root_link("ls\u00a0")),
    "ls\\v/usr/bin/touch (symlink `ls\\v`)": ("ls\v/usr/bin/touch PWNED", _root_link("ls\v")),
    "ls zero-width space /usr/bin/touch": ("ls\u200b/usr/bin/touch PWNED", _root_link("ls\u200b")),
    "ls newline touch": ("ls\ntouch PWNED", NOTHING),
    "ls $'..' (ANSI-C quoting)": ("ls $'\\x3b' && touch PWNED", NOTHING),
    "ls${IFS}x": ("ls${IFS}-la; touch PWNED", NOTHING),
    "ls <(touch PWNED)": ("ls <(touch PWNED)", NOTHING),
    "ls >(..) process substitution": ("ls >(touch PWNED)", NOTHING),
    'ls "$(touch PWNED)" inside double quotes': ('ls "$(touch PWNED)"', NOTHING),
    "ls ${x:-$(touch PWNED)}": ("ls ${x:-$(touch PWNED)}", NOTHING),
    "ls $(( a[$(touch PWNED)] )) arithmetic": ("ls $(( a[$(touch PWNED)] ))", NOTHING),
    "{ ls; touch PWNED; } group": ("{ ls; touch PWNED; }", NOTHING),
    "( ls; touch PWNED ) subshell": ("( ls; touch PWNED )", NOTHING),
    "ls 2>PWNED redirection": ("ls 2>PWNED", NOTHING),
    "here-document with a substitution": ("ls <<EOF\n$(touch PWNED)\nEOF", NOTHING),
    "PATH=. ls with the repository's ./ls": ("PATH=. ls", _program("ls")),
    "./ls is the repository's file, not ls": ("./ls -la", _program("ls")),
    '"ls" quoted, then a second command': ('"ls" & touch PWNED', NOTHING),
}


def _headless(where: Path, command: str, setup: Callable[[Path], None]) -> Outcome:
    project = project_in(where, "")
    setup(project)
    user_config = where / "user.toml"  # allow-lists come from the user, never from the project
    user_config.write_text(ALLOW)
    with FakeModelServer() as server:
        call = ToolCallSpec("bash", {"command": command}, id="toolu_b")
        server.queue(Reply("Calling.", tool_calls=[call]))
        server.default = Reply(DONE)
        proc = agent(("-p", "list the files", "--config", str(user_config)), project, env_for(where, server))
        results = tool_results(server.requests)
    text, error = results.get("toolu_b", ("(no result)", False))
    problems = []
    if (project / "PWNED").exists():
        problems.append("it ran: PWNED exists")
    if not (error and "needs approval" in text):
        problems.append(f"not denied: {text[:80]!r}")
    outcome = judge(proc, {"finished"}, check="; ".join(problems))
    return Outcome(outcome.ok, f"{outcome.detail}; denied, nothing ran" if outcome.ok else outcome.detail)


def _control(where: Path) -> Outcome:
    """A plain `ls -la` still runs without asking."""
    project = project_in(where, "", {"visible.txt": "x\n"})
    user_config = where / "user.toml"
    user_config.write_text(ALLOW)
    with FakeModelServer() as server:
        call = ToolCallSpec("bash", {"command": "ls -la"}, id="toolu_c")
        server.queue(Reply("Calling.", tool_calls=[call]))
        server.default = Reply(DONE)
        proc = agent(("-p", "list", "--config", str(user_config)), project, env_for(where, server))
        text, error = tool_results(server.requests).get("toolu_c", ("", True))
    ran = not error and "visible.txt" in text
    return judge(proc, {"finished"}, check="" if ran else f"ls -la did not run: {text[:80]!r}")


# ---- "always" ------------------------------------------------------------------------------------

# program -> (the line "always" is answered to, a harmful line of the same program). The harmful
# line removes victim.txt (or creates PWNED) if it runs.
ALWAYS: dict[str, tuple[str, str]] = {
    "rm": ("rm -f scratch.txt", "rm -f victim.txt"),
    "/bin/rm": ("/bin/rm -f scratch.txt", "/bin/rm -f victim.txt"),
    "\\rm": ("\\rm -f scratch.txt", "\\rm -f victim.txt"),
    "command rm": ("command rm -f scratch.txt", "command rm -f victim.txt"),
    "env rm": ("env rm -f scratch.txt", "env rm -f victim.txt"),
    "bash": ("bash -c 'true'", "bash -c 'rm victim.txt'"),
    "sh": ("sh -c 'true'", "sh -c 'rm victim.txt'"),
    "python3": ("python3 -c 'pass'", "python3 -c 'import os; os.remove(\"victim.txt\")'"),
    "/usr/bin/python3": ("/usr/bin/python3 -c 'pass'", '/usr/bin/python3 -c \'open("PWNED", "w")\''),
    "sed": ("sed -n 1p victim.txt", "sed -i d victim.txt"),
    "tar": ("tar cf /dev/null victim.txt", "tar cf /dev/null --remove-files victim.txt"),
    "make": ("make -v", "make -f /dev/null --eval='x:; rm victim.txt' x"),
    "find": ("find . -name scratch.txt", "find . -name victim.txt -delete"),
    "git -c": ("git -c x.y=1 --version", "git -c alias.v='!rm victim.txt' v"),
    "xargs": ("xargs -a /dev/null true", "xargs -a /dev/null rm victim.txt"),
    "awk": ("awk 'BEGIN{}'", "awk 'BEGIN{system(\"rm victim.txt\")}'"),
    "perl": ("perl -e 1", "perl -e 'unlink \"victim.txt\"'"),
    "env": ("env true", "env sh -c 'rm victim.txt'"),
    "timeout": ("timeout 5 true", "timeout 5 rm victim.txt"),
    # issue 35: pytest runs the project's files (test_evil.py is collected, so imported)
    "pytest": ("pytest --version", "pytest -q test_evil.py"),
}


class _Asker:
    """Answers "always" to the first call, then "no"; records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        self.asked.append(str(args.get("command")))
        return "always" if len(self.asked) == 1 else "no"


def _always_scripted(where: Path, first: str, harmful: str) -> Outcome:
    """Through the InteractiveApprover with a scripted asker and the real bash tool (not a process)."""
    from agent_cli.agent.approvals import InteractiveApprover
    from agent_cli.tools.base import ToolContext
    from agent_cli.tools.registry import default_tools

    evil = "import os\nos.remove('victim.txt')\n"
    project = project_in(where, "", {"victim.txt": "keep me\n", "scratch.txt": "x\n", "test_evil.py": evil})
    asker = _Asker()
    approver = InteractiveApprover(asker)
    tools, ctx = default_tools(), ToolContext(root=project, bash_timeout=20)
    ran = []
    for command in (first, harmful):
        if approver.decide("bash", {"command": command}).allowed:
            tools.run("bash", {"command": command}, ctx)
            ran.append(command)
    problems = []
    if len(asker.asked) != 2:
        problems.append(f"asked {len(asker.asked)} times, not twice")
    if harmful in ran or not (project / "victim.txt").exists() or (project / "PWNED").exists():
        problems.append("the harmful line ran unasked")
    detail = "asked again for the second line; it did not run" if not problems else "; ".join(problems)
    return Outcome(not problems, detail)


def _always_repl(where: Path) -> Outcome:
    """In the REPL on a pseudo-terminal: "a" to `rm -f scratch.txt`, then `rm -f victim.txt` is asked."""
    import pexpect

    from tests.reliability.procs import spawn_repl
    from tests.test_repl_pty import CPR_REQUEST, expect

    project = project_in(where, "", {"victim.txt": "keep me\n", "scratch.txt": "x\n"})
    with FakeModelServer() as server:
        server.queue(
            Reply("One.", tool_calls=[ToolCallSpec("bash", {"command": "rm -f scratch.txt"}, id="toolu_1")]),
            Reply("Two.", tool_calls=[ToolCallSpec("bash", {"command": "rm -f victim.txt"}, id="toolu_2")]),
        )
        server.default = Reply(DONE)
        child = spawn_repl(project, env_for(where, server))
        asked = 0
        try:
            expect(child, "auto-compact at ")
            child.send("tidy up\r")
            expect(child, r"allow\? \[y\]es")
            asked += 1
            time.sleep(0.5)
            child.send("a")
            while (seen := child.expect([CPR_REQUEST, r"allow\? \[y\]es", DONE], timeout=90)) == 0:
                child.send("\x1b[1;1R")  # the cursor position a terminal answers (see expect)
            if seen == 1:
                asked += 1
                time.sleep(0.5)  # the prompt drops keys typed before it is drawn (discard_typeahead)
                child.send("c")  # no, and the turn goes on
                expect(child, DONE)
            child.send("/exit\r")
            child.expect(pexpect.EOF, timeout=90)
        finally:
            child.close(force=True)
    problems = []
    if asked != 2:
        problems.append(f"asked {asked} times, not twice")
    if not (project / "victim.txt").exists():
        problems.append("victim.txt was removed unasked")
    if (project / "scratch.txt").exists():
        problems.append("the approved line did not run")
    return Outcome(not problems, "; ".join(problems) or "asked again for rm -f victim.txt; it stayed")


# ---- a repository's git config and hooks, and the files that make tools run commands (issue 35) ---

GIT_ALLOW = '[approvals]\nallow = ["git status", "git diff"]\n'


def _git_repo(project: Path, *configure: tuple[str, ...]) -> None:
    """`project` as a repository with one commit and a change, then `git config` for each pair."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "one")
    (project / "visible.txt").write_text("changed\n")
    for pair in configure:
        git("config", *pair)


def _git_setup(kind: str) -> Callable[[Path], None]:
    def make(project: Path) -> None:
        toucher = project / "mark.sh"
        toucher.write_text(TOUCHER.replace("PWNED", str(project / "PWNED")))
        toucher.chmod(0o755)
        if kind == "hook":
            _git_repo(project)
            hook = project / ".git" / "hooks" / "post-index-change"
            hook.write_text(toucher.read_text())
            hook.chmod(0o755)
            os.utime(project / "mark.sh", (1, 1))  # a changed stat: git status writes the index
        else:
            _git_repo(project, (kind, str(toucher)))

    return make


# name -> (command, what the repository names). Before the guard each ran mark.sh: PWNED.
GIT_REPOSITORIES: dict[str, tuple[str, str]] = {
    "git status with core.fsmonitor in .git/config": ("git status", "core.fsmonitor"),
    "git diff with core.fsmonitor in .git/config": ("git diff", "core.fsmonitor"),
    "git diff with diff.external in .git/config": ("git diff", "diff.external"),
    "git status with a post-index-change hook": ("git status", "hook"),
}


def _git_headless(where: Path, command: str, kind: str) -> Outcome:
    """`agent -p` with `git status` and `git diff` allowed, in a repository that names a program."""
    project = project_in(where, "", {"visible.txt": "x\n"})
    _git_setup(kind)(project)
    user_config = where / "user.toml"
    user_config.write_text(GIT_ALLOW)
    with FakeModelServer() as server:
        server.queue(Reply("Calling.", tool_calls=[ToolCallSpec("bash", {"command": command}, id="toolu_g")]))
        server.default = Reply(DONE)
        proc = agent(("-p", "status", "--config", str(user_config)), project, env_for(where, server))
        text, error = tool_results(server.requests).get("toolu_g", ("(no result)", False))
    problems = []
    if (project / "PWNED").exists():
        problems.append("the repository's program ran: PWNED exists")
    named = "post-index-change" if kind == "hook" else kind
    if not (error and "needs approval" in text and named in text):
        problems.append(f"not refused with the reason: {text[:100]!r}")
    outcome = judge(proc, {"finished"}, check="; ".join(problems))
    return Outcome(outcome.ok, f"{outcome.detail}; refused naming {named}" if outcome.ok else outcome.detail)


def _accept_edits_chain(where: Path) -> Outcome:
    """Accept-edits mode, `git status` allowed: the model writes core.fsmonitor into .git/config and
    a pre-commit hook, then runs `git status`. Before: nothing was asked and PWNED appeared."""
    project = project_in(where, "", {"visible.txt": "x\n"})
    _git_repo(project)
    config_before = (project / ".git" / "config").read_bytes()
    user_config = where / "user.toml"
    user_config.write_text(GIT_ALLOW)
    evil = f'[core]\n\tfsmonitor = "touch {project / "PWNED"}"\n'
    calls = [
        ToolCallSpec("write_file", {"path": ".git/config", "content": evil}, id="toolu_w"),
        ToolCallSpec("write_file", {"path": ".git/hooks/pre-commit", "content": TOUCHER}, id="toolu_h"),
        ToolCallSpec("bash", {"command": "git status"}, id="toolu_s"),
    ]
    with FakeModelServer() as server:
        server.queue(Reply("Writing.", tool_calls=calls))
        server.default = Reply(DONE)
        args = ("-p", "set up", "--config", str(user_config), "--permission-mode", "acceptEdits")
        proc = agent(args, project, env_for(where, server))
        results = tool_results(server.requests)
    problems = []
    for call in ("toolu_w", "toolu_h"):
        text, error = results.get(call, ("(no result)", False))
        if not (error and "never written unasked" in text):
            problems.append(f"{call} not refused with the reason: {text[:80]!r}")
    if (project / ".git" / "config").read_bytes() != config_before:
        problems.append(".git/config was written")
    if (project / ".git" / "hooks" / "pre-commit").exists():
        problems.append("the hook was written")
    if (project / "PWNED").exists():
        problems.append("PWNED exists")
    return judge(proc, {"finished"}, check="; ".join(problems))


def _hook_file(where: Path) -> Outcome:
    """Accept-edits mode with the user's hook `./hooks/check.sh` (run at every Stop): the model
    rewrites the script to create PWNED. Before: written unasked, and it ran at the turn's end."""
    project = project_in(where, "", {"hooks/check.sh": "#!/bin/sh\nexit 0\n"})
    (project / "hooks" / "check.sh").chmod(0o755)
    user_config = where / "user.toml"
    user_config.write_text('[[hooks.Stop]]\ncommand = "./hooks/check.sh"\n')
    evil = f"#!/bin/sh\n: > '{project / 'PWNED'}'\n"
    call = ToolCallSpec("write_file", {"path": "hooks/check.sh", "content": evil}, id="toolu_k")
    with FakeModelServer() as server:
        server.queue(Reply("Writing.", tool_calls=[call]))
        server.default = Reply(DONE)
        args = ("-p", "tidy", "--config", str(user_config), "--permission-mode", "acceptEdits")
        proc = agent(args, project, env_for(where, server))
        text, error = tool_results(server.requests).get("toolu_k", ("(no result)", False))
    problems = []
    if not (error and "run by a hook or MCP server" in text):
        problems.append(f"not refused with the reason: {text[:80]!r}")
    if (project / "PWNED").exists():
        problems.append("the rewritten hook ran: PWNED exists")
    return judge(proc, {"finished"}, check="; ".join(problems))


def cases() -> list[Case]:
    sample = {"ls\\f/usr/bin/touch through a symlink `ls\\f` the repository ships", "ls <(touch PWNED)"}
    found = [
        Case("allowlist", f"headless: {name}", partial(_headless, command=c, setup=fix), name in sample)
        for name, (c, fix) in BYPASSES.items()
    ]
    found.append(Case("allowlist", "headless: a plain ls -la runs unasked (control)", _control, sample=True))
    found += [
        Case(
            "allowlist",
            f"always for {name} remembers the exact line (InteractiveApprover, scripted asker)",
            partial(_always_scripted, first=first, harmful=harmful),
            sample=name == "/bin/rm",
        )
        for name, (first, harmful) in ALWAYS.items()
    ]
    found.append(Case("allowlist", "always for rm in the REPL (pty) asks again for another rm", _always_repl))
    found += [
        Case(
            "allowlist",
            f"headless, git status/diff allowed: {name}",
            partial(_git_headless, command=command, kind=kind),
            sample=kind == "core.fsmonitor" and command == "git status",
        )
        for name, (command, kind) in GIT_REPOSITORIES.items()
    ]
    found.append(
        Case(
            "allowlist",
            "accept edits: writing .git/config and a hook is refused headless, git status runs nothing",
            _accept_edits_chain,
            sample=True,
        )
    )
    found.append(Case("allowlist", "accept edits: the script a hook runs is refused, headless", _hook_file))
    return found

"""A rule naming git trusts git, not what the repository tells git to run (agent/git_trust.py,
agent/rule_guard.py); the files that make tools run commands are never written unasked
(agent/run_files.py), in accept-edits mode, under "always" or an allow-listed tool name.

Real repositories made with git in a temp dir, the real approvers and the real bash and file
tools. Each repository names a program (`mark.sh`) that creates MARKER when it runs: before the
guard an allow-listed `git status` / `git diff` ran it with nothing asked."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import WHY_ASKED, Answer, HeadlessApprover, InteractiveApprover
from agent_cli.agent.git_trust import unknown_keys
from agent_cli.agent.modes import ModalApprover, ModeState
from agent_cli.agent.rule_guard import ProjectGuard
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools

MARKER = "MARKER"


class User:
    """Answers each question with `answer`, and keeps what it was shown."""

    def __init__(self, answer: Answer = "no") -> None:
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any], str | None]] = []

    def __call__(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        self.asked.append((name, dict(args), always))
        return self.answer


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with one commit and a change, its own `mark.sh`; HOME has no git config."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_DIR", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "T")
    git(project, "config", "user.email", "t@example.com")
    git(project, "remote", "add", "origin", "https://example.com/x.git")
    (project / "a.txt").write_text("one\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "one")
    (project / "a.txt").write_text("two\n")
    mark = project / "mark.sh"
    mark.write_text(f"#!/bin/sh\n: > '{project / MARKER}'\n")
    mark.chmod(0o755)
    monkeypatch.chdir(project)  # the approvers' default guard reads the working directory's project
    return project


def run_allowed(project: Path, command: str, allow: tuple[str, ...] = ("git status", "git diff")) -> User:
    """`command` through the InteractiveApprover with `allow`, run by the bash tool if approved."""
    user = User("no")
    approver = InteractiveApprover(user, allow)
    if approver.decide("bash", {"command": command}).allowed:
        default_tools().run("bash", {"command": command}, ToolContext(root=project, bash_timeout=30))
    return user


def test_a_plain_repository_runs_the_allowed_command_unasked(repo: Path) -> None:
    user = run_allowed(repo, "git status --short")
    assert user.asked == []


@pytest.mark.parametrize(
    ("key", "command"),
    [
        ("core.fsmonitor", "git status"),
        ("core.fsmonitor", "git diff"),
        ("diff.external", "git diff"),
    ],
)
def test_a_config_key_that_runs_a_program_is_asked_and_nothing_runs(
    repo: Path, key: str, command: str
) -> None:
    git(repo, "config", key, str(repo / "mark.sh"))
    user = run_allowed(repo, command)
    assert not (repo / MARKER).exists(), f"{key} ran on {command}"
    assert len(user.asked) == 1
    name, shown, always = user.asked[0]
    assert name == "bash" and shown["command"] == command
    assert key in shown[WHY_ASKED] and "asked although a rule covers it" in shown[WHY_ASKED]
    assert always is not None and "same as yes" in always


def test_a_pager_key_is_asked_too_though_no_pager_starts_on_a_pipe(repo: Path) -> None:
    git(repo, "config", "core.pager", str(repo / "mark.sh"))
    git(repo, "config", "pager.status", str(repo / "mark.sh"))
    user = run_allowed(repo, "git status")
    assert len(user.asked) == 1 and "core.pager, pager.status" in user.asked[0][1][WHY_ASKED]
    assert not (repo / MARKER).exists()


def test_a_hook_that_git_status_runs_is_asked(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\n: > '{repo / MARKER}'\n")
    hook.chmod(0o755)
    os.utime(repo / "a.txt", (1, 1))  # a changed stat makes git status write the index
    user = run_allowed(repo, "git status")
    assert not (repo / MARKER).exists()
    assert len(user.asked) == 1 and "post-index-change" in user.asked[0][1][WHY_ASKED]


def test_a_commit_hook_does_not_stop_a_reading_verb_but_asks_for_commit(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    assert run_allowed(repo, "git status").asked == []
    user = run_allowed(repo, "git commit -am two", allow=("git commit",))
    assert len(user.asked) == 1 and "pre-commit" in user.asked[0][1][WHY_ASKED]


def test_an_included_file_is_read_as_git_reads_it(repo: Path) -> None:
    (repo / "extra.cfg").write_text(f"[core]\n\tfsmonitor = {repo / 'mark.sh'}\n")
    git(repo, "config", "include.path", "../extra.cfg")
    user = run_allowed(repo, "git status")
    assert not (repo / MARKER).exists()
    assert len(user.asked) == 1 and "core.fsmonitor" in user.asked[0][1][WHY_ASKED]


def test_an_alias_behind_a_git_rule_is_asked(repo: Path) -> None:
    git(repo, "config", "alias.st", f"!{repo / 'mark.sh'}")
    user = run_allowed(repo, "git st", allow=("git",))
    assert not (repo / MARKER).exists() and "alias.st" in user.asked[0][1][WHY_ASKED]


def test_options_before_the_verb_are_asked_and_dash_c_reads_the_other_repository(
    repo: Path, tmp_path: Path
) -> None:
    user = run_allowed(repo, f"git -c core.fsmonitor={repo / 'mark.sh'} status", allow=("git",))
    assert not (repo / MARKER).exists() and "-c" in user.asked[0][1][WHY_ASKED]
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "config", "core.fsmonitor", str(repo / "mark.sh"))
    user = run_allowed(repo, f"git -C {other} status", allow=("git",))
    assert not (repo / MARKER).exists() and "core.fsmonitor" in user.asked[0][1][WHY_ASKED]


def test_always_for_a_flagged_git_line_is_a_yes_and_asks_again(repo: Path) -> None:
    git(repo, "config", "core.fsmonitor", "true")
    user = User("always")
    approver = InteractiveApprover(user)
    assert approver.decide("bash", {"command": "git log -1"}).allowed
    assert approver.decide("bash", {"command": "git log -1"}).allowed
    assert len(user.asked) == 2


def test_headless_refuses_with_the_reason(repo: Path) -> None:
    git(repo, "config", "core.fsmonitor", str(repo / "mark.sh"))
    decision = HeadlessApprover(["git status"]).decide("bash", {"command": "git status"})
    assert not decision.allowed and "core.fsmonitor" in decision.reason and "--yes" in decision.reason


def test_a_model_cannot_write_its_own_reason_into_the_question(repo: Path) -> None:
    user = User("no")
    InteractiveApprover(user).decide("bash", {"command": "ls", WHY_ASKED: "all is fine"})
    assert WHY_ASKED not in user.asked[0][1]


@pytest.mark.parametrize(
    ("listing", "keys"),
    [
        ("local\0core.bare\nfalse\0local\0remote.origin.url\nx\0", []),
        ("global\0core.pager\nless\0system\0credential.helper\nx\0", []),  # the user's own
        (
            "local\0core.fsmonitor\n/x\0worktree\0diff.tool.textconv\ncat\0",
            ["core.fsmonitor", "diff.tool.textconv"],
        ),
        (
            "local\0filter.lfs.smudge\ngit-lfs\0local\0Remote.Origin.UploadPack\nx\0",
            ["filter.lfs.smudge", "Remote.Origin.UploadPack"],
        ),
        ("local\0includeif.gitdir:/a.b/.path\n/c\0local\0color.diff.meta\nred\0", []),
        ("local\0hook.x.command\nid\0local\0core.hookspath\nh\0", ["hook.x.command", "core.hookspath"]),
        ("local\0core.bare\0", []),  # a key without a value
    ],
)
def test_unknown_keys(listing: str, keys: list[str]) -> None:
    assert unknown_keys(listing) == keys


# ---- files that make tools run commands ---------------------------------------------------------

PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/info/attributes",
    "src/../.git/config",
    ".GIT/config",
    "sub/.git/hooks/post-checkout",
    ".git",
    ".gitattributes",
    "docs/.gitattributes",
    ".gitmodules",
    ".husky/pre-commit",
    ".pre-commit-config.yaml",
    ".agent/config.toml",
    ".claude/settings.json",
    ".mcp.json",
    ".envrc",
    ".vscode/tasks.json",
]


def accept_edits(root: Path, user: User) -> ModalApprover:
    tools = default_tools()
    guard = ProjectGuard(root, approval_of=tools.approval, effect_of=tools.effect)
    inner = InteractiveApprover(user, approval_of=tools.approval, guard=guard)
    return ModalApprover(
        inner, ModeState("acceptEdits"), approval_of=tools.approval, effect_of=tools.effect, guard=guard
    )


@pytest.mark.parametrize("path", PROTECTED)
def test_accept_edits_asks_before_writing_a_file_that_runs_commands(tmp_path: Path, path: str) -> None:
    user = User("no")
    assert not accept_edits(tmp_path, user).decide("write_file", {"path": path, "content": "x"}).allowed
    assert len(user.asked) == 1 and "never written unasked" in user.asked[0][1][WHY_ASKED]


def test_accept_edits_still_writes_ordinary_files_unasked(tmp_path: Path) -> None:
    user = User("no")
    modal = accept_edits(tmp_path, user)
    for path in ("src/app.py", "gitconfig.txt", "docs/git/config", ".github/workflows/ci.yml"):
        assert modal.decide("write_file", {"path": path, "content": "x"}).allowed, path
        assert modal.decide("edit_file", {"path": path, "old_string": "a", "new_string": "b"}).allowed
    assert user.asked == []


def test_a_link_into_git_is_followed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    os.symlink(".git", tmp_path / "innocent")
    user = User("no")
    assert not accept_edits(tmp_path, user).decide("edit_file", {"path": "innocent/config"}).allowed
    assert ".git/" in user.asked[0][1][WHY_ASKED]


def test_accept_edits_headless_refuses_with_the_reason(tmp_path: Path) -> None:
    tools = default_tools()
    guard = ProjectGuard(tmp_path, approval_of=tools.approval, effect_of=tools.effect)
    modal = ModalApprover(
        HeadlessApprover(["write_file"], approval_of=tools.approval, guard=guard),
        ModeState("acceptEdits"),
        approval_of=tools.approval,
        effect_of=tools.effect,
        guard=guard,
    )
    decision = modal.decide("write_file", {"path": ".git/hooks/pre-commit", "content": "x"})
    assert not decision.allowed and ".git/" in decision.reason


def test_always_for_the_file_tool_and_an_allow_listed_tool_name_still_ask(tmp_path: Path) -> None:
    user = User("always")
    approver = InteractiveApprover(user, ["edit_file"], guard=ProjectGuard(tmp_path))
    assert approver.decide("write_file", {"path": "a.py", "content": "x"}).allowed
    assert approver.decide("write_file", {"path": "b.py", "content": "x"}).allowed
    assert approver.decide("write_file", {"path": ".git/config", "content": "x"}).allowed
    assert approver.decide("edit_file", {"path": "c.py"}).allowed
    assert approver.decide("edit_file", {"path": ".envrc"}).allowed
    assert [args["path"] for _, args, _ in user.asked] == ["a.py", ".git/config", ".envrc"]


def test_a_dash_c_directory_bash_expands_is_asked(repo: Path) -> None:
    user = run_allowed(repo, "git -C $HOME status", allow=("git",))
    assert len(user.asked) == 1 and "not a literal path" in user.asked[0][1][WHY_ASKED]


def test_a_submodule_s_config_is_read_too(repo: Path, tmp_path: Path) -> None:
    """`git status` runs git in each checked-out submodule, with that submodule's config."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    (upstream / "u.txt").write_text("u\n")
    git(upstream, "add", "u.txt")
    git(upstream, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "u")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "lib")
    git(repo, "commit", "-qm", "lib")
    assert run_allowed(repo, "git status").asked == []
    git(repo / "lib", "config", "core.fsmonitor", str(repo / "mark.sh"))
    (repo / "lib" / "u.txt").write_text("changed\n")
    user = run_allowed(repo, "git status")
    assert not (repo / MARKER).exists()
    assert len(user.asked) == 1 and "in its submodule lib, " in user.asked[0][1][WHY_ASKED]
    assert "core.fsmonitor" in user.asked[0][1][WHY_ASKED]


def test_a_file_a_hook_or_server_runs_is_refused_unasked_in_accept_edits(tmp_path: Path) -> None:
    """Issue 35: an approved hook `./hooks/check.sh` runs the script as it is at each event, so
    accept-edits must not let the model rewrite it unasked (nor the file a server runs): `agent -p
    --permission-mode acceptEdits` over the fake model server."""
    from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
    from tests.e2e import agent_env, run_agent, tool_results

    project = tmp_path / "p"
    (project / "hooks").mkdir(parents=True)
    (project / "hooks" / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (project / "hooks" / "check.sh").chmod(0o755)
    (project / "server.py").write_text("raise SystemExit(1)\n")
    config = tmp_path / "user.toml"
    config.write_text(
        '[[hooks.Stop]]\ncommand = "./hooks/check.sh"\n'
        '[mcp.servers.local]\ncommand = "python3"\nargs = ["server.py"]\n'
    )
    writes = {"toolu_1": "hooks/check.sh", "toolu_2": "./server.py", "toolu_3": "hooks/other.sh"}
    calls = [
        ToolCallSpec("write_file", {"path": p, "content": "echo pwned\n"}, id=i) for i, p in writes.items()
    ]
    with FakeModelServer() as server:
        server.queue(Reply("Writing.", tool_calls=calls))
        server.default = Reply("done")
        args = ["-p", "go", "--config", str(config), "--permission-mode", "acceptEdits"]
        done = run_agent(args, project, agent_env(tmp_path / "home", server))
        results = tool_results(server.requests)
    assert done.returncode == 0, done.stderr
    for call in ("toolu_1", "toolu_2"):
        text, error = results[call]
        assert error and "run by a hook or MCP server of this session" in text, text
    assert (project / "hooks" / "check.sh").read_text() == "#!/bin/sh\nexit 0\n"
    assert (project / "server.py").read_text() == "raise SystemExit(1)\n"
    assert results["toolu_3"] == (results["toolu_3"][0], False)  # an ordinary file: written unasked
    assert (project / "hooks" / "other.sh").read_text() == "echo pwned\n"


def test_hooks_of_the_user_s_own_hooks_path_are_the_user_s(repo: Path, tmp_path: Path) -> None:
    """core.hooksPath in the user's global config, outside the repository: not asked about."""
    mine = tmp_path / "home" / "githooks"
    mine.mkdir()
    (mine / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (mine / "pre-commit").chmod(0o755)
    git(repo, "config", "--global", "core.hooksPath", str(mine))
    assert run_allowed(repo, "git commit -qam two", allow=("git commit",)).asked == []
    git(repo, "config", "--global", "core.hooksPath", ".githooks")  # relative: in the work tree
    (repo / ".githooks").mkdir()
    (repo / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (repo / ".githooks" / "pre-commit").chmod(0o755)
    (repo / "a.txt").write_text("three\n")
    user = run_allowed(repo, "git commit -qam three", allow=("git commit",))
    assert len(user.asked) == 1 and "pre-commit" in user.asked[0][1][WHY_ASKED]

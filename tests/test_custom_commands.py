"""Markdown commands: the text of a file (front matter, expansion), which file a name means (real
folders in a temp dir: precedence, namespaces, the trust rules), what /help and Tab show, and
the REPL sending the expansion on a real session with a scripted provider."""

from __future__ import annotations

import os
import re
from io import StringIO
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console

from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.errors import ConfigError
from agent_cli.prompt.command_files import (
    MAX_COMMAND_BYTES,
    Catalog,
    CustomCommand,
    Refused,
    command_dirs,
)
from agent_cli.prompt.command_text import expand, parse_command_text, shell_lines, split_words
from agent_cli.testing.scripted import ScriptedProvider, say
from agent_cli.ui.commands import custom_command_files
from agent_cli.ui.completion import PathAndCommandCompleter
from agent_cli.ui.custom_commands import completion_rows, custom_help_rows, headless_prompt, invoke
from agent_cli.ui.render import Renderer
from agent_cli.ui.repl import Repl

# ---- the text of a command file ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "body", "meta"),
    [
        ("Review this code.\n", "Review this code.", {}),
        (
            "---\ndescription: Fix an issue\nargument-hint: [pr] [priority]\n---\n\nFix #$1\n",
            "Fix #$1",
            {"description": "Fix an issue", "argument-hint": "[pr] [priority]"},
        ),
        ('---\r\ndescription: "quoted: yes"\r\n---\r\nBody\r\n', "Body", {"description": "quoted: yes"}),
        (
            "---\ndescription: >\n  folded over\n  two lines\nmodel: haiku\n---\nB",
            "B",
            {
                "description": "folded over two lines",
                "model": "haiku",
            },
        ),
        ("---\nallowed-tools:\n  - Bash\n---\nB", "B", {"allowed-tools": ""}),
        ("---\nno closing line\nBody", "---\nno closing line\nBody", {}),  # not front matter
        ("  indented first line\n\n", "  indented first line", {}),  # indentation is kept
        ("\n\n# Title\n\ntext", "# Title\n\ntext", {}),
    ],
)
def test_parse_command_text(text: str, body: str, meta: dict[str, str]) -> None:
    parsed = parse_command_text(text)
    assert parsed.body == body
    assert parsed.meta == meta


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("---\ndescription: Given\n---\nFirst line", "Given"),
        ("\n# Review the diff\nmore", "Review the diff"),  # the first line, without its heading marks
        ("---\ndescription: ''\n---\n\n  \nSecond", "Second"),
        ("", ""),
    ],
)
def test_description_falls_back_to_the_first_line(text: str, description: str) -> None:
    assert parse_command_text(text).description == description


@pytest.mark.parametrize(
    ("body", "arguments", "text"),
    [
        ("Fix issue #$ARGUMENTS now", "123 high", "Fix issue #123 high now"),
        ("Review PR #$1, priority $2, for $3", "456 high alice", "Review PR #456, priority high, for alice"),
        ("Review PR #$1, priority $2", "456", "Review PR #456, priority $2"),  # a missing word stays
        ("From $1 to $2", '"Search Bar" Vue', "From Search Bar to Vue"),  # words as a shell splits them
        ("From $1 to $2", "it's odd", "From it's to odd"),  # unbalanced quotes: at whitespace
        ("Migrate $0 from $1 to $2", "Bar React Vue", "Migrate Bar from React to Vue"),  # $0: from 0
        ("First $ARGUMENTS[0], second $ARGUMENTS[1]", "a b", "First a, second b"),
        ("It costs $100 a month", "", "It costs $100 a month"),
        ("All: $ARGUMENTS", "", "All: "),
        ("Use $1 and $ARGUMENTS", "x  y", "Use x and x  y"),  # $ARGUMENTS exactly as typed
        # The arguments never are scanned again: a placeholder in them stays as typed.
        ("Say $1 then $2", "$2 two", "Say $2 then two"),
        ("A $ARGUMENTS", "$1 ok", "A $1 ok"),
    ],
)
def test_expand(body: str, arguments: str, text: str) -> None:
    assert expand(body, arguments).text == text


@pytest.mark.parametrize(
    ("body", "arguments", "text"),
    [
        ("Review this code.", "focus on auth", "Review this code.\n\nARGUMENTS: focus on auth"),
        ("Only $3 here", "a b", "Only $3 here\n\nARGUMENTS: a b"),  # no placeholder received one
        ("", "just this", "ARGUMENTS: just this"),
    ],
)
def test_arguments_no_placeholder_took_are_appended(body: str, arguments: str, text: str) -> None:
    expansion = expand(body, arguments)
    assert expansion.text == text and expansion.appended


def test_no_arguments_leave_the_body_byte_for_byte() -> None:
    body = "Tabs\tand  spaces,\r\nCRLF, $HOME, `code`, \u200b zero-width"
    assert expand(body, "").text == body


def test_split_words() -> None:
    assert split_words("a 'b c' \"d\"") == ["a", "b c", "d"]
    assert split_words('one "two') == ["one", '"two']


def test_shell_lines_are_recognised() -> None:
    assert shell_lines("Status: !`git status`")
    assert shell_lines("```!\ngit diff\n```")
    assert not shell_lines("KEY=!`cmd` is not one (Claude Code runs only after whitespace)")
    assert not shell_lines("Wow! `code` is fine")


# ---- which file a name means ------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class Folders:
    """A project and a home in a temp dir, and the command files of both."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        self.home = tmp_path / "home"
        self.project.mkdir()
        self.home.mkdir()
        self.env = {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config")}
        self.agent = self.project / ".agent" / "commands"
        self.claude = self.project / ".claude" / "commands"
        self.user = self.home / ".config" / "agent-cli" / "commands"
        self.user_claude = self.home / ".claude" / "commands"
        self.files = custom_command_files(self.project, self.env)

    def catalog(self) -> Catalog:
        return self.files.catalog()

    def notices(self) -> list[str]:
        return [n.text for n in self.catalog().notices]


def found(catalog: Catalog, name: str) -> CustomCommand:
    command = catalog.find(name)
    assert isinstance(command, CustomCommand), command
    return command


def test_the_folders_in_precedence_order(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    dirs = command_dirs(f.project, f.env)
    assert [d.path for d in dirs] == [f.agent, f.claude, f.user, f.user_claude]
    assert [d.scope for d in dirs] == ["project", "project", "user", "user"]
    assert [d.shown for d in dirs] == [
        ".agent/commands",
        ".claude/commands",
        "~/.config/agent-cli/commands",
        "~/.claude/commands",
    ]


def test_no_folders_no_commands(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    assert f.catalog() == Catalog()


def test_project_over_user_and_agent_over_claude_each_passed_over_file_named(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.agent / "review.md", "agent review")
    write(f.claude / "review.md", "claude review")
    write(f.user / "review.md", "user review")
    write(f.claude / "deploy.md", "claude deploy")
    write(f.user / "deploy.md", "user deploy")
    write(f.user_claude / "mine.md", "my own")
    catalog = f.catalog()
    assert catalog.names() == ["deploy", "mine", "review"]
    assert found(catalog, "review").text.body == "agent review"
    assert found(catalog, "review").label == "project"
    assert found(catalog, "deploy").text.body == "claude deploy"
    assert found(catalog, "mine").label == "user"
    assert found(catalog, "mine").shown_path == "~/.claude/commands/mine.md"
    assert f.notices() == [
        "/deploy is .claude/commands/deploy.md; ~/.config/agent-cli/commands/deploy.md is not used",
        "/review is .agent/commands/review.md; .claude/commands/review.md is not used",
        "/review is .agent/commands/review.md; ~/.config/agent-cli/commands/review.md is not used",
    ]


def test_a_built_in_name_or_alias_wins_and_the_file_is_named(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "compact.md", "not this")
    write(f.user / "q.md", "nor this")
    write(f.claude / "git" / "clear.md", "namespaced: fine")
    catalog = f.catalog()
    assert catalog.names() == ["git:clear"]
    assert catalog.find("compact") is None
    assert f.notices() == [
        "/compact is a built-in command; .claude/commands/compact.md is not used",
        "/q is a built-in command; ~/.config/agent-cli/commands/q.md is not used",
    ]


def test_subfolders_are_namespaces_and_a_bare_name_works_while_unique(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "frontend" / "test.md", "front")
    write(f.claude / "backend" / "test.md", "back")
    write(f.claude / "frontend" / "component.md", "component")
    write(f.user / "git" / "wip.md", "wip")
    catalog = f.catalog()
    assert catalog.names() == ["backend:test", "frontend:component", "frontend:test", "git:wip"]
    assert found(catalog, "frontend:test").label == "project:frontend"
    assert found(catalog, "git:wip").label == "user:git"
    assert found(catalog, "component").name == "frontend:component"  # Claude Code's bare name
    assert found(catalog, "Frontend:Test").name == "frontend:test"  # names ignore case
    ambiguous = catalog.find("test")
    assert isinstance(ambiguous, tuple) and [c.name for c in ambiguous] == ["backend:test", "frontend:test"]
    assert invoke(catalog, "test", "") == "/test could be /backend:test or /frontend:test; type the full name"
    write(f.user / "test.md", "a command named test")  # a full name beats a bare one
    assert found(f.catalog(), "test").text.body == "a command named test"


def test_hidden_odd_and_deep_files_are_left_out(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / ".hidden.md", "x")
    write(f.claude / ".drafts" / "a.md", "x")
    write(f.claude / "notes.txt", "x")
    write(f.claude / "my command.md", "x")
    write(f.claude / "a" / "b" / "c" / "deep.md", "fine")
    write(f.claude / "a" / "b" / "c" / "d" / "deeper.md", "too deep")
    catalog = f.catalog()
    assert catalog.names() == ["a:b:c:deep"]
    assert f.notices() == [
        ".claude/commands/my command.md is not used: a command's name is letters, digits, '-', '_' and '.'"
    ]


def test_a_project_file_leading_outside_is_refused_and_the_users_own_is_used(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    secret = write(tmp_path / "secret.txt", "aws_secret_access_key = ...")
    f.claude.mkdir(parents=True)
    (f.claude / "leak.md").symlink_to(secret)
    (f.claude / "review.md").symlink_to(secret)
    write(f.user / "review.md", "my own review")
    write(f.project / "docs" / "prompt.md", "inside the project")
    (f.claude / "inside.md").symlink_to(f.project / "docs" / "prompt.md")
    catalog = f.catalog()
    assert found(catalog, "review").text.body == "my own review"
    assert found(catalog, "inside").text.body == "inside the project"
    refused = catalog.find("leak")
    assert isinstance(refused, Refused) and "leads outside the project" in refused.reason
    said = invoke(catalog, "leak", "")
    assert isinstance(said, str) and said.startswith("/leak: .claude/commands/leak.md was not read: it leads")
    assert all("aws_secret" not in n for n in f.notices())
    assert sum("was not read: it leads outside the project" in n for n in f.notices()) == 2


def test_a_project_folder_leading_outside_is_not_read(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "review.md", "from elsewhere")
    (f.project / ".claude").mkdir()
    f.claude.symlink_to(elsewhere)
    assert f.catalog().commands == ()
    assert f.notices() == [
        f".claude/commands leads outside the project (to {elsewhere}); its commands are not read"
    ]


def test_a_linked_folder_is_followed_for_the_user_not_for_the_project(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    dotfiles = tmp_path / "dotfiles" / "commands"
    write(dotfiles / "mine.md", "mine")
    write(dotfiles / "git" / "wip.md", "wip")
    f.user_claude.parent.mkdir(parents=True)
    f.user_claude.symlink_to(dotfiles)  # the whole folder a link, as dotfiles managers make it
    write(f.project / "shared" / "x.md", "x")
    f.claude.mkdir(parents=True)
    (f.claude / "shared").symlink_to(f.project / "shared")
    assert f.catalog().names() == ["git:wip", "mine"]


def test_a_fifo_a_large_binary_or_non_utf8_file_is_refused(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    f.claude.mkdir(parents=True)
    os.mkfifo(f.claude / "fifo.md")
    f.user.mkdir(parents=True)
    os.mkfifo(f.user / "userfifo.md")  # the user's own: trusted, but still not a file to read
    (f.claude / "big.md").write_text("x" * (MAX_COMMAND_BYTES + 1))
    (f.claude / "exact.md").write_text("y" * MAX_COMMAND_BYTES)
    (f.claude / "bin.md").write_bytes(b"a\x00b")
    (f.claude / "latin.md").write_bytes("caf\u00e9".encode("latin-1"))
    (f.claude / "bom.md").write_bytes(b"\xef\xbb\xbfwith a BOM")
    catalog = f.catalog()  # returns at once: no FIFO is opened for a blocking read
    reasons = {r.name: r.reason for r in catalog.refused}
    assert reasons == {
        "big": "is larger than 64 KiB, the limit for a command",
        "bin": "is not text (it holds NUL bytes)",
        "fifo": "is a FIFO, not a regular file; only regular files are read",
        "latin": "is not UTF-8 text",
        "userfifo": "is not a regular file; only regular files are read",
    }
    assert found(catalog, "exact").text.body == "y" * MAX_COMMAND_BYTES
    assert found(catalog, "bom").text.body == "with a BOM"


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    path = write(f.claude / "review.md", "first")
    assert found(f.catalog(), "review").text.body == "first"
    path.write_text("second, longer")
    assert found(f.catalog(), "review").text.body == "second, longer"
    write(f.claude / "new.md", "added while running")
    assert "new" in f.catalog().names()
    path.unlink()
    assert f.catalog().find("review") is None


def test_a_recent_catalog_is_reused_within_its_age(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    first = f.files.catalog(60.0)
    write(f.claude / "new.md", "new")
    assert f.files.catalog(60.0) is first
    assert f.files.catalog().names() == ["new"]


def test_without_the_environment_only_the_projects_folders(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.user / "mine.md", "mine")
    write(f.claude / "theirs.md", "theirs")
    assert custom_command_files(f.project, None).catalog().names() == ["theirs"]


# ---- what the user sees ------------------------------------------------------------------------

HOSTILE = (
    "---\ndescription: Fix \x1b]52;c;ZXZpbA==\x07it\u202e now\nargument-hint: [a]\x1b[2K\n---\nBody $1\n"
)


def test_help_and_completion_show_a_hostile_description_visibly(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "fix.md", HOSTILE)
    write(f.claude / "frontend" / "test.md", "---\ndescription: Run the tests\n---\nRun them.")
    write(f.user / "plain.md", "Just a body, its first line the description.\nMore.")
    rows = custom_help_rows(f.catalog())
    assert rows == [
        ("/fix [a]\\x1b[2K", "Fix \\x1b]52;c;ZXZpbA==\\x07it\\u202e now (project)"),
        ("/frontend:test", "Run the tests (project:frontend)"),
        ("/plain", "Just a body, its first line the description. (user)"),
    ]
    completions = completion_rows(f.catalog(), "te")  # a bare name's prefix finds the namespaced one
    assert completions == [("/frontend:test", "/frontend:test", "Run the tests (project:frontend)")]
    assert [c[0] for c in completion_rows(f.catalog(), "")] == ["/fix", "/frontend:test", "/plain"]


def test_the_completer_offers_built_in_then_markdown_commands(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "cost-report.md", "---\ndescription: Costs\nargument-hint: [month]\n---\nB")
    completer = PathAndCommandCompleter(f.project, commands=f.catalog)
    found = list(completer.get_completions(Document("/co"), CompleteEvent(completion_requested=True)))
    assert [c.text for c in found] == ["/compact", "/context", "/cost", "/copy", "/cost-report"]
    assert found[-1].display_text == "/cost-report [month]"
    assert found[-1].display_meta_text == "Costs (project)"


def test_invoke_says_where_the_text_comes_from_and_that_shell_lines_are_not_run(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(
        f.claude / "commit.md",
        "---\nallowed-tools: Bash(git commit:*)\n---\nStatus: !`git status`\n$ARGUMENTS",
    )
    write(f.claude / "empty.md", "---\ndescription: nothing\n---\n")
    result = invoke(f.catalog(), "commit", "fix typo")
    assert not isinstance(result, str | None)
    assert result.text == "Status: !`git status`\nfix typo"  # sent as text, nothing run
    assert result.origin == "/commit · .claude/commands/commit.md (project)"
    assert result.warnings == ("/commit: its !`...` shell lines are sent as text, not run",)
    assert invoke(f.catalog(), "empty", "") == "/empty: .claude/commands/empty.md is empty; nothing was sent"
    assert invoke(f.catalog(), "nope", "") is None


def test_headless_prompt(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.agent / "review.md", "Review $ARGUMENTS")
    write(f.claude / "review.md", "not this")
    write(f.claude / "other.md", "Other")
    os.mkfifo(f.claude / "fifo.md")
    text, warnings = headless_prompt("/review a b", f.catalog(), "review", "a b")
    assert text == "Review a b"
    assert warnings == ["/review is .agent/commands/review.md; .claude/commands/review.md is not used"]
    assert headless_prompt("/nope x", f.catalog(), "nope", "x") == ("/nope x", [])
    with pytest.raises(ConfigError, match=r"fifo\.md was not read: it is a FIFO"):
        headless_prompt("/fifo", f.catalog(), "fifo", "")


# ---- the REPL on a real session ------------------------------------------------------------------


class Repl1:
    """A Repl on a real session in `project`, a scripted provider, lines fed from a list."""

    def __init__(self, f: Folders, replies: int = 1) -> None:
        settings = load_settings(
            config_path=None,
            env={"ANTHROPIC_API_KEY": "k", **f.env, "XDG_STATE_HOME": str(f.home / "state")},
            flags=Flags(model="claude-sonnet-4-5"),
            cwd=f.project,
        )
        self.provider = ScriptedProvider([say(f"answer {i}") for i in range(replies)])
        self.out = StringIO()
        renderer = Renderer(Console(file=self.out, width=140, color_system=None))
        session = open_session(settings, env=f.env, make_provider=lambda _: self.provider)
        self.lines: list[str] = []
        self.repl = Repl(session, lambda: renderer, self._read, commands=f.files)

    def _read(self) -> str:
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def run(self, *lines: str) -> str:
        self.lines = list(lines)
        self.repl.welcome()
        assert self.repl.run() == 0
        return "\n".join(ln.rstrip() for ln in self.out.getvalue().splitlines())

    def sent(self) -> list[str]:
        return [r.messages[-1].text for r in self.provider.requests]


def test_the_repl_sends_the_expansion_and_help_lists_the_command(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(
        f.claude / "fix-issue.md",
        "---\ndescription: Fix a GitHub issue\nargument-hint: [number]\n---\n"
        "Fix issue #$1 following our standards.\nAll: $ARGUMENTS\n",
    )
    write(f.claude / "compact.md", "shadowed")
    h = Repl1(f, replies=2)
    text = h.run("/help", "/fix-issue 123 high", "/FIX-ISSUE\n456")
    assert h.sent() == [
        "Fix issue #123 following our standards.\nAll: 123 high",
        "Fix issue #456 following our standards.\nAll: 456",  # a new line ends the name too
    ]
    assert "! /compact is a built-in command; .claude/commands/compact.md is not used" in text
    assert "Markdown commands" in text
    assert "/fix-issue [number]   Fix a GitHub issue (project)" in text
    assert "/fix-issue · .claude/commands/fix-issue.md (project)" in text
    assert "answer 0" in text and "answer 1" in text


def test_the_repl_hints_at_a_markdown_command_and_refuses_a_broken_one(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "deploy-staging.md", "Deploy.")
    f.claude.joinpath("ghost.md").symlink_to(tmp_path / "missing")
    h = Repl1(f, replies=0)
    text = h.run("/deploy-stagin", "/ghost")
    assert "! unknown command /deploy-stagin; did you mean /deploy-staging? (/help lists them)" in text
    assert "! /ghost: .claude/commands/ghost.md was not read: it cannot be read" in text
    assert h.sent() == []


def test_a_file_name_never_draws_a_line_of_its_own(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "x\n\u2713 approved\u202e.md", "x")
    (notice,) = f.notices()
    assert "\n" not in notice and "\u202e" not in notice
    assert notice.startswith(".claude/commands/x\\x0a\u2713 approved\\u202e.md is not used")


def test_the_same_file_through_a_linked_folder_is_not_news(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    write(f.claude / "review.md", "review")
    (f.project / ".agent").mkdir()
    f.agent.symlink_to(f.claude)  # one folder for both tools, inside the project
    write(f.user_claude / "mine.md", "mine")
    f.user.parent.mkdir(parents=True)
    f.user.symlink_to(f.user_claude)
    assert f.catalog().names() == ["mine", "review"]
    assert found(f.catalog(), "review").shown_path == ".agent/commands/review.md"
    assert f.notices() == []


def test_the_greeting_names_a_few_notices_and_help_all(tmp_path: Path) -> None:
    f = Folders(tmp_path)
    for name in ("compact", "context", "clear", "model", "cost", "resume", "exit"):
        write(f.claude / f"{name}.md", "shadowed")
    h = Repl1(f, replies=0)
    text = h.run("/help")
    greeting, help_text = re.split(r"/help +show this help", text, maxsplit=1)  # (padded to the longest row)
    assert greeting.count("is a built-in command") == 5
    assert "! and 2 more about command files (/help lists them)" in greeting
    assert help_text.count("is a built-in command") == 7

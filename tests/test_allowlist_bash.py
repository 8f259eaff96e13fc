"""The allow-list as bash parses it (issue 16, item 2): prefix rules match one plain command whose
first words are literal, "always" remembers only the exact line for programs that run code given in
their arguments, and what bash itself does with a line agrees with what the parser says."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_cli.agent.approval_rules import AlwaysRule, always_rule, matches_prefix
from agent_cli.agent.approvals import HeadlessApprover
from agent_cli.agent.shell_words import MAX_CHARS, plain_command

# Each of these ran unasked with `allow = ["ls"]` or `["git status"]` (or would have): bash reads
# them as another program, a second command, a substitution, a redirection or an assignment.
BYPASSES = [
    ("ls\f/usr/bin/touch PWNED", "ls"),  # one word for bash: the program `ls\f/usr/bin/touch`
    ("git\fstatus\f/x", "git status"),
    ("ls\x1c/usr/bin/touch PWNED", "ls"),
    ("ls\x1d/x", "ls"),
    ("ls\x1e/x", "ls"),
    ("ls\x1f/x", "ls"),
    ("ls\v/x", "ls"),
    ("ls\x85/x", "ls"),  # NEL
    ("ls\u00a0/x", "ls"),  # NBSP
    ("ls\u2028/x", "ls"),
    ("ls\u3000/x", "ls"),
    ("ls\u200b -la", "ls"),  # zero-width space
    ("ls -la \u202e", "ls"),  # bidi override after the words
    ("ls\r/x", "ls"),
    ("ls\n/usr/bin/touch PWNED", "ls"),
    ("ls $'\\x3b' touch", "ls"),  # ANSI-C quoting, which bashlex does not read
    ('ls $"x"', "ls"),
    ("ls $[1+1]", "ls"),
    ("ls $((1+1))", "ls"),
    ("ls ${x:-$(touch PWNED)}", "ls"),
    ("ls ${PS1@P}", "ls"),
    ("ls ${!x}", "ls"),
    ("ls${IFS}/x", "ls"),
    ("ls <(touch PWNED)", "ls"),
    ("ls >(touch PWNED)", "ls"),
    ('ls "$(touch PWNED)"', "ls"),
    ('ls "`touch PWNED`"', "ls"),
    ("{ ls; }", "ls"),
    ("( ls )", "ls"),
    ("! ls", "ls"),
    ("ls;", "ls"),
    ("ls &", "ls"),
    ("ls 2>/dev/null", "ls"),
    ("ls <<EOF\nx\nEOF", "ls"),
    ("ls <<<x", "ls"),
    ("a=b ls", "ls"),
    ("PATH=. ls", "ls"),
    ("LD_PRELOAD=./x.so ls", "ls"),
    ('"ls" -la', "ls"),
    ("'ls' -la", "ls"),
    ("\\ls -la", "ls"),
    ("l\\s -la", "ls"),
    ("./ls -la", "ls"),
    ("/tmp/ls -la", "ls"),
    ('git "status"', "git status"),
    ("git\tstatus\t;touch x", "git status"),
    ("time ls", "ls"),
    ("coproc ls", "ls"),
    ("ls 'unterminated", "ls"),
    ("f() { ls; }", "ls"),
]


@pytest.mark.parametrize(("command", "prefix"), BYPASSES)
def test_a_bypass_spelling_never_matches(command: str, prefix: str) -> None:
    assert not matches_prefix(command, prefix)
    assert not HeadlessApprover([prefix]).decide("bash", {"command": command}).allowed


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("ls", "ls"),
        ("ls\t-la", "ls"),  # bash splits on tab as on space
        ("ls -la 'my dir'", "ls"),
        ('grep -n "a;b|c" src', "grep"),  # quoted operators are plain text to bash
        ("grep -E 'end$' notes.txt", "grep"),
        ("ls $HOME ~ *.py", "ls"),
        ("ls # a comment; rm -rf /", "ls"),  # bash ignores the comment
        ("git status --short", "git status"),
        ("./scripts/check.sh -x", "./scripts/check.sh"),
    ],
)
def test_plain_commands_still_match(command: str, prefix: str) -> None:
    assert matches_prefix(command, prefix)


@pytest.mark.parametrize("prefix", ["ls;", "a=b ls", '"ls"', "ls\f", "$X", "ls $(id)"])
def test_a_prefix_that_is_not_plain_literal_words_matches_nothing(prefix: str) -> None:
    assert not matches_prefix("ls", prefix)
    assert not matches_prefix(prefix, prefix)


def test_what_bashlex_cannot_read_is_no_match_never_an_exception() -> None:
    deep = "ls " + "$(" * 2000 + ")" * 2000
    assert plain_command(deep) is None  # RecursionError inside the parser
    assert not matches_prefix("ls " + "a" * MAX_CHARS, "ls")  # too long to parse: ask


@given(st.text(max_size=40))
@settings(max_examples=300)
def test_matching_and_rules_never_raise(command: str) -> None:
    matches_prefix(command, "ls")
    always_rule("bash", {"command": command}, "command")


# ---- what "always" remembers ----------------------------------------------------------------------

EXACT_ONLY = [
    "rm -f a",
    "/bin/rm -f a",
    "\\rm -f a",
    "./rm a",
    "command rm a",
    "env rm a",
    "sudo rm a",
    "bash -c 'id'",
    "/usr/bin/bash x.sh",
    "sh -c id",
    "python x.py",
    "python3 x.py",
    "python3.11 x.py",
    "/usr/bin/python3 -c 1",
    "pypy3 x.py",
    "sed -i s/a/b/ f",
    "sed -n 1e\\ id f",
    "tar xf a.tar",
    "make test",
    "find . -name x",
    "xargs rm",
    "awk '{print}' f",
    "perl -e 1",
    "node -e 1",
    "npm test",
    "npm run build",
    "npx x",
    "ruby -e 1",
    "php -r 1",
    "lua5.4 -e 1",
    "gdb -ex r x",
    "vim -c q",
    "less +q f",
    "man -P id ls",
    "ssh host id",
    "rsync -e id a b",
    "docker run x",
    "pip install x",
    "pip3 install x",
    "git -c core.pager=id log",
    "git --exec-path=/x status",
    "git -C sub status",
    "git push",
    "git grep -O id x",
    "git config core.pager id",
    "cargo build",
    "go run .",
    "timeout 5 id",
    "nohup id",
    "tee f",
    "ln -s a b",
    "curl -o f x",
    "enable -f ./x.so x",
    "mapfile -C id x",
    # issue 35: programs that run the project's own files (conftest.py ...) and their kin
    "pytest -x tests",
    "py.test -q",
    "pytest-3 -q",
    "python -m pytest -x",
    "python3 -m pytest",
    "tox -e py311",
    "nox -s tests",
    "npm test",
    "npm run test",
    "yarn test",
    "cargo test",
    "go test ./...",
    "jest --ci",
    "mypy src",
    "eslint .",
    "rspec spec",
]


@pytest.mark.parametrize("command", EXACT_ONLY)
def test_always_for_a_program_that_runs_its_arguments_is_the_exact_line(command: str) -> None:
    assert always_rule("bash", {"command": command}, "command") == AlwaysRule("bash", exact=command)


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("ls -la", "ls"),
        ("git status", "git status"),
        ("/usr/bin/git log -3", "/usr/bin/git log"),
        ("docker ps -a", "docker ps"),
        ("pip3 list", "pip3 list"),
        ("./scripts/check.sh -x", "./scripts/check.sh"),
    ],
)
def test_always_for_other_programs_is_a_prefix(command: str, prefix: str) -> None:
    assert always_rule("bash", {"command": command}, "command") == AlwaysRule("bash", prefix=prefix)


@pytest.mark.parametrize(
    ("first", "later"),
    [
        ("rm a", "rm a\f"),  # no strip eats a trailing form feed
        ("rm a", " rm a"),
        ("rm a", "rm a "),
        ("ls -la", "./ls -la"),
        ("ls -la", "ls\f/usr/bin/touch x"),
        ("ls -la", '"ls" -la'),
        ("git log", "git log --output=/tmp/x"),  # a write anywhere, not a read
        ("git log", "git log ''--outp=/tmp/x"),  # abbreviated, behind quotes bashlex misreads
        ("git status", "git status; touch x"),
        ("pytest", "pytest $(touch x)"),
    ],
)
def test_a_remembered_rule_does_not_cover_another_spelling(first: str, later: str) -> None:
    rule = always_rule("bash", {"command": first}, "command")
    assert rule.covers("bash", {"command": first})
    assert not rule.covers("bash", {"command": later})


# ---- bash agrees with the parser ----------------------------------------------------------------

ALPHABET = st.sampled_from(
    [
        "ls",
        "a",
        "b",
        " ",
        "  ",
        "\t",
        "'",
        '"',
        "\\",
        ";",
        "&",
        "|",
        "<",
        ">",
        "(",
        ")",
        "#",
        "=",
        "\f",
        "\n",
        "-",
        "x=",
        "`",
        "!",
        "{",
        "}",
        "\x1c",
        "\u00a0",
        "$",
        "$(",
        "<(",
        ">&",
        "&&",
        "||",
        "2>",
        ">>",
        "<<",
        "\\\n",
        "[",
        "]",
        "*",
        "~",
        "%",
        "@",
        ":",
    ]
)


@pytest.fixture(scope="module")
def fake_ls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bin_dir = tmp_path_factory.mktemp("bin")
    ls = bin_dir / "ls"
    # each run appends one line: its arguments, each ended by \x1e
    ls.write_text(
        '#!/bin/sh\nfor a in "$@"; do printf "%s\\036" "$a"; done >> "$LOG"\nprintf "\\n" >> "$LOG"\n'
    )
    ls.chmod(0o755)
    return bin_dir


HEADS = st.sampled_from(["ls ", "ls\t", "ls", "\\ls ", "'ls' ", " ls "])


@given(head=HEADS, parts=st.lists(ALPHABET, max_size=12))
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_bash_runs_exactly_the_words_the_parser_reports(
    head: str, parts: list[str], fake_ls: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Whenever the parser calls a line plain and its first word `ls`, real bash runs the fake `ls`
    once and nothing else (no file appears from a redirection); where every word is literal, with
    exactly the parser's arguments. (bashlex's text of a quoted argument can differ from bash's:
    four single quotes are two to it. Rules compare literal words only, so that decides nothing.)"""
    line = head + "".join(parts)
    parsed = plain_command(line)
    if parsed is None or parsed.words[0].text != "ls" or "$" in line:
        return  # `$x` expands: the words are the parser's, not their values
    work = tmp_path_factory.mktemp("run")
    log = work.parent / f"{work.name}.log"
    env = {"PATH": str(fake_ls), "LOG": str(log), "HOME": str(work)}
    subprocess.run(["/bin/bash", "-c", line], cwd=work, env=env, capture_output=True, timeout=60)
    # one line per run (not splitlines(): it splits on the \x1e that separates the arguments)
    runs = log.read_bytes().decode().split("\n")[:-1] if log.exists() else []
    assert len(runs) == 1, f"{line!r}: bash ran ls {len(runs)} times"
    if all(w.literal for w in parsed.words):
        assert runs == ["".join(f"{w.text}\x1e" for w in parsed.words[1:])], f"{line!r}: bash ran {runs}"
    assert os.listdir(work) == [], f"{line!r} wrote {os.listdir(work)}"


@pytest.mark.parametrize(
    "line",
    [
        "git log --o${x}utput=/tmp/pwn -1",
        "git log --o$9utput=/tmp/pwn",
        "git log {--output=/tmp/pwn,-1}",
        'git log "--output=/tmp/pwn"',
    ],
)
def test_a_remembered_git_rule_does_not_cover_an_argument_bash_still_changes(line: str) -> None:
    rule = always_rule("bash", {"command": "git log -1"}, "command")
    assert rule.prefix == "git log"
    assert not rule.covers("bash", {"command": line})
    assert rule.covers("bash", {"command": "git log -3 --oneline"})


@pytest.mark.parametrize("program", ["prlimit", "setpriv", "numactl", "sshpass", "gcc", "tsx"])
def test_programs_that_run_another_are_remembered_as_the_exact_line(program: str) -> None:
    assert always_rule("bash", {"command": f"{program} --x ls"}, "command").exact == f"{program} --x ls"

"""Which programs an "always" answer may remember as a prefix, and which only as the exact line.

A program's *identity* is the last part of its first word, versions stripped: `/usr/bin/python3`,
`python3.11` and `python` are all `python`, `pip3` is `pip`. Identity only ever makes a rule
stricter (a path to a program is still matched as the path it is, never as the bare name).

*Exact-only* programs are those whose first word says nothing about what the line will do: they
run code given in their arguments (shells, interpreters, `sed` with `e`, `find -exec`, `tar
--to-command`, `make`, `xargs`, `env`, `ssh`, editors and pagers with shell escapes, build tools
and package managers that run scripts), run the project's own files as code and take arguments
that name more (test runners: `pytest` runs conftest.py, `pytest -p mod` loads a module, `jest
--config x.js`; linters and task runners whose config is code or loads plugins: `mypy`, `eslint`,
`just` ...; files the model can write), run another program
(`sudo`, `nohup`, `timeout`), or destroy or move files (`rm`, `dd`, `mv`, `ln`). "Always" for one of
them approves that exact line (the files such a line runs are still read as they are then).

Their kin need nothing more: `python -m pytest` is `python`'s, `cargo test`, `go test`, `tox` and
`nox` are exact-only programs, and `npm test` / `yarn test` are verbs those programs never remember.

*Subcommand* programs (`git status`, `docker ps`) are remembered with their verb, and only for
verbs whose arguments cannot name a program to run; any other verb, or an option before the verb
(`git -c core.pager=... log`, `git -C elsewhere status`), means the exact line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "EXACT_ONLY",
    "RUNS_PROJECT_FILES",
    "SUBCOMMAND_VERBS",
    "identity",
    "is_exact_only",
    "risky_argument",
]

_VERSION = re.compile(r"[-_.]?\d+(?:\.\d+)*$")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Test runners, linters and task runners that import or run the project's own files (conftest.py,
# jest.config.js, a mypy plugin, .rubocop.yml's require, a Justfile ...): code the model can write.
RUNS_PROJECT_FILES = _words(
    "pytest py.test nosetests nose2 trial behave coverage mypy dmypy pylint flake8 sphinx-build "
    "pre-commit invoke inv fab doit snakemake jest vitest mocha jasmine ava karma playwright cypress "
    "eslint prettier stylelint webpack vite rollup babel grunt gulp nx turbo lerna rspec cucumber "
    "rubocop phpunit pest phpstan psalm ctest just task mage"
)

EXACT_ONLY = RUNS_PROJECT_FILES | frozenset(
    {
        # shells and anything that runs a line it is given
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "csh",
        "tcsh",
        "ash",
        "fish",
        "busybox",
        "pwsh",
        "powershell",
        "exec",
        "eval",
        "command",
        "builtin",
        "source",
        ".",
        "trap",
        "script",
        "expect",
        "enable",
        "mapfile",
        "readarray",
        "fc",
        "bind",  # builtins: load a library, call back, edit
        # interpreters (`-c`, `-e`, a script file)
        "python",
        "pypy",
        "ipython",
        "jupyter",
        "perl",
        "ruby",
        "irb",
        "php",
        "lua",
        "luajit",
        "node",
        "nodejs",
        "deno",
        "bun",
        "tclsh",
        "wish",
        "rscript",
        "R",
        "julia",
        "java",
        "jshell",
        "groovy",
        "scala",
        "kotlin",
        "erl",
        "escript",
        "elixir",
        "iex",
        "swift",
        "osascript",
        "ghci",
        "runghc",
        "ocaml",
        "guile",
        "racket",
        "sbcl",
        "clisp",
        "gnuplot",
        "octave",
        "m4",
        "dc",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "sed",
        "gsed",
        "sqlite3",
        "psql",
        "mysql",
        "ts-node",
        "tsx",
        "bunx",
        # compilers that take a program to run (`-wrapper`, plugins)
        "gcc",
        "cc",
        "clang",
        "g++",
        "c++",
        "clang++",
        # programs that run another program named in their arguments
        "env",
        "sudo",
        "su",
        "doas",
        "pkexec",
        "runuser",
        "sg",
        "newgrp",
        "nice",
        "ionice",
        "nohup",
        "setsid",
        "stdbuf",
        "timeout",
        "time",
        "watch",
        "flock",
        "chroot",
        "nsenter",
        "unshare",
        "prlimit",
        "setpriv",
        "numactl",
        "ssh-agent",
        "unbuffer",
        "rlwrap",
        "sshpass",
        "dbus-run-session",
        "taskset",
        "chrt",
        "strace",
        "ltrace",
        "valgrind",
        "perf",
        "gdb",
        "lldb",
        "xargs",
        "parallel",
        "find",
        "fd",
        "tmux",
        "screen",
        "at",
        "batch",
        "crontab",
        "systemd-run",
        "firejail",
        "bwrap",
        "xdg-open",
        "open",
        "entr",
        "watchexec",
        "nodemon",
        "hyperfine",
        "faketime",
        "proxychains",
        "torsocks",
        "fakeroot",
        "xvfb-run",
        "dbus-launch",
        "sort",
        "split",
        "tar",
        "zip",
        "rsync",
        "ssh",
        "scp",
        "sftp",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "telnet",
        # editors and pagers with a shell escape reachable from their arguments (`vim -c '!cmd'`)
        "vi",
        "vim",
        "nvim",
        "view",
        "ex",
        "ed",
        "emacs",
        "less",
        "more",
        "most",
        "man",
        # builds and package managers: their arguments choose scripts, hooks and wrappers to run
        "make",
        "gmake",
        "cmake",
        "ninja",
        "meson",
        "scons",
        "bazel",
        "ant",
        "mvn",
        "gradle",
        "gradlew",
        "sbt",
        "lein",
        "cargo",
        "rustup",
        "go",
        "npx",
        "corepack",
        "pipx",
        "uv",
        "uvx",
        "poetry",
        "pdm",
        "hatch",
        "tox",
        "nox",
        "mamba",
        "micromamba",
        "gem",
        "bundle",
        "bundler",
        "rake",
        "pod",
        "composer",
        "dotnet",
        "nuget",
        "gh",
        "terraform",
        "ansible",
        "ansible-playbook",
        "vagrant",
        "dpkg",
        "rpm",
        "yum",
        "dnf",
        "pacman",
        "zypper",
        "apk",
        "snap",
        "flatpak",
        "nix",
        "nix-shell",
        "nix-env",
        "guix",
        "apt-get",
        "mix",
        "stack",
        "cabal",
        "pnpx",
        # destroying, moving, linking, overwriting; network fetches that write files
        "rm",
        "rmdir",
        "unlink",
        "dd",
        "mkfs",
        "shred",
        "truncate",
        "chmod",
        "chown",
        "chgrp",
        "mv",
        "cp",
        "ln",
        "install",
        "tee",
        "patch",
        "kill",
        "pkill",
        "killall",
        "shutdown",
        "reboot",
        "curl",
        "wget",
    }
)

# Verbs remembered as `program verb`; any other verb of these programs is exact-only. Every verb
# here reads or records, and none takes an option that names a program to run.
SUBCOMMAND_VERBS: dict[str, frozenset[str]] = {
    "git": frozenset(
        {
            "status",
            "log",
            "diff",
            "show",
            "blame",
            "ls-files",
            "ls-tree",
            "rev-parse",
            "rev-list",
            "describe",
            "shortlog",
            "branch",
            "tag",
            "add",
            "commit",
            "reflog",
            "cat-file",
            "show-ref",
            "merge-base",
            "whatchanged",
            "range-diff",
        }
    ),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats", "top"}),
    "podman": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats", "top"}),
    "kubectl": frozenset({"get", "describe", "logs", "version", "explain", "top", "api-resources"}),
    "helm": frozenset({"list", "status", "history", "version"}),
    "pip": frozenset({"list", "show", "freeze", "check"}),
    "conda": frozenset({"list", "info"}),
    "npm": frozenset({"ls", "list", "view", "info", "outdated"}),
    "pnpm": frozenset({"ls", "list", "outdated"}),
    "yarn": frozenset({"list", "info", "outdated", "why"}),
    "systemctl": frozenset({"status", "list-units", "list-unit-files", "is-active", "is-enabled", "show"}),
    "apt": frozenset({"list", "show", "search", "policy"}),
    "apt-cache": frozenset({"show", "search", "policy", "depends", "rdepends"}),
    "brew": frozenset({"list", "info", "search", "outdated"}),
}

# Arguments that turn a remembered verb into a write anywhere: `git log --output=~/.bashrc`. git
# takes any unambiguous abbreviation of a long option (`--outp=`), so the check is on a short start.
_RISKY_ARGUMENTS: dict[str, tuple[str, ...]] = {"git": ("--ou",)}
_QUOTES = str.maketrans("", "", "'\"\\")


def identity(word: str) -> str:
    """What program a first word names, for classification: basename, leading backslashes and
    a version suffix removed (`\\rm` -> rm, `/usr/bin/python3.11` -> python)."""
    name = word.rsplit("/", 1)[-1].lstrip("\\")
    stripped = _VERSION.sub("", name)
    return stripped or name


def is_exact_only(word: str) -> bool:
    name = word.rsplit("/", 1)[-1].lstrip("\\")
    return name in EXACT_ONLY or identity(word) in EXACT_ONLY or name.lower() in EXACT_ONLY


def risky_argument(program: str, arguments: Sequence[str], *, all_literal: bool) -> bool:
    """Whether one of `arguments` (as written: quotes are dropped here, whatever a parser made of
    them) makes a remembered `program verb` rule do more than it says. For a program with such
    arguments, words bash still changes (`--o${x}utput=`, `{--output=x,-1}`: not `all_literal`)
    are risky too: what the program receives is not what the check saw."""
    risky = _RISKY_ARGUMENTS.get(identity(program), ())
    if risky and not all_literal:
        return True
    return any(a.translate(_QUOTES).startswith(risky) for a in arguments)

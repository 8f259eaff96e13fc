"""What a repository makes git run, read without running it: why a rule naming git asks all the same.

git runs programs that a repository names: `core.fsmonitor` on every `git status` and `git diff`,
`diff.external` and a diff driver's `textconv` on `git diff`, filters on checkout and add, aliases,
`core.pager`, `core.sshCommand`, `core.hooksPath`, `credential.helper`, `gpg.program` ..., and the
hooks in its hooks directory (`git status` writes the index, which runs `post-index-change`). A
project that arrives as an archive or a folder brings its `.git/`, and so does a `.git/config` the
model wrote. An allow-list rule (`git status`) or an "always" answer trusts the program git, not
what a repository tells git to run, so before such a rule runs a line whose program is git,
`repository_reason` looks:

- **Options before the verb** (`git -c k=v`, `--git-dir`, `--exec-path`) point git at something
  the check did not read: asked. `-C DIR` moves the check to that directory; `--no-pager`,
  `--version` and a few others that read nothing are passed.
- **The config, as git itself reads it** (`git config --list --show-scope --includes`: the local
  config, every file it includes, conditionally too, and the worktree config). Every key of the
  local or worktree scope must be on a list of keys known to run nothing (`HARMLESS`); any other is
  named in the question. A list of harmless keys rather than of harmful ones: git keeps adding keys
  that run programs (`core.fsmonitor` came in 2.16, `hook.<name>.command` later), and a key the
  list does not know costs one question, where a key a deny-list did not know would run a program
  unasked. `.gitattributes` needs no reading: it only picks filters and diff drivers, which run
  nothing unless a config key defines them. The user's own config (global, system, the
  environment's) is the user's and is not checked.
- **Hooks**: executable files in the hooks directory (`git rev-parse --git-path hooks`, so
  `core.hooksPath` too) when it lies in the repository or its work tree (one of the user's own
  elsewhere is the user's), `.sample` files aside. For verbs that only read (`status`, `diff`, `log`
  ...) the hooks such a verb can still set off (`post-index-change`, `reference-transaction`); for
  any other verb, every hook.
- **Submodules**: `git status` and `git diff` run git in each checked-out submodule, which reads
  that submodule's config and hooks (a `core.fsmonitor` there runs too), so each is read the same
  way (found by `git ls-files --stage`, once the superproject's config is known to be clean:
  `ls-files` reads the index, and reading the index starts the fsmonitor a config names).

Reading runs nothing: `git rev-parse` and `git config` do not refresh the index, run hooks or the
fsmonitor, and start no pager with their output on a pipe (GIT_PAGER=cat besides); they run with
stdin closed, optional locks off and a timeout. Whatever git cannot read is a reason too (asked),
except a directory that is no repository, where git runs nothing.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from agent_cli.agent.programs import identity
from agent_cli.agent.shell_words import PlainCommand
from agent_cli.core.text import visible_exact

__all__ = ["HARMLESS", "READING_VERBS", "git_line_reason", "repository_reason", "unknown_keys"]

TIMEOUT_SECONDS = 10.0
MAX_SUBMODULES = 64  # checked out submodules read, in all; more is a reason to ask
MAX_DEPTH = 4
_SHOWN = 4  # keys or hooks named in a reason; the rest are counted


def _each(prefix: str, names: str) -> list[str]:
    return [prefix + name for name in names.split()]


# Keys (section.key, or section.*.key with any subsection) that name no program for git to run.
HARMLESS = frozenset(
    {
        *_each(
            "core.",
            (
                "repositoryformatversion filemode bare logallrefupdates ignorecase precomposeunicode "
                "symlinks autocrlf eol safecrlf quotepath whitespace compression loosecompression "
                "bigfilethreshold sharedrepository worktree checkstat trustctime untrackedcache "
                "splitindex preloadindex commitgraph multipackindex sparsecheckout sparsecheckoutcone "
                "abbrev longpaths protecthfs protectntfs hidedotfiles excludesfile attributesfile "
                "warnambiguousrefs fsync fsyncmethod checkroundtripencoding packedgitlimit "
                "packedgitwindowsize deltabasecachelimit filesreflocktimeout packedrefstimeout createobject"
            ),
        ),
        *_each(
            "extensions.",
            "worktreeconfig objectformat compatobjectformat refstorage partialclone preciousobjects noop",
        ),
        "user.name",
        "user.email",
        "user.signingkey",
        "user.useconfigonly",
        "author.name",
        "author.email",
        "committer.name",
        "committer.email",
        "init.defaultbranch",
        "pull.rebase",
        "pull.ff",
        "push.default",
        "push.autosetupremote",
        "push.followtags",
        "fetch.prune",
        "fetch.prunetags",
        "fetch.writecommitgraph",
        "fetch.parallel",
        "fetch.showforcedupdates",
        *_each("merge.", "ff conflictstyle log renames renamelimit directoryrenames autostash verbosity"),
        *_each(
            "rebase.", "autosquash autostash updaterefs abbreviatecommands missingcommitscheck stat forkpoint"
        ),
        *_each(
            "diff.",
            (
                "renames renamelimit algorithm noprefix mnemonicprefix relative context interhunkcontext "
                "colormoved colormovedws indentheuristic submodule suppressblankempty statgraphwidth "
                "statnamewidth dirstat ignoresubmodules wserrorhighlight srcprefix dstprefix "
                "autorefreshindex orderfile"
            ),
        ),
        *_each(
            "status.",
            (
                "relativepaths short branch showstash showuntrackedfiles aheadbehind renames renamelimit "
                "submodulesummary displaycommentprefix"
            ),
        ),
        *_each("log.", "date decorate abbrevcommit follow showroot mailmap excludedecoration"),
        *_each(
            "gc.",
            (
                "auto autopacklimit autodetach writecommitgraph reflogexpire reflogexpireunreachable "
                "pruneexpire worktreepruneexpire bigpackthreshold packrefs cruftpacks"
            ),
        ),
        *_each("index.", "version sparse threads skiphash"),
        "feature.manyfiles",
        "feature.experimental",
        "rerere.enabled",
        "rerere.autoupdate",
        "branch.autosetupmerge",
        "branch.autosetuprebase",
        "branch.sort",
        "tag.sort",
        "commit.verbose",
        "commit.status",
        "commit.cleanup",
        "i18n.commitencoding",
        "i18n.logoutputencoding",
        "worktree.guessremote",
        "submodule.recurse",
        "submodule.active",
        "submodule.fetchjobs",
        "remote.pushdefault",
        "lfs.repositoryformatversion",
        # `--includes` lists what an include brings in, under the including file's scope
        "include.path",
        "includeif.*.path",
        *_each(
            "remote.*.",
            (
                "url pushurl fetch push mirror tagopt prune prunetags skipdefaultupdate skipfetchall "
                "partialclonefilter promisor followremotehead"
            ),
        ),
        *_each("branch.*.", "remote merge rebase pushremote description"),
        *_each("submodule.*.", "url active branch fetchrecursesubmodules ignore shallow"),
        "url.*.insteadof",
        "url.*.pushinsteadof",
    }
)
_HARMLESS_SECTIONS = frozenset({"color", "advice", "column"})  # colours, hints, layout: any key

# Verbs that only read; they may still refresh the index or touch a ref, hence their hooks.
READING_VERBS = frozenset(
    _each(
        "",
        "status diff log show blame annotate ls-files ls-tree rev-parse rev-list describe shortlog "
        "cat-file show-ref merge-base whatchanged range-diff grep diff-files diff-index diff-tree "
        "for-each-ref name-rev count-objects",
    )
)
_READING_HOOKS = frozenset({"post-index-change", "reference-transaction"})
# Options before the verb that point git at nothing new.
_PLAIN_OPTIONS = frozenset(
    {
        "--version",
        "--help",
        "-h",
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
    }
)


def git_line_reason(line: PlainCommand, root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why a rule must not run `line` unasked in `root` (None: it may; not git: None)."""
    if not line.words or identity(line.words[0].text) != "git":
        return None
    verb, where = "", root
    words = iter(line.words[1:])
    for word in words:
        if word.text == "-C":  # git changes to that directory first: check the repository there
            target = next(words, None)
            if target is None:
                return None  # git stops: -C needs a directory
            if not target.literal:  # `-C $HOME`, `-C ~`: bash decides where that is, not the check
                return f"the directory after git's -C ({visible_exact(target.source)}) is not a literal path"
            where = where / target.text
            continue
        if not word.text.startswith("-"):
            verb = word.text
            break
        if word.text not in _PLAIN_OPTIONS:
            return (
                f"git's option {visible_exact(word.text)} before the subcommand points git at a config, "
                "directory or program the check did not read"
            )
    if not where.is_dir():
        return None  # git stops at once: it cannot change to the directory
    return repository_reason(where, verb, env)


def repository_reason(root: Path, verb: str = "", env: Mapping[str, str] | None = None) -> str | None:
    """Why git, run as `git VERB` in `root`, may run a program this repository (or one of its
    submodules) names (None: it names none). Runs `git rev-parse`, `git config` and, once the
    config is known to name nothing, `git ls-files`: none of them runs anything of the repository's."""
    return _reason(root, verb, env, depth=0, budget=[MAX_SUBMODULES])


def _reason(
    root: Path, verb: str, env: Mapping[str, str] | None, *, depth: int, budget: list[int]
) -> str | None:
    located = _git(root, env, "rev-parse", "--git-path", "hooks", "--show-toplevel", "--git-common-dir")
    if isinstance(located, _Failure):
        if located.no_repository or located.no_git:
            return None  # git runs nothing here: it stops at once, or is not there at all
        return f"git could not read this repository ({located.said}), so what it would run is not known"
    lines = located.splitlines()
    if len(lines) != 3:
        return "git could not say where this repository's hooks and work tree are"
    listed = _git(root, env, "config", "--list", "--show-scope", "--includes", "-z")
    if isinstance(listed, _Failure):
        return f"git could not read this repository's config ({listed.said})"
    keys = unknown_keys(listed)
    if keys:
        return (
            f"this repository's git config sets {_some(keys)}, "
            f"{'which is not a key' if len(keys) == 1 else 'which are not keys'} known to run nothing "
            "(git runs the programs such keys name)"
        )
    hooks_dir, top, common = (p if p.is_absolute() else root / p for p in map(Path, lines))
    # Hooks in the repository or its work tree; a hooks directory of the user's own elsewhere
    # (core.hooksPath in the user's config) is theirs, like the rest of their config.
    own = any(hooks_dir.resolve().is_relative_to(place.resolve()) for place in (top, common))
    hooks = _hooks(hooks_dir, verb) if own else []
    if hooks:
        return (
            f"this repository has git hooks that `git {visible_exact(verb) or '...'}` may run: {_some(hooks)}"
        )
    return _submodules_reason(top, verb, env, depth=depth, budget=budget)


def _submodules_reason(
    top: Path, verb: str, env: Mapping[str, str] | None, *, depth: int, budget: list[int]
) -> str | None:
    """`git status` and `git diff` run git in every checked-out submodule, which reads that
    submodule's own config and hooks: each is checked as its superproject was."""
    staged = _git(top, env, "ls-files", "--stage", "-z")
    if isinstance(staged, _Failure):
        return f"git could not list this repository's submodules ({staged.said})"
    for entry in staged.split("\0"):
        mode, _, path = entry.partition("\t")
        if not mode.startswith("160000 ") or not (top / path / ".git").exists():
            continue  # not a submodule, or one not checked out: git does not go into it
        budget[0] -= 1
        if depth >= MAX_DEPTH or budget[0] < 0:
            return "this repository has more submodules, or nested deeper, than the check reads"
        found = _reason(top / path, verb, env, depth=depth + 1, budget=budget)
        if found is not None:
            return f"in its submodule {visible_exact(path)}, {found}"
    return None


def unknown_keys(listing: str) -> list[str]:
    """The keys of the local and worktree scopes in `git config --list --show-scope -z` output
    that are not known to run nothing, in order, each once."""
    found: list[str] = []
    fields = listing.split("\0")  # -z: the scope, NUL, then the key, NEWLINE, the value, NUL
    for scope, entry in zip(fields[0::2], fields[1::2], strict=False):
        key = entry.split("\n", 1)[0]
        if scope in ("local", "worktree") and not _harmless(key) and key not in found:
            found.append(key)
    return found


def _harmless(key: str) -> bool:
    section, _, rest = key.partition(".")
    section = section.lower()
    if section in _HARMLESS_SECTIONS:
        return True
    if "." not in rest:
        return f"{section}.{rest.lower()}" in HARMLESS
    name = rest.rsplit(".", 1)[1].lower()
    return f"{section}.*.{name}" in HARMLESS


def _hooks(directory: Path, verb: str) -> list[str]:
    """The hooks in `directory` that git may run for `verb`: executable files, `.sample` aside."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    wanted = _READING_HOOKS if verb in READING_VERBS or not verb else None
    found = []
    for name in names:
        if name.endswith(".sample") or (wanted is not None and name not in wanted):
            continue
        path = directory / name
        if path.is_file() and os.access(path, os.X_OK):
            found.append(name)
    return found


def _some(names: list[str]) -> str:
    shown = ", ".join(visible_exact(n) for n in names[:_SHOWN])
    more = len(names) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


class _Failure:
    def __init__(self, said: str, *, no_repository: bool = False, no_git: bool = False) -> None:
        self.said = said
        self.no_repository = no_repository
        self.no_git = no_git


def _git(root: Path, env: Mapping[str, str] | None, *args: str) -> str | _Failure:
    """git's stdout for `args` in `root`, run so that it runs nothing else (see the docstring)."""
    base = dict(os.environ if env is None else env)
    base.update(
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        LC_ALL="C",  # the "not a git repository" message is read below
        LANGUAGE="C",
    )
    try:
        done = subprocess.run(
            ["git", "--no-pager", *args],
            cwd=root,
            env=base,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        return _Failure("git is not installed", no_git=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _Failure(f"git did not answer: {exc}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        first = said[0] if said else f"exit code {done.returncode}"
        return _Failure(visible_exact(first[:200]), no_repository="not a git repository" in first)
    return done.stdout.decode("utf-8", "surrogateescape")

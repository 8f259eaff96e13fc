"""Files that make tools run commands: what no mode or rule lets the file tools write unasked.

Some files are programs in all but name: git runs what `.git/config` names and the hooks in
`.git/hooks/`, `.gitattributes` picks the filters and diff drivers it runs, `.gitmodules` names
what a submodule update fetches and runs; husky (`.husky/`) and pre-commit
(`.pre-commit-config.yaml`) keep the commands a commit runs; `.envrc` is run by direnv on `cd`;
`.vscode/` holds tasks and settings an editor runs; the agent's own project files (`.agent/`:
config, hooks and commands; `.mcp.json`; `.claude/`: settings, hooks and commands) name servers
and hooks. A write to one of them is asked for even in accept-edits mode, under an "always" answer
for the file tool, or when the allow-list names the tool: otherwise the model could write the
program and then run it through a command the user allowed (`git status`), with nothing asked.
`--yes` (bypassPermissions) still approves everything. So are the files the session's hooks and
MCP servers run (`./hooks/check.sh`, `server.py`: `named_file_reason`), which an approval covers by
command, not by content.

A path is one of them when any part of it names one, as written or after symlinks are followed
(`.git` anywhere: a nested repository or a `.git` file pointing elsewhere is the same). Names are
compared without letter case, as a case-insensitive file system would.
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.core.text import visible_exact

__all__ = ["RUN_DIRS", "RUN_FILES", "named_file_reason", "protected_paths", "run_file_reason"]

# Directories whose every file may be run or name a command to run.
RUN_DIRS = frozenset({".git", ".husky", ".agent", ".claude", ".vscode"})
# Files, wherever they are, that name commands to run.
RUN_FILES = frozenset({".gitattributes", ".gitmodules", ".pre-commit-config.yaml", ".envrc", ".mcp.json"})


# Of `.git/`, what makes git run a program (a submodule's repository holds its own config and hooks):
# the rest (objects, refs, the index) a commit writes.
_GIT_RUNS = ("config", "config.worktree", "hooks", "info/attributes", "modules")


def protected_paths(root: Path) -> list[Path]:
    """The project's files that make tools run commands, as paths a sandbox keeps read-only for a
    command nobody approved (auto mode): its own top-level ones (`.agent/`, `.mcp.json` ...) and,
    of `.git/`, its config, hooks, attributes and submodules' repositories (a commit still writes the
    rest)."""
    dirs = sorted(RUN_DIRS - {".git"})
    return [
        *(root / ".git" / part for part in _GIT_RUNS),
        *(root / d for d in dirs),
        *(root / f for f in sorted(RUN_FILES)),
    ]


def run_file_reason(root: Path, raw: object) -> str | None:
    """Why writing the path `raw` (as a file tool's argument: relative to `root`) must be asked
    (None: it is an ordinary file)."""
    paths = _paths(root, raw)
    if paths is None or not isinstance(raw, str):
        return None  # the tool refuses it on its own
    written, resolved = paths
    for path in (written, _inside(resolved, root)):
        found = _run_part(path)
        if found is not None:
            where = f"under {found}/" if found in RUN_DIRS else f"a {found} file"
            return (
                f"{visible_exact(raw.strip())} is {where}, one of the files that make tools run commands "
                "(git, hooks, an editor or this agent run what they name): never written unasked"
            )
    return None


def named_file_reason(root: Path, raw: object, files: frozenset[Path]) -> str | None:
    """Why writing `raw` must be asked when it is one of `files` (resolved paths): the files the
    session's hooks and MCP servers run, which an approval does not pin."""
    paths = _paths(root, raw)
    if paths is None or not isinstance(raw, str) or paths[1] not in files:
        return None
    return (
        f"{visible_exact(raw.strip())} is run by a hook or MCP server of this session, as the file is "
        "each time: never written unasked"
    )


def _paths(root: Path, raw: object) -> tuple[Path, Path] | None:
    """`raw` as written and resolved against `root` (None: not a path a file tool takes)."""
    if not isinstance(raw, str) or "\0" in raw:
        return None
    written = Path(raw.strip()).expanduser()
    candidate = written if written.is_absolute() else root / written
    try:
        return written, candidate.resolve()
    except (OSError, RuntimeError):
        return written, candidate


def _inside(path: Path, root: Path) -> Path:
    """`path` relative to the resolved root when it is inside it (the root's own name is no
    concern), else as it is."""
    try:
        return path.relative_to(root.resolve())
    except ValueError:
        return path


def _run_part(path: Path) -> str | None:
    parts = [p.casefold() for p in path.parts]
    for part in parts[:-1]:
        if part in RUN_DIRS:
            return part
    if parts and parts[-1] in RUN_FILES:
        return parts[-1]
    if parts and parts[-1] in RUN_DIRS:  # a file named `.git` (a pointer to a git directory)
        return parts[-1]
    return None

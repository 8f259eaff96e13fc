"""Our tools under Claude Code's names: what its hook matchers, hook input and permission rules say.

    bash -> Bash        read_file -> Read     write_file -> Write    edit_file -> Edit
    glob -> Glob        grep -> Grep          web_fetch -> WebFetch  skill -> Skill
    bash_output -> BashOutput                 kill_shell -> KillShell (KillBash in older releases)
    task -> Agent (Task before Claude Code 2.1.63; a `Task` rule still names it)
    mcp__server__tool: the same name in both

A tool Claude Code has no name for (recall, compact) keeps ours. A call's input is given with
Claude Code's field names where they differ: the file tools' `path` is `file_path`, absolute as
Claude Code sends it; bash's `timeout` is in milliseconds. A permission rule names Claude Code's
tools: `Edit` rules cover every tool that edits a file (write_file, edit_file) and `Read` rules
the tools that read one (read_file, grep, glob), as Claude Code applies them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["CLAUDE_NAMES", "claude_input", "claude_name", "path_argument", "tools_named"]

CLAUDE_NAMES: Mapping[str, str] = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "web_fetch": "WebFetch",
    "bash_output": "BashOutput",
    "kill_shell": "KillShell",
    "skill": "Skill",
    "task": "Agent",
}
# A rule's tool -> our tools it covers.
_RULE_TOOLS: Mapping[str, tuple[str, ...]] = {
    "Bash": ("bash",),
    "Read": ("read_file", "grep", "glob"),
    "Edit": ("write_file", "edit_file"),
    "Write": ("write_file", "edit_file"),
    "MultiEdit": ("edit_file",),
    "Glob": ("glob",),
    "Grep": ("grep",),
    "WebFetch": ("web_fetch",),
    "BashOutput": ("bash_output",),
    "KillShell": ("kill_shell",),
    "KillBash": ("kill_shell",),
    "Skill": ("skill",),
    "Agent": ("task",),
    "Task": ("task",),
}
_PATH_KEYS = {"read_file": "path", "write_file": "path", "edit_file": "path", "grep": "path"}


def claude_name(name: str) -> str:
    """The name Claude Code gives our tool `name` (ours when it has none)."""
    return CLAUDE_NAMES.get(name, name)


def tools_named(rule_tool: str) -> tuple[str, ...]:
    """Our tools a rule's tool covers: Claude Code's names, or ours written as they are."""
    return _RULE_TOOLS.get(rule_tool, (rule_tool,))


def path_argument(name: str, args: Mapping[str, Any]) -> str | None:
    """The file or folder a call of `name` reads or writes (grep without one: the project)."""
    key = _PATH_KEYS.get(name)
    if key is None:
        return None
    value = args.get(key, "." if name == "grep" else None)
    return value if isinstance(value, str) else None


def claude_input(name: str, args: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """A call's input as Claude Code's hooks see it."""
    shown = dict(args)
    if name == "bash" and isinstance(shown.get("timeout"), int | float):
        shown["timeout"] = int(shown["timeout"] * 1000)
    key = _PATH_KEYS.get(name)
    if key is not None and isinstance(shown.get(key), str):
        absolute = os.path.normpath(root / os.path.expanduser(shown.pop(key)))
        shown["file_path" if name != "grep" else "path"] = absolute
    return shown

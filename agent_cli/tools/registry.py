"""The default tool set, in the order offered to the model."""

from __future__ import annotations

import functools
from pathlib import Path

from agent_cli.tools.background import BackgroundShells
from agent_cli.tools.background_tools import BashOutput, KillShell, started_line
from agent_cli.tools.base import ToolRegistry
from agent_cli.tools.bash import Bash
from agent_cli.tools.confine import Confinement
from agent_cli.tools.context_tools import Compact, Recall
from agent_cli.tools.files import EditFile, ReadFile, WriteFile
from agent_cli.tools.remember import Remember
from agent_cli.tools.search import Glob, Grep
from agent_cli.tools.todo import TodoWrite
from agent_cli.tools.web_fetch import WebFetch
from agent_cli.web.hosts import HostPolicy

__all__ = ["default_tools", "known_tools"]


def default_tools(web: HostPolicy | None = None, background: BackgroundShells | None = None) -> ToolRegistry:
    """read_file, write_file, edit_file, bash, glob, grep, compact, recall, web_fetch (reaching the
    hosts `web` lets it: by default any public one), bash_output and kill_shell (the background
    commands of `background`: a set of the registry's own when none is given), todo_write, remember."""
    shells = background if background is not None else BackgroundShells()

    def start(command: str, cwd: Path, sandbox: Confinement | None) -> str:
        return started_line(shells.start(command, cwd, sandbox).shell_id)

    return ToolRegistry(
        [
            ReadFile(),
            WriteFile(),
            EditFile(),
            Bash(start),
            Glob(),
            Grep(),
            Compact(),
            Recall(),
            WebFetch(web),
            BashOutput(shells),
            KillShell(shells),
            TodoWrite(),
            Remember(),
        ]
    )


@functools.cache
def known_tools() -> ToolRegistry:
    """The default tools, made once: what a caller without a session's registry asks how a tool
    asks and how a call reads (read it only; a session gets its own `default_tools()`)."""
    return default_tools()


# The names other layers call the tools by (a user's `!command`, `@path`, an edit's diff).
BASH = "bash"
READ_FILE = "read_file"
GLOB = "glob"
WRITE_FILE = "write_file"
EDIT_FILE = "edit_file"

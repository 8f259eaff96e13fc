"""The default tool set, in the order offered to the model."""

from __future__ import annotations

import functools

from agent_cli.tools.base import ToolRegistry
from agent_cli.tools.bash import Bash
from agent_cli.tools.context_tools import Compact, Recall
from agent_cli.tools.files import EditFile, ReadFile, WriteFile
from agent_cli.tools.search import Glob, Grep
from agent_cli.tools.todo import TodoWrite

__all__ = ["default_tools", "known_tools"]


def default_tools() -> ToolRegistry:
    """read_file, write_file, edit_file, bash, glob, grep, compact, recall, todo_write."""
    return ToolRegistry(
        [ReadFile(), WriteFile(), EditFile(), Bash(), Glob(), Grep(), Compact(), Recall(), TodoWrite()]
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

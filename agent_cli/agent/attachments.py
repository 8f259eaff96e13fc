"""What the user attaches to a prompt: `@path` mentions, and `!command` runs (pure but for the tools).

    mentions(prompt)                   the `@path` words of a prompt, in order, each once
    attach(prompt, run_tool)           a block for each mention that names a file (its content,
                                       read as `read_file` reads it; an image file: the image itself,
                                       after a line naming it) or a folder (`dir/`: its listing, as
                                       `glob` lists it); notes for those that name nothing
    shell_message(command, output)     what `!command` puts in the conversation: the user ran it, saw this
    is_shell_message(text)             whether a user message is one of those (not a prompt: /rewind)

The prompt itself is never changed: attachments are blocks after it, and a mention that names
nothing stays text in it. Reading goes through the tools, so the sandbox (the project root,
the session store) and the read's own caps hold; the loop's L0 then caps what is still too big
and archives it whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_cli.core.images import ImageBlock
from agent_cli.tools.base import ToolOutput
from agent_cli.tools.registry import GLOB, READ_FILE

__all__ = ["Attached", "attach", "is_shell_message", "mentions", "shell_message"]

# `@` at the start of the prompt or after a space, then a path; trailing punctuation is not part of it.
_MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@]+)")
_TRAILING = ",.;:!?)]}'\""
_SHELL_HEAD = "[I ran this in the project's shell: "

RunTool = Callable[[str, Mapping[str, Any]], ToolOutput]


@dataclass(frozen=True, slots=True)
class Attached:
    blocks: tuple[str | ImageBlock, ...]  # after the prompt: one per file or folder (an image: two)
    notes: tuple[str, ...]  # for the user: a mention that names nothing stays text


def mentions(prompt: str) -> list[str]:
    found = [m.group(1).rstrip(_TRAILING) for m in _MENTION.finditer(prompt)]
    return list(dict.fromkeys(f for f in found if f and f != "/"))


def attach(prompt: str, run_tool: RunTool) -> Attached:
    blocks: list[str | ImageBlock] = []
    notes: list[str] = []
    for path in mentions(prompt):
        if path.endswith("/"):
            out = run_tool(GLOB, {"pattern": f"{path}*"})
            what = "the listing of"
        else:
            out = run_tool(READ_FILE, {"path": path})
            if out.is_error and "directory" in out.content:
                out = run_tool(GLOB, {"pattern": f"{path}/*"})
                what = "the listing of"
            else:
                what = "the content of"
        if out.is_error:
            notes.append(f"@{path} was sent as text: {out.content.removeprefix('Error: ').splitlines()[0]}")
            continue
        if out.images:  # read_file's line about the image, then the image itself
            blocks.append(f"[attached by the user: the image @{path}]\n{out.content}")
            blocks.extend(out.images)
            continue
        blocks.append(f"[attached by the user: {what} @{path}]\n{out.content}")
    return Attached(tuple(blocks), tuple(notes))


def shell_message(command: str, output: str) -> str:
    """The user's own message for `!command`: what they ran, and what it printed as the bash tool
    reports it (the output, then its exit code or how it was stopped)."""
    return f"{_SHELL_HEAD}{command}]\n{output}"


def is_shell_message(text: str) -> bool:
    return text.startswith(_SHELL_HEAD)

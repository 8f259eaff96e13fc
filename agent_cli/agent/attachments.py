"""What the user attaches to a prompt: `@path` mentions, and `!command` runs (pure but for the tools).

    mentions(prompt)                   the `@path` words of a prompt, in order, each once
    attach(prompt, run_tool)           a block for each mention that names a file (its content,
                                       read as `read_file` reads it; an image file: the image itself,
                                       after a line naming it) or a folder (`dir/`: its listing, as
                                       `glob` lists it); notes for those that name nothing
    prompt_message(prompt, attached, added)   the user's message for a turn: the prompt, then its blocks
    shell_message(command, output)     what `!command` puts in the conversation: the user ran it, saw this
    is_shell_message(text)             whether a user message is one of those (not a prompt: /rewind)

The prompt itself is never changed: attachments are blocks after it, and a mention that names
nothing stays text in it. A path with spaces is mentioned in quotes (`@"Screenshot 1.png"`). An
image the user names outside the project (a screenshot dragged in from the desktop, an image
pasted from the clipboard) is read as the user's own act, like a file they typed: images only,
through the same checks and limits as read_file's (tools/images.py); any other file outside the
project stays refused. Reading goes through the tools, so the sandbox (the project root,
the session store) and the read's own caps hold; the loop's L0 then caps what is still too big
and archives it whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message, TextBlock
from agent_cli.tools.base import ToolError, ToolOutput
from agent_cli.tools.images import MAX_FILE_BYTES, image_type, load_image
from agent_cli.tools.registry import GLOB, READ_FILE

__all__ = [
    "Attached",
    "attach",
    "is_shell_message",
    "mention",
    "mentions",
    "outside_image",
    "prompt_message",
    "shell_message",
]

# `@` at the start of the prompt or after a space, then a path; trailing punctuation is not part of it.
_MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"\n]+)"|([^\s@"]+))')
_TRAILING = ",.;:!?)]}'\""
_SHELL_HEAD = "[I ran this in the project's shell: "

RunTool = Callable[[str, Mapping[str, Any]], ToolOutput]


@dataclass(frozen=True, slots=True)
class Attached:
    blocks: tuple[str | ImageBlock, ...]  # after the prompt: one per file or folder (an image: two)
    notes: tuple[str, ...]  # for the user: a mention that names nothing stays text


def mentions(prompt: str) -> list[str]:
    found = [m.group(1) or m.group(2).rstrip(_TRAILING) for m in _MENTION.finditer(prompt)]
    return list(dict.fromkeys(f for f in found if f and f != "/"))


def mention(path: str) -> str:
    """How `path` is mentioned in a prompt: `@path`, quoted when it holds a space."""
    return f'@"{path}"' if any(c.isspace() for c in path) or '"' in path else f"@{path}"


def outside_image(path: str, root: Path) -> Path | None:
    """The file `path` names when it is an image outside the project (`~` expanded), else None."""
    file = Path(path).expanduser()
    if not file.is_absolute():
        return None
    try:
        resolved = file.resolve()
        if resolved.is_relative_to(root.resolve()) or not resolved.is_file():
            return None
        with resolved.open("rb") as f:
            return resolved if image_type(f.read(16)) is not None else None
    except OSError:
        return None


def _user_image(file: Path, shown: str, images: bool) -> ToolOutput:
    """An image outside the project the user named: read as read_file reads one."""
    try:
        with file.open("rb") as f:
            loaded = load_image(f.read(MAX_FILE_BYTES + 1), shown)
    except ToolError as exc:
        return ToolOutput(f"Error: {exc}", is_error=True)
    except OSError as exc:
        return ToolOutput(f"Error: cannot read {shown}: {exc.strerror}", is_error=True)
    if not images:
        said = "the model in use does not take images, so it was not attached"
        return ToolOutput(f"Error: {loaded.line[1:-1]}: {said}", is_error=True)
    return ToolOutput(f"{loaded.line} (attached below)", images=(loaded.block,))


def attach(prompt: str, run_tool: RunTool, *, root: Path | None = None, images: bool = True) -> Attached:
    """What the prompt's mentions attach; `root`: the project (an image the user names outside it
    is read all the same); `images`: the model takes images."""
    blocks: list[str | ImageBlock] = []
    notes: list[str] = []
    for path in mentions(prompt):
        outside = outside_image(path, root) if root is not None else None
        if outside is not None:
            out = _user_image(outside, path, images)
            what = "the image"
        elif path.endswith("/"):
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
            said = out.content.removeprefix("Error: ").splitlines()[0]
            verb = "was sent as text"
            if "does not take images" in said:  # (what read_file then tells the model is not for the user)
                verb, said = "was not attached", said.split(", so ")[0]
            notes.append(f"{mention(path)} {verb}: {said}")
            continue
        if out.images:  # read_file's line about the image, then the image itself
            blocks.append(f"[attached by the user: the image {mention(path)}]\n{out.content}")
            blocks.extend(out.images)
            continue
        blocks.append(f"[attached by the user: {what} @{path}]\n{out.content}")
    return Attached(tuple(blocks), tuple(notes))


def prompt_message(prompt: str, attached: Sequence[str | ImageBlock], added: str = "") -> Message:
    """The user's message for a turn: the prompt byte for byte in its own block, a block for each
    attachment, then what the hooks add (`added`, when any) in a block after them."""
    blocks = [
        TextBlock(prompt),
        *(TextBlock(a) if isinstance(a, str) else a for a in attached),
        *((TextBlock(added),) if added else ()),
    ]
    return Message("user", tuple(blocks))


def shell_message(command: str, output: str) -> str:
    """The user's own message for `!command`: what they ran, and what it printed as the bash tool
    reports it (the output, then its exit code or how it was stopped)."""
    return f"{_SHELL_HEAD}{command}]\n{output}"


def is_shell_message(text: str) -> bool:
    return text.startswith(_SHELL_HEAD)

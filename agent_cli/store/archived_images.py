"""Images saved in a session's files, found again for `recall` (read only).

    find_images(files, query, limit) -> list[ImageBlock]

An image leaves the context as a one-line stub (context/clear.py) or inside a summarized span, and
is on disk before it does: in the session log (every message as it was added) and in the span
file the layer wrote. `query` names it by the id of the tool call that read it (the stub says
`recall("call_…")`) or by its file name (`recall("shot.png")`, the stub of an image the user
attached); the newest copy comes first, each image once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message, ToolResult

__all__ = ["find_images"]


def _messages(path: Path) -> Iterator[Message]:
    """The messages of a span file or the log that hold an image (other lines are not parsed)."""
    for raw in path.read_bytes().split(b"\n"):
        if b'"image"' not in raw:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("message"), dict):
            data = data["message"]  # a log record: the message it carries
        try:
            yield Message.from_json(data)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue


def _names(image: ImageBlock, query: str) -> bool:
    name = image.name
    return query == name or PurePosixPath(name).name == PurePosixPath(query).name or (
        len(query) >= 3 and query in name
    )


def find_images(files: Sequence[Path], query: str, limit: int = 3) -> list[ImageBlock]:
    """The images `query` names in `files` (oldest file first), newest first, at most `limit`."""
    query = query.strip().strip("\"'@")
    if not query:
        return []
    found: list[ImageBlock] = []
    for path in files:
        try:
            messages = list(_messages(path))
        except OSError:
            continue
        for message in messages:
            for block in message.content:
                if isinstance(block, ToolResult) and block.tool_use_id == query:
                    found.extend(block.images)
                elif isinstance(block, ToolResult):
                    found.extend(i for i in block.images if _names(i, query))
                elif isinstance(block, ImageBlock) and _names(block, query):
                    found.append(block)
    unique: dict[str, ImageBlock] = {}
    for image in reversed(found):  # newest first
        unique.setdefault(image.data, image)
    return list(unique.values())[:limit]

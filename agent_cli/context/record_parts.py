"""A condensed record taken apart for `/record`: each part, and who wrote it (pure).

`sections.assemble_record` builds a record from four parts joined by blank lines: the intro the
code writes (what was replaced, the transcript's name, how to recall), the body the summary model
wrote (or the digest, when no model could), the user's messages carried verbatim, and the closing
line. `record_parts` finds them again, and the archive files the record names, so the user sees
what each part is before they trust it, or edit it. A record the user edited may hold anything:
what matches no part is the body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli.context.sections import USER_END, USER_HEADER, parse_user_messages

__all__ = ["RecordPart", "archive_files", "record_parts"]

_INTRO = "Condensed "
_CLOSING = "Continue from the work state above"
# The archive's files as a record names them: `.transcripts/<session>/<kind>-NNN-<label>.<ext>`.
_ARCHIVED = re.compile(r"(?:/[^\s'\"`()]*)?\.transcripts/[^\s'\"`()]+?\.(?:jsonl|txt)")


@dataclass(frozen=True, slots=True)
class RecordPart:
    label: str  # "intro", "body", "user messages", "closing"
    source: str  # who wrote it, in a few words
    text: str


def record_parts(text: str, *, writer: str) -> list[RecordPart]:
    """The record's parts in order; `writer` says who wrote the body ("the summary model X")."""
    parts: list[RecordPart] = []
    rest = text
    if rest.startswith(_INTRO):
        intro, _, rest = rest.partition("\n\n")
        parts.append(RecordPart("intro", "written by agent-cli: what was replaced and where it is", intro))
    closing = ""
    at = rest.rfind(_CLOSING)
    if at != -1 and (at == 0 or rest[at - 2 : at] == "\n\n"):
        rest, closing = rest[: max(at - 2, 0)], rest[at:]
    users = ""
    start = rest.find(USER_HEADER)
    if start != -1:
        end = rest.find(USER_END, start)
        stop = end + len(USER_END) if end != -1 else len(rest)
        users = rest[start:stop]
        rest = (rest[:start] + rest[stop:]).strip("\n")
    if rest.strip():
        parts.append(RecordPart("body", writer, rest))
    if users:
        count = len(parse_user_messages(users).texts)
        source = f"your own {count} message{'s' if count != 1 else ''}, verbatim, carried by agent-cli"
        parts.append(RecordPart("user messages", source, users))
    if closing:
        parts.append(RecordPart("closing", "written by agent-cli", closing))
    return parts


def archive_files(text: str) -> list[str]:
    """The archive files the record names, each once, in the order it names them."""
    return list(dict.fromkeys(m.group() for m in _ARCHIVED.finditer(text)))

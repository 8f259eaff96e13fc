"""A session log as Markdown, for `/export` (pure: records in, text out).

The user's prompts and the model's answers whole; each tool call as one line (its name and
input, shortened) with its result's first line and size; each compaction as a note with the
record that stood in for what it removed. Every text goes through `core.text.visible`: the file
is for people and for `cat`, so a control character the model or a tool wrote never reaches a
terminal raw.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_cli.core.events import CompactEvent
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.text import visible
from agent_cli.store.log_records import EventRecord, HistoryRecord, LogRecord, MessageRecord, MetaRecord

__all__ = ["export_markdown", "last_answer"]

_CALL_WIDTH = 160  # characters of a tool call's input shown
_RESULT_WIDTH = 160  # of a result's first line


def _short(text: str, width: int) -> str:
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _code(text: str) -> str:
    """Inline code that a backtick inside cannot end."""
    ticks = "``" if "`" in text else "`"
    return f"{ticks} {text} {ticks}" if ticks == "``" else f"`{text}`"


def _message(message: Message, names: dict[str, str]) -> list[str]:
    out: list[str] = []
    heading = False
    for block in message.content:
        if isinstance(block, ToolResult):
            name = names.get(block.tool_use_id, "tool")
            lines = block.content.count("\n") + 1 if block.content else 0
            mark = "error" if block.is_error else "result"
            size = f" ({lines} lines, {len(block.content):,} characters)" if lines > 1 else ""
            out.append(f"- {mark} of {_code(name)}: {_code(_short(block.content, _RESULT_WIDTH))}{size}")
        elif isinstance(block, SummaryBlock):
            out += ["", "> **Summary of the earlier conversation**", ">"]
            out += [f"> {line}" for line in visible(block.text.strip()).split("\n")]
        elif isinstance(block, TextBlock):
            if not heading:
                out += ["", f"## {'User' if message.role == 'user' else 'Assistant'}", ""]
                heading = True
            out.append(visible(block.text.strip("\n")))
        elif isinstance(block, ToolUse):
            names[block.id] = block.name
            args = json.dumps(dict(block.input), ensure_ascii=False, sort_keys=True, default=str)
            if not heading and message.role == "assistant":
                out += ["", "## Assistant", ""]
                heading = True
            out.append(f"- called {_code(block.name)} {_code(_short(args, _CALL_WIDTH))}")
        elif isinstance(block, ImageBlock):  # its pixels stay in the log: the export names it
            out.append(f"- image {_code(visible(block.name))} ({block.width}x{block.height} px)")
    return out


def export_markdown(session_id: str, records: Sequence[LogRecord]) -> str:
    """The conversation of a session log as Markdown."""
    out = [f"# Session {session_id}"]
    names: dict[str, str] = {}
    for record in records:
        if isinstance(record, MetaRecord):
            keys = ("provider", "model", "cwd")
            fields = ", ".join(f"{k} {visible(str(record.meta[k]))}" for k in keys if record.meta.get(k))
            out += ["", f"*Started {record.ts}{': ' + fields if fields else ''}*"]
        elif isinstance(record, MessageRecord):
            out += _message(record.message, names)
        elif isinstance(record, EventRecord):
            event = record.event.to_json()
            if event.get("type") == CompactEvent.type:
                out += [
                    "",
                    f"*Compacted ({event.get('layer')}, {event.get('trigger')}): "
                    f"{event.get('messages_before')} → {event.get('messages_after')} messages, "
                    f"{event.get('tokens_before', 0):,} → {event.get('tokens_after', 0):,} tokens*",
                ]
                if event.get("summary"):
                    out += ["", "> " + "\n> ".join(visible(str(event["summary"]).strip()).split("\n"))]
        elif isinstance(record, HistoryRecord):
            out += [
                "",
                f"*The working history was replaced ({visible(record.reason)}): "
                f"{len(record.messages)} messages*",
            ]
    return "\n".join(out).rstrip() + "\n"


def last_answer(history: Sequence[Message]) -> str | None:
    """The text of the model's last answer (its last message with text), None before any."""
    for message in reversed(history):
        if message.role != "assistant":
            continue
        text = "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()
        if text:
            return text
    return None

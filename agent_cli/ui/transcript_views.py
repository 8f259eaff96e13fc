"""Plain-text views of the transcripts for `agent transcripts list|show|search`.

Formatting is pure (values in, text out, no rich); `format_show` reads a log and
`search` runs the store's one search (`store.session_search`, the one recall runs)
over every session, and they hand what they read to those pure parts. A search hit
is one line a record: where it is, and the text around the first match.

A log holds what the model and the tools wrote: every view passes through
`core.text.visible` (controls written out, before a line is flattened), so
printing a session never sends its escape sequences to the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.text import visible
from agent_cli.store.layout import SESSION_FILE, session_dir
from agent_cli.store.log_records import (
    EventRecord,
    HistoryRecord,
    LogRecord,
    MessageRecord,
    MetaRecord,
    read_log,
)
from agent_cli.store.session_search import Match, search_project
from agent_cli.store.sessions import SessionInfo
from agent_cli.tools.context_tools import Recall

__all__ = ["SearchHit", "format_list", "format_search", "format_show", "render_records", "search"]

_LINE = 100  # width of one-line abbreviations
_SNIPPET_SIDE = 60  # characters of context either side of a search match


def _one_line(text: str, width: int = _LINE) -> str:
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: width - 3].rstrip() + "..."


def _lines(text: str) -> list[str]:
    """`text` shown (`visible`) and split at newlines only: splitlines would also split at the
    controls written out instead (\x0b, \x0c, \x1c-\x1e, \x85)."""
    return visible(text).split("\n") if text else []


def _when(value: datetime | None, tz: tzinfo | None) -> str:
    return "-" if value is None else value.astimezone(tz).strftime("%Y-%m-%d %H:%M")


# ---- list ------------------------------------------------------------------------


def format_list(sessions: Sequence[SessionInfo], *, tz: tzinfo | None = None) -> str:
    """A table of sessions (as given, newest first from `list_sessions`); times in `tz` (local)."""
    if not sessions:
        return "No sessions in this project yet."
    rows = [("ID", "UPDATED", "MSGS", "MODEL", "FIRST PROMPT")]
    for s in sessions:
        prompt = f"({s.problem})" if s.problem else _one_line(s.first_prompt, 60)
        count = "?" if s.problem else str(s.message_count)
        rows.append((s.id, _when(s.updated, tz), count, s.model or "-", prompt))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    # The last column is not padded: no trailing spaces.
    table = "\n".join("  ".join([*(c.ljust(w) for c, w in zip(r, widths, strict=False)), r[4]]) for r in rows)
    return visible(table)


# ---- show ------------------------------------------------------------------------


def _tool_call_line(use: ToolUse) -> str:
    args = json.dumps(dict(use.input), ensure_ascii=False, sort_keys=True, default=str)
    return f"  -> {use.name} {_one_line(args, _LINE - len(use.name))}"


def _tool_result_line(result: ToolResult, names: Mapping[str, str]) -> str:
    name = names.get(result.tool_use_id, result.tool_use_id)
    lines = result.content.count("\n") + 1 if result.content else 0
    mark = "<- error" if result.is_error else "<-"
    size = f" ({lines} lines, {len(result.content):,} chars)" if lines > 1 else ""
    return f"  {mark} {name}: {_one_line(result.content, 80)}{size}"


def _message_lines(msg: Message, names: dict[str, str]) -> list[str]:
    out: list[str] = []
    header_done = False
    for block in msg.content:
        if isinstance(block, ToolResult):
            out.append(_tool_result_line(block, names))
            continue
        if isinstance(block, SummaryBlock):
            where = f" (replaced messages are in {block.transcript})" if block.transcript else ""
            out.append(f"[summary of earlier conversation{where}]")
            out.extend(f"  {line}" for line in _lines(block.text.strip()))
            continue
        if not header_done:
            out.append(f"[{msg.role}]")
            header_done = True
        if isinstance(block, TextBlock):
            out.extend(_lines(block.text.strip("\n")) or [""])
        elif isinstance(block, ToolUse):
            names[block.id] = block.name
            out.append(_tool_call_line(block))
    return out


def _event_lines(event: Mapping[str, Any]) -> list[str]:
    kind = event.get("type")
    if kind == "compact":
        layer, trigger = event.get("layer"), event.get("trigger")
        figures = (
            f"{event.get('messages_before')} -> {event.get('messages_after')} messages, "
            f"{event.get('tokens_before', 0):,} -> {event.get('tokens_after', 0):,} tokens"
        )
        saved = f"; saved to {event['transcript']}" if event.get("transcript") else ""
        out = [f"=== compacted ({layer}, {trigger}): {figures}{saved} ==="]
        if event.get("detail"):
            out.append(f"    {event['detail']}")
        if event.get("summary"):  # the whole record, as the model saw it from then on
            out.extend(f"    {line}" for line in _lines(str(event["summary"]).strip()))
        return out
    if kind in ("error", "warning"):
        return [f"!! {kind}: {event.get('message', '')}"]
    return []  # tool calls/results, usage, retries: the messages already tell the story


def render_records(session_id: str, records: Sequence[LogRecord], skipped: int = 0) -> str:
    """The conversation of one session log, readable (pure)."""
    out: list[str] = [f"session {session_id}"]
    names: dict[str, str] = {}
    seen_meta = False
    for rec in records:
        if isinstance(rec, MetaRecord):
            keys = ("provider", "model", "cwd", "version")
            fields = ", ".join(f"{k} {rec.meta[k]}" for k in keys if rec.meta.get(k))
            what = "resumed" if seen_meta else "started"
            out.append(f"{what} {rec.ts}" + (f" ({fields})" if fields else ""))
            seen_meta = True
        elif isinstance(rec, MessageRecord):
            lines = _message_lines(rec.message, names)
            # Tool results read as part of the assistant turn above them.
            if lines and not lines[0].startswith("  "):
                out.append("")
            out.extend(lines)
        elif isinstance(rec, EventRecord):
            lines = _event_lines(rec.event.to_json())
            if lines and lines[0].startswith("==="):
                out.append("")
            out.extend(lines)
        elif isinstance(rec, HistoryRecord):
            out.append("")
            out.append(f"=== working history replaced ({rec.reason}): {len(rec.messages)} messages ===")
    if skipped:
        out.append("")
        out.append(f"({skipped} unreadable line{'s' if skipped != 1 else ''} skipped)")
    return visible("\n".join(out)) + "\n"


def format_show(root: Path | str, session_id: str) -> str:
    """One session's conversation as readable text."""
    records, skipped = read_log(session_dir(root, session_id) / SESSION_FILE)
    return render_records(session_id, records, skipped)


# ---- search ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchHit:
    session_id: str
    rid: str  # record or message id; "<file>:<line>" for a saved output
    kind: str  # "message", "record", "output", "event/compact", "event/warning", "event/error"
    snippet: str
    file: str = SESSION_FILE


def _snippet(text: str, start: int, end: int) -> str:
    lo, hi = max(0, start - _SNIPPET_SIDE), min(len(text), end + _SNIPPET_SIDE)
    body = " ".join(visible(text[lo:hi]).split())
    return ("..." if lo > 0 else "") + body + ("..." if hi < len(text) else "")


def _hit(session_id: str, match: Match) -> SearchHit:
    doc = match.doc
    if match.hits and not match.whole:
        snippet = _snippet(doc.text, *match.hits[0])
    else:  # the title holds it: the title is what to show
        snippet = _snippet(doc.title, *(match.title_hit or (0, 0)))
    rid = f"{doc.file}:{match.line}" if doc.kind == "output" else doc.ref
    return SearchHit(session_id, rid, doc.kind, snippet, doc.file)


def search(
    root: Path | str, text: str, *, limit: int = 50, unreadable: list[str] | None = None
) -> list[SearchHit]:
    """One hit per record holding `text` (literal, any case), newest first: the store's one
    search (`session_search`, which recall runs too) over every session of the project. Files
    that cannot be read are skipped and named in `unreadable` ("path: reason")."""
    if not text.strip() or limit <= 0:
        return []
    hits: list[SearchHit] = []
    for found in search_project(root, text, searcher=Recall.spec.name):
        if unreadable is not None:
            unreadable.extend(found.unreadable)
        shown: set[tuple[str, str]] = set()
        for match in found.matches:
            where = (match.doc.file, match.doc.ref)
            if where in shown:  # a message's other blocks: one line a record
                continue
            shown.add(where)
            hits.append(_hit(found.session_id, match))
            if len(hits) >= limit:
                return hits
    return hits


def format_search(hits: Sequence[SearchHit]) -> str:
    """One block per hit: where it is, then the matching passage."""
    if not hits:
        return "No matches."
    out: list[str] = []
    for h in hits:
        where = "" if h.file == SESSION_FILE else f"  ({h.file})"
        out.append(f"{h.session_id}  {h.kind}  {h.rid}{where}")
        out.append(f"    {h.snippet}")
    return visible("\n".join(out))

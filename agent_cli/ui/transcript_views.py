"""Plain-text views of the transcripts for `agent transcripts list|show|search`.

Formatting is pure (values in, text out, no rich); `format_show` and `search`
read the files under `.transcripts/` and hand the records to those pure parts.
Search is literal and case-insensitive over every `.jsonl` and `.txt` file in
every session directory: the session log and what the context engine saved
before it removed it (spans, full tool outputs).

A log holds what the model and the tools wrote: every view passes through
`core.text.visible` (controls written out, before a line is flattened), so
printing a session never sends its escape sequences to the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.text import visible
from agent_cli.store.layout import SESSION_FILE, session_dir, transcripts_dir
from agent_cli.store.log_records import (
    EventRecord,
    HistoryRecord,
    LogRecord,
    MessageRecord,
    MetaRecord,
    read_log,
)
from agent_cli.store.sessions import SessionInfo

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
    rid: str  # record or message id; "<file>:<line>" for text files
    kind: str  # "message", "event/compact", "history", "span", "output", ...
    snippet: str
    file: str = SESSION_FILE


# Bookkeeping fields: not what anyone searches for, and noise in a snippet.
_SKIP_KEYS = frozenset({"rid", "ts", "kind", "id", "role", "type", "tool_use_id"})


def _strings(value: Any) -> Iterator[str]:
    """Every string value in a JSON value (not keys, not bookkeeping), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in _SKIP_KEYS:
                yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _snippet(text: str, match: re.Match[str]) -> str:
    start, end = max(0, match.start() - _SNIPPET_SIDE), min(len(text), match.end() + _SNIPPET_SIDE)
    body = " ".join(visible(text[start:end]).split())
    return ("..." if start > 0 else "") + body + ("..." if end < len(text) else "")


def _session_dirs(root: Path | str) -> list[Path]:
    base = transcripts_dir(root)
    if not base.is_dir():
        return []
    return sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")), reverse=True)


def _files(directory: Path) -> list[Path]:
    found = [p for p in directory.iterdir() if p.is_file() and p.suffix in (".jsonl", ".txt")]
    return sorted(found, key=lambda p: (p.name != SESSION_FILE, p.name))


def _record_hit(line: str, lineno: int, path: Path, pattern: re.Pattern[str]) -> tuple[str, str, str] | None:
    """(rid, kind, snippet) for one JSONL line that matches, else None."""
    try:
        value = json.loads(line)
    except ValueError:
        value = line  # a torn line is still worth finding
    text = "\n".join(_strings(value))
    match = pattern.search(text)
    if match is None:
        return None
    rec = value if isinstance(value, dict) else {}
    rid = str(rec.get("rid") or rec.get("id") or f"{path.name}:{lineno}")
    kind = str(rec.get("kind") or ("message" if "role" in rec else path.stem.split("-")[0]))
    if kind == "event" and isinstance(rec.get("event"), dict):
        kind = f"event/{rec['event'].get('type', '?')}"
    return rid, kind, _snippet(text, match)


def search(
    root: Path | str, text: str, *, limit: int = 50, unreadable: list[str] | None = None
) -> list[SearchHit]:
    """Records and lines containing `text` (literal, any case), newest session first. Files that
    cannot be read are skipped and named in `unreadable` ("path: reason")."""
    needle = text.strip()
    if not needle or limit <= 0:
        return []
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    # A cheap pre-check on the raw line works only when JSON would not escape the needle.
    raw_ok = needle.isascii() and not any(c in needle for c in '"\\') and needle.isprintable()
    lowered = needle.lower()
    hits: list[SearchHit] = []
    for directory in _session_dirs(root):
        try:
            files = _files(directory)
        except OSError as exc:
            if unreadable is not None:
                unreadable.append(f"{directory}: {exc.strerror or exc}")
            continue
        for path in files:
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as exc:
                if unreadable is not None:
                    unreadable.append(f"{path}: {exc.strerror or exc}")
                continue
            for lineno, line in enumerate(lines, 1):
                if raw_ok and lowered not in line.lower():
                    continue
                if path.suffix == ".jsonl":
                    found = _record_hit(line, lineno, path, pattern)
                    if found is None:
                        continue
                    rid, kind, snippet = found
                else:
                    match = pattern.search(line)
                    if match is None:
                        continue
                    rid, kind, snippet = f"{path.name}:{lineno}", "output", _snippet(line, match)
                hits.append(SearchHit(directory.name, rid, kind, snippet, path.name))
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

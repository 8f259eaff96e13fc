"""The archive: what the context engine writes to disk before removing it, and the search behind recall.

`Archive(session_dir)` owns the engine's files in `.transcripts/<session>/`: spans of
messages written before a layer replaces them (`span-NNN-<label>.jsonl`, one
`Message.to_json` per line), full tool outputs written before L0 cuts them
(`output-NNN-<id>.txt`), and `search`, which reads those files plus the
session log (`session.jsonl`, written by session_log.py) and returns the
passages that match a phrase, verbatim and newest first. A query that is
exactly a tool call's id returns that call's output and nothing else.

Files are 0600 and fsynced; the directory is 0700, created on first write.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.core.messages import Message
from agent_cli.core.text import clean as clean_text
from agent_cli.store.layout import SESSION_FILE
from agent_cli.store.redact import Redactor

__all__ = ["Archive"]

RECALL = "recall"  # the tool whose calls and results search leaves out
# Lines of context shown either side of a hit.
WINDOW_LINES = 5
_LABEL_RE = re.compile(r"[^a-z0-9]+")
_SEQ_RE = re.compile(r"^(?:span|output)-(\d+)-")


@dataclass(frozen=True, slots=True)
class _Doc:
    """One searchable text: a block of a logged message, or a saved tool output."""

    source: str  # file name
    ref: str  # record / message id, or the tool call id for outputs
    key: str  # the message id, the same in the session log and a span file
    header: str  # a first line describing the text ("" when none)
    text: str
    order: tuple[int, int, int]  # (file mtime, line, block): larger is newer


class Archive:
    """Writes spans and outputs under `session_dir` and searches them."""

    def __init__(self, session_dir: Path, *, redactor: Redactor | None = None) -> None:
        self.session_dir = Path(session_dir)
        # Secrets (API keys, tokens in tool output) are removed before anything reaches disk.
        self._redactor = redactor or Redactor()

    # -- writing -----------------------------------------------------------

    def write_span(self, messages: Sequence[Message], label: str) -> Path:
        """Write `messages` as JSONL before a layer removes them; returns the file's path."""
        # Redacted value by value: a pattern run over the JSON text could swallow its structure.
        redact = self._redactor.redact_json
        body = "".join(json.dumps(redact(m.to_json()), ensure_ascii=False) + "\n" for m in messages)
        return self._write("span", _slug(label) or "span", "jsonl", body)

    def write_output(self, tool_use_id: str, text: str, *, header: str = "") -> Path:
        """Write a tool's full output before L0 cuts it; `header` describes the call."""
        first = header or f"[full output of tool call {tool_use_id}]"
        body = self._redactor.redact(f"{first}\n{text}")
        return self._write("output", _slug(tool_use_id) or "tool", "txt", body)

    def _write(self, kind: str, label: str, ext: str, body: str) -> Path:
        self._ensure_dir()
        data = clean_text(body).encode("utf-8")
        while True:
            path = self.session_dir / f"{kind}-{self._next_seq():03d}-{label}.{ext}"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # a concurrent writer took the number
                continue
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            except BaseException:
                # A full disk leaves a stub: recall would find it and return half of what was cut.
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(path)
                raise
            os.close(fd)
            return path

    def _ensure_dir(self) -> None:
        if not self.session_dir.is_dir():
            self.session_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.session_dir, 0o700)

    def _next_seq(self) -> int:
        highest = 0
        for entry in os.scandir(self.session_dir):
            match = _SEQ_RE.match(entry.name)
            if match:
                highest = max(highest, int(match.group(1)))
        return highest + 1

    # -- reading -----------------------------------------------------------

    def files(self) -> list[Path]:
        """Every file recall searches: the store's own plus the session log."""
        if not self.session_dir.is_dir():
            return []
        found: list[tuple[int, str]] = []
        for entry in os.scandir(self.session_dir):
            match = _SEQ_RE.match(entry.name)
            if entry.is_file() and (match or entry.name == SESSION_FILE):
                found.append((int(match.group(1)) if match else 0, entry.name))
        return [self.session_dir / name for _, name in sorted(found)]

    def search(self, query: str, max_chars: int) -> str:
        """Passages matching `query` (literal, case-insensitive), newest first, within `max_chars`."""
        needle = query.strip().lower()
        if not needle:
            return "recall needs a phrase to look for (a file name, an error message, a few words)."
        files = self.files()
        docs = list(self._docs(files))
        called = _by_call_id(docs, needle)
        passages: list[tuple[tuple[int, int, int], str]] = []
        seen: set[tuple[str, str]] = set()
        for doc in called or docs:
            for passage in _passages(doc, needle):
                key = (doc.key, passage)
                if key in seen:  # the session log and a span file hold the same message
                    continue
                seen.add(key)
                passages.append((doc.order, f"[{doc.source} · {doc.ref}]\n{passage}"))
        if not passages:
            return f"No match for {query!r} in this session's transcripts ({len(files)} files searched)."
        passages.sort(key=lambda p: p[0], reverse=True)
        return _fit(query, [p for _, p in passages], max_chars)

    def _docs(self, files: Sequence[Path]) -> Iterator[_Doc]:
        for path in files:
            try:
                mtime = path.stat().st_mtime_ns
                # Bytes, not read_text: universal newlines would turn a progress bar's \r into \n.
                raw = path.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                continue
            if path.suffix == ".txt":
                header, _, text = raw.partition("\n")
                ref = _output_ref(path.name)
                yield _Doc(path.name, ref, ref, header, text, (mtime, 0, 0))
            else:
                yield from _jsonl_docs(path.name, raw, mtime)


def _slug(label: str) -> str:
    return _LABEL_RE.sub("-", label.lower()).strip("-")[:40]


def _output_ref(name: str) -> str:
    # output-NNN-<id>.txt -> <id>
    stem = name.rsplit(".", 1)[0]
    parts = stem.split("-", 2)
    return parts[2] if len(parts) == 3 else stem


def _jsonl_docs(source: str, raw: str, mtime: int) -> Iterator[_Doc]:
    calls: dict[str, str] = {}  # tool_use id -> "name {input}", to title its result
    for line_no, line in enumerate(raw.splitlines()):
        try:
            record: Any = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        data = record.get("message") if "message" in record else record
        if not isinstance(data, dict) or "role" not in data:
            continue
        ref = str(record.get("rid") or data.get("id") or f"line {line_no + 1}")
        key = str(data.get("id") or ref)
        for block_no, block in enumerate(data.get("content") or []):
            if not isinstance(block, dict):
                continue
            order = (mtime, line_no, block_no)
            kind = block.get("type")
            if kind in ("text", "summary"):
                yield _Doc(source, ref, key, "", str(block.get("text", "")), order)
            elif kind == "tool_use":
                call = f"{block.get('name')} {json.dumps(block.get('input') or {}, ensure_ascii=False)}"
                calls[str(block.get("id"))] = call
                if block.get("name") != RECALL:  # recall's own calls and results would match themselves
                    yield _Doc(source, ref, key, "", f"[tool call {call}]", order)
            elif kind == "tool_result":
                use_id = str(block.get("tool_use_id"))
                call = calls.get(use_id, "a tool call")
                if call.startswith(f"{RECALL} "):
                    continue
                header = f"[result of {call} · id {use_id}]"
                yield _Doc(source, ref, key, header, str(block.get("content", "")), order)


def _by_call_id(docs: Sequence[_Doc], needle: str) -> list[_Doc]:
    """The results of the tool call whose id is exactly `needle` (the full output first), else [].

    A cleared result's stub names its call id, so recall(id) returns exactly that
    output, even when later calls used the same path or command.
    """
    suffix = f"· id {needle}]"
    hits = [doc for doc in docs if doc.header.lower().endswith(suffix)]
    full = [doc for doc in hits if doc.source.endswith(".txt")]  # saved before L0 cut it
    return full or hits


def _passages(doc: _Doc, needle: str) -> list[str]:
    """Windows of lines around each hit in `doc`; a hit on the header returns the whole text."""
    if doc.header and needle in doc.header.lower():
        return [f"{doc.header}\n{doc.text}"]
    lower = doc.text.lower()
    if needle not in lower:
        return []
    lines = doc.text.split("\n")
    starts: list[int] = []  # character offset of each line
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    windows: list[list[int]] = []
    pos = lower.find(needle)
    line_idx = 0
    while pos != -1:
        while line_idx + 1 < len(starts) and starts[line_idx + 1] <= pos:
            line_idx += 1
        end_line = line_idx + needle.count("\n")
        lo, hi = max(line_idx - WINDOW_LINES, 0), min(end_line + WINDOW_LINES, len(lines) - 1)
        if windows and lo <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
        pos = lower.find(needle, pos + max(len(needle), 1))
    out = []
    for lo, hi in windows:
        body = "\n".join(lines[lo : hi + 1])
        if lo > 0:
            body = f"(from line {lo + 1})\n{body}"
        out.append(f"{doc.header}\n{body}" if doc.header else body)
    return out


def _fit(query: str, passages: list[str], max_chars: int) -> str:
    """As many whole passages as fit in `max_chars`, and a note of how many did not."""
    shown: list[str] = []
    used = 0
    for passage in passages:
        cost = len(passage) + 2
        if used + cost > max_chars:
            if not shown:  # one passage larger than the cap: show its start
                room = max(max_chars - 120, 0)
                shown.append(
                    passage[:room] + f"\n[... {len(passage) - room:,} more characters of this passage]"
                )
            break
        shown.append(passage)
        used += cost
    rest = len(passages) - len(shown)
    note = (
        f"\n\n[{rest} more matching passages for {query!r} not shown; use a more specific phrase]"
        if rest
        else ""
    )
    return "\n\n".join(shown) + note

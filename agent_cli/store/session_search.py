"""The one search over the session store: what `recall` and `agent transcripts search` both run.

A session's folder holds its log (`session.jsonl`, read through `log_records.read_log`) and the
archive (`span-NNN-<label>.jsonl`, `output-NNN-<id>.txt`, written by archive.py). The search
reads them as *documents*:

- a block of a message, from a message record of the log or a line of a span: its text, a
  record the engine wrote in place of a span (kind "record"), a tool call
  (`[tool call name {input}]`), or a tool result, *titled* by the call it
  answers (`[result of name {input} · id <call id>]`; `· error ·` before the id when the tool
  failed, so a question about an error finds a failure whose text does not say "error");
- a tool's full output saved before L0 cut it (its first line is its title);
- what the log tells a person besides the conversation, the events `agent transcripts show`
  prints: a compaction (its summary, what it cut), a warning, an error. These are not
  *conversation*: the model never saw them as messages.

Left out: recall's own calls and results (recall would find its own answers), thinking (never
shown), checkpoints of the working history (copies of messages logged already), the other events
(copies of messages, or figures), and bookkeeping fields.

A *match* is a document that holds the query, literal and in any case, in its title or its text.
A query that is exactly a tool call's id matches that call's results and nothing else (the full
saved output when there is one). Matches come newest first: by the file's time, then the place
in the file; a message that the log and a span both hold is one match, the log's.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.events import CompactEvent, ErrorEvent, WarningEvent
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import CLEARED_PREFIX, Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.store.layout import ARCHIVE_NAME_RE, SESSION_FILE, TASKS_DIR, transcripts_dir
from agent_cli.store.log_records import EventRecord, MessageRecord, read_log
from agent_cli.store.sessions import session_ids

__all__ = [
    "Document",
    "Found",
    "Match",
    "call_results",
    "fullest",
    "search_project",
    "search_session",
    "session_documents",
    "session_files",
]

_TITLE_ID_RE = re.compile(r" · id (.+)\]\Z")  # the call id at the end of a result's title


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable text of a session (see the module's docstring)."""

    file: str  # the file's name in the session folder
    ref: str  # the log record's id, a span message's id, or the call id an output's name holds
    key: str  # the message's id, the same in the log and a span; `ref` for the rest
    kind: str  # "message", "record", "output", "event/compact", "event/warning", "event/error"
    title: str  # a first line saying what the text is ("" when none)
    text: str
    order: tuple[int, int, int, int]  # (file time, file number, place, block): larger is newer
    call: str = ""  # the id of the tool call this document is, or answers ("" for the rest)

    @property
    def conversation(self) -> bool:
        """Part of what the model saw (a message, a tool output), not one of the log's events."""
        return not self.kind.startswith("event/")


@dataclass(frozen=True, slots=True)
class Match:
    """A document holding the query: where in its text, and whether its title holds it."""

    doc: Document
    hits: tuple[tuple[int, int], ...]  # (start, end) of each occurrence in `doc.text`, in order
    title_hit: tuple[int, int] | None  # where the title holds it, if it does
    by_id: bool = False  # the query is the id of the call this document answers

    @property
    def whole(self) -> bool:
        """The title holds the query (or names its call): the whole text is what was asked for."""
        return self.by_id or self.title_hit is not None

    @property
    def line(self) -> int:
        """The line of a saved output's file that holds the first hit (its title is line 1)."""
        if self.whole or not self.hits:
            return 1
        return 2 + self.doc.text.count("\n", 0, self.hits[0][0])


@dataclass(frozen=True, slots=True)
class Found:
    """What one session's search found, and what it could not read ("path: reason")."""

    session_id: str
    matches: tuple[Match, ...]  # newest first
    files: int  # how many files there were to search
    unreadable: tuple[str, ...] = ()


def session_files(directory: Path) -> list[Path]:
    """A session's searchable files: its log, then the archive's files in the order written, then
    each sub-agent's (`tasks/<id>/`, the same layout, in the order they started): what a child read
    or ran is found from its parent's recall."""
    if not directory.is_dir():
        return []
    found: list[tuple[int, str]] = []
    for entry in os.scandir(directory):
        match = ARCHIVE_NAME_RE.match(entry.name)
        # Not through a link: a folder that came with a clone could point one at ~/.ssh.
        if entry.is_file(follow_symlinks=False) and (match or entry.name == SESSION_FILE):
            found.append((int(match.group(1)) if match else 0, entry.name))
    files = [directory / name for _, name in sorted(found)]
    tasks = directory / TASKS_DIR
    if tasks.is_dir() and not tasks.is_symlink():
        for entry in sorted(os.scandir(tasks), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                files.extend(session_files(Path(entry.path)))
    return files


def search_session(directory: Path, query: str, *, searcher: str | None = None) -> Found:
    """The matches for `query` in one session's folder (see the module's docstring). `searcher`
    names the tool that runs this search (recall): its own calls and results would match
    themselves, so they are left out."""
    files = session_files(directory)
    needle = query.strip()
    if not needle:
        return Found(directory.name, (), len(files))
    docs, unreadable = _documents(files, searcher)
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    matches = _by_call_id(docs, needle, pattern) or [m for d in docs if (m := _match(d, pattern))]
    matches.sort(key=lambda m: m.doc.order, reverse=True)
    return Found(directory.name, tuple(matches), len(files), tuple(unreadable))


def session_documents(directory: Path, *, searcher: str | None = None) -> tuple[list[Document], int]:
    """Every document of one session's folder, oldest first, and how many files it has (recall
    ranks these, ranking.py); files that cannot be read are skipped."""
    files = session_files(directory)
    docs, _ = _documents(files, searcher)
    return docs, len(files)


def fullest(docs: Sequence[Document]) -> list[Document]:
    """`docs` with one document for each tool call: its result holding the most text.

    A result is saved as it was sent (a span L1 wrote before clearing it), in full (L0's output
    file), and as its stub or its cut form in later spans and the log; its call is a document of
    its own. Recall ranks what the call returned, titled by the call, not the stub pointing at it
    nor the bare call (both short, so both would rank above the output)."""
    best: dict[str, Document] = {}
    for doc in docs:
        if not doc.call:
            continue
        held = best.get(doc.call)
        if held is None or _fullness(doc) > _fullness(held):
            best[doc.call] = doc
    kept = {id(doc) for doc in best.values()}
    return [doc for doc in docs if not doc.call or id(doc) in kept]


def _fullness(doc: Document) -> tuple[bool, bool, int]:
    """A result (titled) over its call, the result as sent over its stub, then the longest."""
    return bool(doc.title), not doc.text.startswith(CLEARED_PREFIX), len(doc.text)


def call_results(docs: Sequence[Document], call_id: str) -> list[Document]:
    """The results of the tool call whose id is exactly `call_id`: the full saved output when
    there is one (a cleared result's stub names its call id), else the result as sent; [] when
    `call_id` is no call's id."""
    wanted = call_id.lower()
    called = [doc for doc in docs if doc.title and doc.call.lower() == wanted]  # results, not the call
    return [doc for doc in called if doc.kind == "output"] or called


def search_project(root: Path | str, query: str, *, searcher: str | None = None) -> Iterator[Found]:
    """`search_session` over every session of the project, newest first, one session at a time.

    The sessions are those `agent transcripts list` knows (`sessions.session_ids`): a folder
    that is a symbolic link is not read through. OSError when `.transcripts/` cannot be listed.
    """
    base = transcripts_dir(root)
    for session_id in reversed(session_ids(root)):  # ids sort by the time they were made
        yield search_session(base / session_id, query, searcher=searcher)


# ---- documents -------------------------------------------------------------------------------


def _documents(files: Sequence[Path], searcher: str | None) -> tuple[list[Document], list[str]]:
    docs: list[Document] = []
    unreadable: list[str] = []
    calls: dict[str, ToolUse] = {}  # every call of the session, to title its results
    seen: set[tuple[str, str, str]] = set()  # (key, title, text): the log's copy comes first
    for number, path in enumerate(files):
        try:
            stat = path.stat()
            mtime = stat.st_mtime_ns
            if path.name == SESSION_FILE:
                found = list(_log_documents(path, (mtime, number), calls, searcher))
            elif path.suffix == ".txt":
                found = list(_output_documents(path, (mtime, number), calls, searcher))
            else:
                stamp = (mtime, stat.st_size, stat.st_ino)
                found = list(_span_documents(path, stamp, (mtime, number), calls, searcher))
        except OSError as exc:
            unreadable.append(f"{path}: {exc.strerror or exc}")
            continue
        for doc in found:
            if (doc.key, doc.title, doc.text) in seen:
                continue
            seen.add((doc.key, doc.title, doc.text))
            docs.append(doc)
    return docs, unreadable


def _named(path: Path) -> str:
    """A file as a passage names it: its name, under `tasks/<id>/` for a sub-agent's."""
    if path.parent.parent.name == TASKS_DIR:
        return f"{TASKS_DIR}/{path.parent.name}/{path.name}"
    return path.name


def _log_documents(
    path: Path, at: tuple[int, int], calls: dict[str, ToolUse], searcher: str | None
) -> Iterator[Document]:
    records, _ = read_log(path)
    named = _named(path)
    for place, rec in enumerate(records):
        if isinstance(rec, MessageRecord):
            ref = rec.rid or rec.message.id
            yield from _message_documents(rec.message, named, ref, (*at, place), calls, searcher)
        elif isinstance(rec, EventRecord):
            event, text = rec.event, ""
            if isinstance(event, CompactEvent):
                text = "\n".join(part for part in (event.summary, event.detail) if part)
            elif isinstance(event, WarningEvent | ErrorEvent):
                text = event.message
            if text:
                kind = f"event/{event.type}"
                yield Document(named, rec.rid, rec.rid, kind, "", text, (*at, place, 0))


def _span_documents(
    path: Path,
    stamp: tuple[int, int, int],
    at: tuple[int, int],
    calls: dict[str, ToolUse],
    searcher: str | None,
) -> Iterator[Document]:
    named = _named(path)
    for place, message in _span_messages(str(path), stamp):
        yield from _message_documents(message, named, message.id, (*at, place), calls, searcher)


@functools.lru_cache(maxsize=512)
def _span_messages(path: str, stamp: tuple[int, int, int]) -> tuple[tuple[int, Message], ...]:
    """A span's messages and their lines, kept while the file's (mtime, size, inode) `stamp` holds:
    a span is written once (archive.py) and read again on every recall."""
    # Bytes, not read_text: universal newlines would turn a progress bar's \r into \n.
    raw = Path(path).read_bytes().decode("utf-8", errors="replace")
    out = []
    for place, line in enumerate(raw.split("\n")):
        if not line.strip():
            continue
        try:
            message = Message.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError):  # torn, or not a message
            continue
        out.append((place, message))
    return tuple(out)


def _output_documents(
    path: Path, at: tuple[int, int], calls: dict[str, ToolUse], searcher: str | None
) -> Iterator[Document]:
    title, _, text = path.read_bytes().decode("utf-8", errors="replace").partition("\n")
    called = _TITLE_ID_RE.search(title)
    if called and _is_searcher(calls.get(called.group(1)), searcher):
        return
    stem = path.name.rsplit(".", 1)[0].split("-", 2)  # output-NNN-<id>.txt -> <id>
    ref = stem[2] if len(stem) == 3 else path.stem
    call = called.group(1) if called else ""
    yield Document(_named(path), ref, ref, "output", title, text, (*at, 0, 0), call)


def _message_documents(
    message: Message,
    file: str,
    ref: str,
    at: tuple[int, int, int],
    calls: dict[str, ToolUse],
    searcher: str | None,
) -> Iterator[Document]:
    for number, block in enumerate(message.content):
        order = (*at, number)
        if isinstance(block, TextBlock | SummaryBlock):
            kind = "record" if isinstance(block, SummaryBlock) else "message"
            yield Document(file, ref, message.id, kind, "", block.text, order)
        elif isinstance(block, ImageBlock):  # found by its name; recall brings the image itself
            text = f"[image {block.name} ({block.width}x{block.height} px) in the conversation]"
            yield Document(file, ref, message.id, "message", "", text, order)
        elif isinstance(block, ToolUse):
            calls[block.id] = block
            if not _is_searcher(block, searcher):  # recall's own calls and results would match themselves
                text = f"[tool call {_call(block)}]"
                yield Document(file, ref, message.id, "message", "", text, order, block.id)
        elif isinstance(block, ToolResult):
            use = calls.get(block.tool_use_id)
            if _is_searcher(use, searcher):
                continue
            failed = " · error" if block.is_error else ""
            title = f"[result of {_call(use) if use else 'a tool call'}{failed} · id {block.tool_use_id}]"
            yield Document(file, ref, message.id, "message", title, block.content, order, block.tool_use_id)


def _call(use: ToolUse) -> str:
    return f"{use.name} {json.dumps(dict(use.input), ensure_ascii=False)}"


def _is_searcher(use: ToolUse | None, searcher: str | None) -> bool:
    return use is not None and use.name == searcher


# ---- matching --------------------------------------------------------------------------------


def _match(doc: Document, pattern: re.Pattern[str]) -> Match | None:
    hits = tuple(m.span() for m in pattern.finditer(doc.text))
    in_title = pattern.search(doc.title) if doc.title else None
    if not hits and in_title is None:
        return None
    return Match(doc, hits, in_title.span() if in_title else None)


def _by_call_id(docs: Sequence[Document], needle: str, pattern: re.Pattern[str]) -> list[Match]:
    """The results of the tool call whose id is exactly `needle` (the full output first), else [].

    A cleared result's stub names its call id, so recall(id) returns exactly that
    output, even when later calls used the same path or command.
    """
    found = []
    for doc in call_results(docs, needle):
        in_title = pattern.search(doc.title)
        hits = tuple(m.span() for m in pattern.finditer(doc.text))
        found.append(Match(doc, hits, in_title.span() if in_title else None, by_id=True))
    return found

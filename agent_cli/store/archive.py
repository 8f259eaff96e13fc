"""The archive: what the context engine writes to disk before removing it, and recall's answer.

`Archive(session_dir)` owns the engine's files in `.transcripts/<session>/`: spans of
messages written before a layer replaces them (`span-NNN-<label>.jsonl`, one
`Message.to_json` per line), and full tool outputs written before L0 cuts them
(`output-NNN-<id>.txt`). `search` is recall: it runs the store's one search
(session_search.py) over those files and the session log, and returns the matching
passages for the model, verbatim, newest first, as many as fit its budget.

Files are 0600 and fsynced; the directory is 0700, created on first write.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from agent_cli.core.messages import Message
from agent_cli.core.text import clean as clean_text
from agent_cli.store.layout import ARCHIVE_NAME_RE
from agent_cli.store.redact import Redactor
from agent_cli.store.session_search import Match, search_session, session_files

__all__ = ["Archive"]

# Lines of context shown either side of a hit.
WINDOW_LINES = 5
_LABEL_RE = re.compile(r"[^a-z0-9]+")
_NEWLINE = re.compile("\n")


class Archive:
    """Writes spans and outputs under `session_dir` and searches them."""

    def __init__(
        self, session_dir: Path, *, redactor: Redactor | None = None, searcher: str | None = None
    ) -> None:
        self.session_dir = Path(session_dir)
        self.searcher = searcher  # the tool that runs `search` (recall): its own calls are left out
        # Secrets (API keys, tokens in tool output) are removed before anything reaches disk.
        self._redactor = redactor or Redactor()

    def shown(self, path: Path | str) -> str:
        """`path` as the model is told it: relative to the project (`.transcripts/<session>/...`),
        which recall takes and which stays true if the project moves; absolute for a session folder
        outside a project's `.transcripts/`."""
        folder = self.session_dir.parent
        if folder.name != ".transcripts":
            return str(path)
        try:
            return Path(path).relative_to(folder.parent).as_posix()
        except ValueError:
            return str(path)

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
            match = ARCHIVE_NAME_RE.match(entry.name)
            if match:
                highest = max(highest, int(match.group(1)))
        return highest + 1

    # -- reading -----------------------------------------------------------

    def files(self) -> list[Path]:
        """Every file recall searches: the store's own plus the session log."""
        return session_files(self.session_dir)

    def search(self, query: str, max_chars: int) -> str:
        """Recall: the conversation's passages matching `query`, newest first, within `max_chars`.

        The matches are `session_search.search_session`'s, the ones `agent transcripts search`
        shows a person; the log's events are left out (the model never saw them as messages).
        """
        if not query.strip():
            return "recall needs a phrase to look for (a file name, an error message, a few words)."
        found = search_session(self.session_dir, query, searcher=self.searcher)
        passages = [
            f"[{match.doc.file} · {match.doc.ref}]\n{passage}"
            for match in found.matches
            if match.doc.conversation
            for passage in _passages(match)
        ]
        if not passages:
            return f"No match for {query!r} in this session's transcripts ({found.files} files searched)."
        return _fit(query, passages, max_chars)


def _slug(label: str) -> str:
    return _LABEL_RE.sub("-", label.lower()).strip("-")[:40]


def _passages(match: Match) -> list[str]:
    """Windows of lines around each hit; a match on the title returns the whole text."""
    doc = match.doc
    if match.whole:
        return [f"{doc.title}\n{doc.text}"]
    starts = [0, *(m.end() for m in _NEWLINE.finditer(doc.text))]  # offset of each line
    windows: list[list[int]] = []
    for start, end in match.hits:
        first, last = _line_of(starts, start), _line_of(starts, max(end - 1, start))
        lo, hi = max(first - WINDOW_LINES, 0), min(last + WINDOW_LINES, len(starts) - 1)
        if windows and lo <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    lines = doc.text.split("\n")
    out = []
    for lo, hi in windows:
        body = "\n".join(lines[lo : hi + 1])
        if lo > 0:
            body = f"(from line {lo + 1})\n{body}"
        out.append(f"{doc.title}\n{body}" if doc.title else body)
    return out


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


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

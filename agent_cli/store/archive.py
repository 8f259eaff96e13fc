"""The archive: what the context engine writes to disk before removing it, and recall's answer.

`Archive(session_dir)` owns the engine's files in `.transcripts/<session>/`: spans of
messages written before a layer replaces them (`span-NNN-<label>.jsonl`, one
`Message.to_json` per line), and full tool outputs written before L0 cuts them
(`output-NNN-<id>.txt`). `search` is recall: it runs the store's one search
(session_search.py) over those files and the session log, ranks their passages by the words of
the question and by their meaning (ranking.py, meaning.py), and returns the best few for the
model, verbatim, with their source, as many as fit its budget. `search_project` is recall with
scope "project": the same over every session of this project's `.transcripts/` (the folder this
session's is in, never another project's), each passage's source naming its session. `images`
finds the images a recall names (archived_images.py), for a model that takes them.

Files are 0600 and fsynced; the directory is 0700, created on first write.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message
from agent_cli.core.text import clean as clean_text
from agent_cli.store.archived_images import find_images
from agent_cli.store.layout import ARCHIVE_NAME_RE, TASKS_DIR
from agent_cli.store.ranking import CHUNK_LINES, Passage, rank
from agent_cli.store.recall_answer import fit, shown
from agent_cli.store.redact import Redactor
from agent_cli.store.session_search import Document, call_results, fullest, session_documents, session_files
from agent_cli.store.sessions import session_ids
from agent_cli.store.terms import question_terms

__all__ = ["Archive"]

# The best few, as many as the budget holds: a question in other words than its answer's often
# ranks that answer below the 8th look-alike (docs/recall-ranking.md).
MAX_PASSAGES = 16
FALLBACK_PASSAGES = 3  # shown when nothing saved shares a word with the question
_NO_QUERY = "recall needs a phrase to look for (a file name, an error message, a few words)."
_LABEL_RE = re.compile(r"[^a-z0-9]+")


class Archive:
    """Writes spans and outputs under `session_dir` and searches them."""

    def __init__(
        self,
        session_dir: Path,
        *,
        redactor: Redactor | None = None,
        searcher: str | None = None,
        by_meaning: bool = True,
    ) -> None:
        self.session_dir = Path(session_dir)
        self.searcher = searcher  # the tool that runs `search` (recall): its own calls are left out
        self.by_meaning = by_meaning  # rank by meaning as well as by words (ranking.py)
        # Secrets (API keys, tokens in tool output) are removed before anything reaches disk.
        self._redactor = redactor or Redactor()

    def shown(self, path: Path | str) -> str:
        """`path` as the model is told it: relative to the project (`.transcripts/<session>/...`),
        which recall takes and which stays true if the project moves; absolute for a session folder
        outside a project's `.transcripts/`."""
        folder = self.session_dir.parent
        while folder.name == TASKS_DIR:  # a sub-agent's folder: .transcripts/<session>/tasks/<id>/
            folder = folder.parent.parent
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

    def images(self, query: str) -> list[ImageBlock]:
        """The images `query` names (a call id, a file name), newest first: recall shows them."""
        return find_images(self.files(), query)

    def search(self, query: str, max_chars: int, *, visible: Collection[str] = ()) -> str:
        """Recall: the saved passages that best answer `query`, best first, within `max_chars`.

        A call's id returns that call's whole output. Anything else is a question: its passages
        are ranked by its words (ranking.py), and when no saved text shares one, the newest
        saved passages are returned, said so, rather than nothing. The log's events are left
        out (the model never saw them as messages), and so are the messages whose ids are in
        `visible`: what the request still holds as it was (the question just asked first of all:
        it matches its own words best). A cleared or cut message is another message (a new id),
        so what it held is still found.
        """
        if not query.strip():
            return _NO_QUERY
        docs, files = session_documents(self.session_dir, searcher=self.searcher)
        docs = _searched(docs)
        if not docs:
            return f"Nothing is saved in this session's transcripts yet ({files} files searched)."
        return _answer(query, docs, max_chars, visible, "in this session", by_meaning=self.by_meaning)

    def search_project(self, query: str, max_chars: int, *, visible: Collection[str] = ()) -> str:
        """Recall over this project's sessions, this one and the earlier ones (`search` for each,
        ranked together); each passage's source is `.transcripts/<session id>/<file>`. A session
        folder outside a project's `.transcripts/` has no project: only it is searched."""
        if not query.strip():
            return _NO_QUERY
        folder = self.session_dir.parent
        if folder.name != ".transcripts":
            return self.search(query, max_chars, visible=visible)
        ids = session_ids(folder.parent)
        if self.session_dir.name not in ids:
            ids.append(self.session_dir.name)
        docs: list[Document] = []
        for session_id in ids:
            found, _ = session_documents(folder / session_id, searcher=self.searcher)
            mine = session_id == self.session_dir.name
            for doc in _searched(found):
                key = doc.key if mine else f"{session_id}/{doc.key}"  # `visible` names this session's
                call = doc.call if mine or not doc.call else f"{session_id}/{doc.call}"  # ids may repeat
                docs.append(replace(doc, file=f".transcripts/{session_id}/{doc.file}", key=key, call=call))
        if not docs:
            return f"Nothing is saved in this project's transcripts yet ({len(ids)} sessions searched)."
        return _answer(
            query, docs, max_chars, visible, "in this project's sessions", by_meaning=self.by_meaning
        )


def _searched(docs: Sequence[Document]) -> list[Document]:
    """What recall searches: the conversation. Records are left out: each is what the engine wrote
    about messages that are saved verbatim, and the model holds the newest one already."""
    return [doc for doc in docs if doc.conversation and doc.kind != "record"]


def _answer(
    query: str,
    docs: list[Document],
    max_chars: int,
    visible: Collection[str],
    where: str,
    *,
    by_meaning: bool,
) -> str:
    """Recall's answer from `docs` (see `Archive.search`)."""
    called = call_results(docs, query.strip())
    if called:  # asked for by its id: given even while the context holds it
        return fit(query, [shown(Passage(doc, 0, 0, 0.0, 2)) for doc in called], max_chars)
    seen = frozenset(visible)
    docs = [doc for doc in docs if doc.key not in seen]
    if not docs:
        return f"Everything saved {where} is still in your context as it was: nothing left it yet."
    ranked = rank(fullest(docs), query, by_meaning=by_meaning)[:MAX_PASSAGES]
    if ranked:
        return fit(query, [shown(p) for p in ranked], max_chars, weights=question_terms(query))
    newest = sorted(docs, key=lambda d: d.order, reverse=True)[:FALLBACK_PASSAGES]
    head = (
        f"Nothing saved {where} shares a word with {query!r}; "
        "the newest saved passages follow (ask with the words of a file name, a command or an error).\n\n"
    )
    newest_shown = [shown(Passage(doc, 0, CHUNK_LINES, 0.0, 0)) for doc in newest]
    return head + fit(query, newest_shown, max_chars - len(head))


def _slug(label: str) -> str:
    return _LABEL_RE.sub("-", label.lower()).strip("-")[:40]

"""Recall's ranking: the passages of a session's documents that best answer a question.

    rank(documents, "which TCP port does the server accept connections on?") -> [Passage, ...]

A document's text is read as *chunks* of up to `CHUNK_LINES` lines and `CHUNK_TERMS` terms (a
longer line is read in pieces), each starting halfway through the one before (they overlap, so a
fact is never split from the lines around it). A chunk's terms are its own and its document's
title's (a result is titled by its call: the path read, the command run), counted once. Chunks
are scored by BM25 (k1 1.2, b 0.75) over the question's weighted terms (terms.py), then by
meaning too (meaning.py): a chunk that shares a term with the question scores its BM25 score over
the best one's plus `MEANING_WEIGHT` times its closeness to the question over the closest one's,
so a passage that says the rest in other words than the question's can still rank first. A question
about the session's start ("early on", "when we began": terms.py `asks_for_early`) scales each score by
up to `1 + EARLY_WEIGHT`, the most for the oldest document, nothing for the newest. Then in
tiers: a document whose title holds the question as typed (a path, a command) comes first,
whole; then chunks that hold it as typed, or a phrase it quotes (terms.py `quoted`: "the `mix test`
command"), and the chunks of a document whose title (its call) holds such a phrase or a path the
question names (`named_files`: "the Read call on subagent.jsonl"); then the rest by score. Ties go
to the newer document.

A document gives at most `PER_DOCUMENT` passages (a long log must not crowd out the others), and
chunks of one document that touch are joined, up to `MAX_LINES` lines. Passages scoring under
`FLOOR` of the best are left out: they share a word with the question, not its meaning.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from agent_cli.store import meaning
from agent_cli.store.session_search import Document
from agent_cli.store.terms import PREFIX_WEIGHT, asks_for_early, named_files, question_terms, quoted, terms

if TYPE_CHECKING:
    from agent_cli.store.meaning import Meaning

__all__ = ["CHUNK_LINES", "EARLY_WEIGHT", "FLOOR", "MEANING_WEIGHT", "PER_DOCUMENT", "Passage", "rank"]

CHUNK_LINES = 12
CHUNK_TERMS = 160  # and at most this many terms
PIECE_TERMS = 80  # a longer line is scored in pieces of this many terms
PER_DOCUMENT = 2
MAX_LINES = 40  # touching chunks of a document are joined up to this many lines
FLOOR = 0.3
MEANING_WEIGHT = 0.3  # the closest chunk's meaning counts this much of the best BM25 score
EARLY_WEIGHT = 0.5  # a question about the start: the oldest document's score counts this much more
_K1 = 1.2
_B = 0.75
_MIN_LITERAL = 3  # a question shorter than this is not looked for as typed
_MIN_STEM = 4  # a word the question says this long also finds longer words it begins


@dataclass(frozen=True, slots=True)
class Passage:
    """Lines `start` to `end` (0-based, end excluded) of a document's text, and how they ranked."""

    doc: Document
    start: int
    end: int
    score: float
    tier: int  # 2: the title holds the question as typed (the whole text); 1: these lines do; 0: neither

    @property
    def whole(self) -> bool:
        return self.tier == 2


class _Chunk(NamedTuple):  # a tuple: a long session ranks thousands of chunks per question
    doc: Document
    start: int
    end: int
    counts: Counter[str]
    length: int
    tier: int
    place: int  # its place among its document's windows; -1 for a whole document
    read: _Read | None  # its document's reading (None for a whole document): its meanings


class _Read:
    """What recall reads of a document whatever the question: its title and text lowercased, its
    chunks (`_windows`) and, once a question needs them, their meanings. Made once for each
    (title, text) and kept (`_read`): a saved output is ranked again on every recall."""

    __slots__ = ("_meanings", "heading", "lower", "windows")

    def __init__(self, title: str, text: str) -> None:
        self.heading = title.lower()
        self.lower = text.lower()
        self.windows = _windows(title, text)
        self._meanings: tuple[Meaning | None, ...] | None = None

    def meanings(self) -> tuple[Meaning | None, ...]:
        """The meaning of each chunk, in order."""
        if self._meanings is None:
            self._meanings = tuple(meaning.meaning(counts) for _, _, counts, _ in self.windows)
        return self._meanings


def rank(docs: Sequence[Document], question: str, *, by_meaning: bool = True) -> list[Passage]:
    """The passages of `docs` that answer `question`, best first (see the module's docstring);
    [] when none shares a term with it. `by_meaning` False ranks by the question's words alone."""
    weights = question_terms(question)
    needle = question.strip().lower()
    literal = needle if len(needle) >= _MIN_LITERAL else ""
    phrases = tuple({p.lower() for p in quoted(question) if len(p) >= _MIN_LITERAL} - {literal})
    files = [_whole_name(p.lower()) for p in named_files(question) if p.lower() != literal]
    chunks = [chunk for doc in docs for chunk in _chunks(doc, literal, phrases, files)]
    if not chunks or not weights:
        return []
    said = {term: 1 for term, weight in weights.items() if weight == 1.0}
    weights = _with_longer_words(weights, chunks)
    scores = _scores(chunks, weights)
    if by_meaning and any(scores):
        scores = _with_meaning(scores, said, chunks)
    if asks_for_early(question):
        scores = _earlier_first(scores, chunks)
    scored = list(zip(chunks, scores, strict=True))
    best = max((score for c, score in scored if c.tier == 0), default=0.0)
    kept = [
        Passage(c.doc, c.start, c.end, score, c.tier)
        for c, score in scored
        if c.tier > 0 or (score > 0 and score >= FLOOR * best)
    ]
    kept.sort(key=lambda p: (p.tier, round(p.score, 6), p.doc.order, -p.start), reverse=True)
    return _per_document(kept)


def _with_longer_words(weights: dict[str, float], chunks: Sequence[_Chunk]) -> dict[str, float]:
    """The weights, and at `PREFIX_WEIGHT` each word of the texts that a word the question says
    begins ("time" -> timeout, "config" -> configmap): the text's word may be a longer one."""
    said = [t for t, w in weights.items() if w == 1.0 and t.isalpha() and len(t) >= _MIN_STEM]
    if not said:
        return weights
    out = dict(weights)
    vocabulary = set().union(*(c.counts for c in chunks))
    starts, whole = tuple(said), frozenset(said)
    for word in vocabulary:
        # Begins with a said word (the test of the loop below, at C speed) other than itself.
        if not word.startswith(starts) or not word.isalpha():
            continue
        if word not in whole or any(word.startswith(t) and word != t for t in said):
            out.setdefault(word, PREFIX_WEIGHT)
    return out


def _whole_name(name: str) -> re.Pattern[str]:
    """`name` as a whole name in a title: `a.py` is not found in `data.py`."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def _chunks(
    doc: Document, literal: str, phrases: Sequence[str] = (), files: Sequence[re.Pattern[str]] = ()
) -> list[_Chunk]:
    """`doc`'s chunks, each with its tier: the whole document when its title holds the question
    as typed; 1 for a chunk whose lines hold it, or hold a phrase it quotes, or whose document's
    title (the call) holds one; 0 for the rest."""
    read = _read(doc.title, doc.text)
    heading = read.heading
    if literal and literal in heading:
        counts = Counter(terms(doc.text))
        counts.update(_title_terms(doc.title))
        return [_Chunk(doc, 0, doc.text.count("\n") + 1, counts, sum(counts.values()), 2, -1, None)]
    named = any(p in heading for p in phrases) or any(f.search(heading) for f in files)
    lower = read.lower
    wanted = [p for p in (literal, *phrases) if p and p in lower]
    if named or not wanted:  # every chunk alike
        tier = 1 if named else 0
        return [
            _Chunk(doc, start, end, counts, length, tier, place, read)
            for place, (start, end, counts, length) in enumerate(read.windows)
        ]
    lines = lower.split("\n")
    out = []
    for place, (start, end, counts, length) in enumerate(read.windows):
        holds = any(p in "\n".join(lines[start:end]) for p in wanted)
        out.append(_Chunk(doc, start, end, counts, length, 1 if holds else 0, place, read))
    return out


@functools.lru_cache(maxsize=8192)
def _read(title: str, text: str) -> _Read:
    """A document's reading, kept for the next question (bounded: the least recently ranked go)."""
    return _Read(title, text)


@functools.lru_cache(maxsize=1024)
def _title_terms(title: str) -> frozenset[str]:
    return frozenset(terms(title)) if title else frozenset()


def _windows(title: str, text: str) -> tuple[tuple[int, int, Counter[str], int], ...]:
    """A document's chunks, (first line, end line, terms, how many); kept with its reading (`_read`)."""
    heading = _title_terms(title)
    lines = text.split("\n")
    # Pieces of at most PIECE_TERMS terms: a line, or a part of a long one (minified code, a
    # paragraph on one line), so one long line is not one long chunk that no question ranks.
    pieces: list[tuple[int, list[str]]] = []
    for number, line in enumerate(lines):
        found = terms(line)
        pieces += [(number, found[i : i + PIECE_TERMS]) for i in range(0, max(len(found), 1), PIECE_TERMS)]
    out = []
    first = 0
    while True:
        last, size = first, 0
        while (
            last < len(pieces) and last - first < CHUNK_LINES and size + len(pieces[last][1]) <= CHUNK_TERMS
        ):
            size += len(pieces[last][1])
            last += 1
        last = max(last, first + 1)  # a piece is never more than CHUNK_TERMS
        counts = Counter(t for _, found in pieces[first:last] for t in found)
        counts.update(heading)
        out.append((pieces[first][0], pieces[last - 1][0] + 1, counts, sum(counts.values())))
        if last >= len(pieces):
            return tuple(out)
        first = max(first + (last - first + 1) // 2, first + 1)  # the next starts halfway through this one


def _scores(chunks: list[_Chunk], weights: dict[str, float]) -> list[float]:
    """Each chunk's BM25 score for the weighted terms."""
    total = len(chunks)
    average = sum(c.length for c in chunks) / total or 1.0
    shared = [c.counts.keys() & weights.keys() for c in chunks]  # each chunk's terms the question has
    held = Counter(term for found in shared for term in found)
    idf = {term: math.log(1 + (total - n + 0.5) / (n + 0.5)) for term, n in held.items()}
    weighted = {term: weights[term] * value for term, value in idf.items()}  # the product's first factor
    k = _K1 + 1
    scores = []
    for c, found in zip(chunks, shared, strict=True):
        norm = _K1 * (1 - _B + _B * c.length / average)
        counts = c.counts
        scores.append(sum(weighted[t] * counts[t] * k / (counts[t] + norm) for t in found))
    return scores


def _with_meaning(scores: list[float], said: dict[str, int], chunks: Sequence[_Chunk]) -> list[float]:
    """Each chunk's BM25 score over the best, plus its closeness in meaning to the question over
    the closest chunk's, times `MEANING_WEIGHT`. Only a chunk that shares a term with the question
    gains (meaning alone admits look-alikes: every config is close to a question about config),
    and none for a negative cosine (further from it than unrelated text)."""
    close = meaning.closeness(
        said, [_meaning(c) if s > 0 else None for c, s in zip(chunks, scores, strict=True)]
    )
    best, closest = max(scores), max(max(close), 1e-9)
    return [
        s / best + MEANING_WEIGHT * max(c, 0.0) / closest if s > 0 else 0.0
        for s, c in zip(scores, close, strict=True)
    ]


def _earlier_first(scores: list[float], chunks: Sequence[_Chunk]) -> list[float]:
    """The scores, each times `1 + EARLY_WEIGHT` for the oldest document down to 1 for the newest
    (by place among the documents, so a session's many late outputs do not crowd its start)."""
    orders = sorted({c.doc.order for c in chunks})
    if len(orders) < 2:
        return scores
    place = {order: n / (len(orders) - 1) for n, order in enumerate(orders)}
    return [s * (1 + EARLY_WEIGHT * (1 - place[c.doc.order])) for s, c in zip(scores, chunks, strict=True)]


def _meaning(chunk: _Chunk) -> Meaning | None:
    if chunk.read is None:  # a whole document: rare, not kept
        return meaning.meaning(chunk.counts)
    return chunk.read.meanings()[chunk.place]


def _per_document(ranked: list[Passage]) -> list[Passage]:
    taken: dict[tuple[str, str, str], list[int]] = {}  # each document's passages: their places in `out`
    out: list[Passage] = []
    for c in ranked:
        key = (c.doc.key, c.doc.file, c.doc.title)
        mine = taken.setdefault(key, [])
        at = next((i for i in mine if c.start <= out[i].end and out[i].start <= c.end), None)
        if at is not None:  # joined to a better chunk of the same document it touches
            touching = out[at]
            start, end = min(touching.start, c.start), max(touching.end, c.end)
            if end - start <= MAX_LINES:
                out[at] = Passage(c.doc, start, end, touching.score, touching.tier)
            continue
        if len(mine) >= PER_DOCUMENT:
            continue
        mine.append(len(out))
        out.append(c)
    return out

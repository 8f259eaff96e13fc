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

import bisect
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


Window = tuple[int, int, Counter[str], int]  # a chunk: its first line, end line, terms, how many
_QUESTIONS_KEPT = 128  # a reading keeps what this many questions found in it (recall asks again)


class _Found:
    """What one question finds in one document, whatever else is searched with it: the question's
    terms each chunk holds, with their counts (`pairs`, by place; a chunk holding none is left
    out), how many chunks hold each term (`held`), and each chunk's closeness in meaning to the
    question, once asked (`close`)."""

    __slots__ = ("close", "held", "pairs")

    def __init__(
        self, windows: Sequence[Window], places: dict[str, list[int]], weights: dict[str, float]
    ) -> None:
        pairs: dict[int, list[tuple[str, int]]] = {}
        held: dict[str, int] = {}
        for term in sorted(places.keys() & weights.keys()):  # in one order: the sums are the same
            at = places[term]
            held[term] = len(at)
            for place in at:
                pairs.setdefault(place, []).append((term, windows[place][2][term]))
        self.pairs = pairs
        self.held = held
        self.close: dict[int, float] = {}


def _places(windows: Sequence[Window]) -> dict[str, list[int]]:
    """Each term, and the places of the chunks that hold it, in order."""
    places: dict[str, list[int]] = {}
    for place, (_, _, counts, _) in enumerate(windows):
        for term in counts:
            places.setdefault(term, []).append(place)
    return places


class _Read:
    """What recall reads of a document whatever the question: its title and text lowercased, its
    chunks (`_windows`), which chunks hold each term, its words in order and, once a question needs
    them, the chunks' meanings; and what the last `_QUESTIONS_KEPT` questions found in it
    (`found`). Made once for each (title, text) and kept (`_read`): a saved output is ranked again
    on every recall, and the same questions are asked again as a session goes on."""

    __slots__ = ("_found", "_meanings", "_words", "heading", "length", "lower", "places", "windows")

    def __init__(self, title: str, text: str) -> None:
        self.heading = title.lower()
        self.lower = text.lower()
        self.windows = _windows(title, text)
        self.length = sum(length for _, _, _, length in self.windows)
        self.places = _places(self.windows)
        self._meanings: tuple[Meaning | None, ...] | None = None
        self._words: list[str] | None = None
        self._found: dict[str, _Found] = {}

    def meanings(self) -> tuple[Meaning | None, ...]:
        """The meaning of each chunk, in order."""
        if self._meanings is None:
            self._meanings = tuple(meaning.meaning(counts) for _, _, counts, _ in self.windows)
        return self._meanings

    def starting(self, prefix: str) -> list[str]:
        """The document's terms that begin with `prefix` (itself too, if it is one)."""
        if self._words is None:
            self._words = sorted(self.places)
        words = self._words
        at = bisect.bisect_left(words, prefix)
        end = at
        while end < len(words) and words[end].startswith(prefix):
            end += 1
        return words[at:end]

    def found(self, question: str, weights: dict[str, float]) -> _Found:
        """What `question` (ranked by `weights`, its longer words among them) finds here. A chunk's
        share of the weights depends on the question and the chunk alone, so it is kept."""
        got = self._found.get(question)
        if got is None:
            got = _Found(self.windows, self.places, weights)
            if len(self._found) >= _QUESTIONS_KEPT:
                del self._found[next(iter(self._found))]
            self._found[question] = got
        return got


class _Part(NamedTuple):
    """One document as a question reads it: its chunks, each with its tier (`tiers`: one for all
    or one each); `read` None: the whole document is one chunk (tier 2), read for this question."""

    doc: Document
    read: _Read | None
    windows: Sequence[Window]
    tiers: int | list[int]
    found: _Found


def rank(docs: Sequence[Document], question: str, *, by_meaning: bool = True) -> list[Passage]:
    """The passages of `docs` that answer `question`, best first (see the module's docstring);
    [] when none shares a term with it. `by_meaning` False ranks by the question's words alone."""
    weights = question_terms(question)
    needle = question.strip().lower()
    literal = needle if len(needle) >= _MIN_LITERAL else ""
    phrases = tuple({p.lower() for p in quoted(question) if len(p) >= _MIN_LITERAL} - {literal})
    files = [_whole_name(p.lower()) for p in named_files(question) if p.lower() != literal]
    shapes = [_shape(doc, literal, phrases, files) for doc in docs]
    if not shapes or not weights:
        return []
    said = {term: 1 for term, weight in weights.items() if weight == 1.0}
    weights = _with_longer_words(weights, shapes)
    parts = [
        _Part(
            doc,
            read,
            windows,
            tiers,
            read.found(question, weights) if read else _Found(windows, _places(windows), weights),
        )
        for doc, read, windows, tiers in shapes
    ]
    # Only a chunk that holds a term of the question scores above 0; only it and a chunk of a higher
    # tier can be kept: the others count (BM25's sizes and document frequencies), nothing more.
    items = _scores(parts, weights)
    scores = [score for _, _, _, score in items]
    if by_meaning and any(scores):
        scores = _with_meaning(scores, said, parts, items, question)
    if asks_for_early(question):
        scores = _earlier_first(scores, [parts[i].doc.order for i, _, _, _ in items], parts)
    best = max(
        (score for (_, _, tier, _), score in zip(items, scores, strict=True) if tier == 0), default=0.0
    )
    kept = [
        Passage(parts[i].doc, parts[i].windows[place][0], parts[i].windows[place][1], score, tier)
        for (i, place, tier, _), score in zip(items, scores, strict=True)
        if tier > 0 or (score > 0 and score >= FLOOR * best)
    ]
    kept.sort(key=lambda p: (p.tier, round(p.score, 6), p.doc.order, -p.start), reverse=True)
    return _per_document(kept)


Shape = tuple[Document, "_Read | None", Sequence[Window], "int | list[int]"]


def _with_longer_words(weights: dict[str, float], shapes: Sequence[Shape]) -> dict[str, float]:
    """The weights, and at `PREFIX_WEIGHT` each word of the texts that a word the question says
    begins ("time" -> timeout, "config" -> configmap): the text's word may be a longer one."""
    said = [t for t, w in weights.items() if w == 1.0 and t.isalpha() and len(t) >= _MIN_STEM]
    if not said:
        return weights
    out = dict(weights)
    vocabulary: set[str] = set()
    starts = tuple(said)
    for _, read, windows, _ in shapes:
        if read is None:
            vocabulary.update(w for w in windows[0][2] if w.startswith(starts))
        else:
            for t in said:
                vocabulary.update(read.starting(t))
    whole = frozenset(said)
    for word in sorted(vocabulary):
        if not word.isalpha():
            continue
        if word not in whole or any(word.startswith(t) and word != t for t in said):
            out.setdefault(word, PREFIX_WEIGHT)
    return out


def _whole_name(name: str) -> re.Pattern[str]:
    """`name` as a whole name in a title: `a.py` is not found in `data.py`."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def _shape(
    doc: Document, literal: str, phrases: Sequence[str] = (), files: Sequence[re.Pattern[str]] = ()
) -> Shape:
    """`doc`'s chunks, each with its tier: the whole document when its title holds the question
    as typed; 1 for a chunk whose lines hold it, or hold a phrase it quotes, or whose document's
    title (the call) holds one; 0 for the rest."""
    read = _read(doc.title, doc.text)
    heading = read.heading
    if literal and literal in heading:
        counts = Counter(terms(doc.text))
        counts.update(_title_terms(doc.title))
        return doc, None, ((0, doc.text.count("\n") + 1, counts, sum(counts.values())),), 2
    named = any(p in heading for p in phrases) or any(f.search(heading) for f in files)
    lower = read.lower
    wanted = [p for p in (literal, *phrases) if p and p in lower]
    if named or not wanted:  # every chunk alike
        return doc, read, read.windows, 1 if named else 0
    lines = lower.split("\n")
    tiers = [
        1 if any(p in "\n".join(lines[start:end]) for p in wanted) else 0 for start, end, _, _ in read.windows
    ]
    return doc, read, read.windows, tiers


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


def _scores(parts: Sequence[_Part], weights: dict[str, float]) -> list[tuple[int, int, int, float]]:
    """(part, place, tier, BM25 score for the weighted terms) of each chunk that holds a term of the
    question or is of a higher tier, in order, over every chunk of `parts` (the others score 0)."""
    total = sum(len(part.windows) for part in parts)
    length = sum(part.read.length if part.read else part.windows[0][3] for part in parts)
    average = length / total or 1.0
    held: Counter[str] = Counter()  # how many chunks hold each term of the question
    for part in parts:
        held.update(part.found.held)
    idf = {term: math.log(1 + (total - n + 0.5) / (n + 0.5)) for term, n in held.items()}
    weighted = {term: weights[term] * value for term, value in idf.items()}  # the product's first factor
    k = _K1 + 1
    items: list[tuple[int, int, int, float]] = []
    for i, part in enumerate(parts):
        pairs, tiers, windows = part.found.pairs, part.tiers, part.windows
        if isinstance(tiers, int):
            wanted: Sequence[int] = range(len(windows)) if tiers > 0 else sorted(pairs)
        else:
            wanted = sorted({*pairs, *(p for p, tier in enumerate(tiers) if tier > 0)})
        for place in wanted:
            norm = _K1 * (1 - _B + _B * windows[place][3] / average)
            score = sum(weighted[t] * n * k / (n + norm) for t, n in pairs.get(place, ()))
            items.append((i, place, tiers if isinstance(tiers, int) else tiers[place], score))
    return items


def _with_meaning(
    scores: list[float],
    said: dict[str, int],
    parts: Sequence[_Part],
    items: Sequence[tuple[int, int, int, float]],
    question: str,
) -> list[float]:
    """Each chunk's BM25 score over the best, plus its closeness in meaning to the question over
    the closest chunk's, times `MEANING_WEIGHT`. Only a chunk that shares a term with the question
    gains (meaning alone admits look-alikes: every config is close to a question about config),
    and none for a negative cosine (further from it than unrelated text). A chunk's closeness is
    kept with what the question found in its document."""
    asked = meaning.meaning(said)
    close = []
    for (i, place, _, _), s in zip(items, scores, strict=True):
        if s <= 0 or asked is None:
            close.append(0.0)
            continue
        part = parts[i]
        kept = part.found.close
        got = kept.get(place)
        if got is None:
            m = part.read.meanings()[place] if part.read else meaning.meaning(part.windows[0][2])
            got = kept[place] = meaning.cosine(asked, m)
        close.append(got)
    # (a chunk not among `items` scores 0 and is 0.0 close: below the floor of 1e-9 either way)
    best, closest = max(scores), max(max(close), 1e-9)
    return [
        s / best + MEANING_WEIGHT * max(c, 0.0) / closest if s > 0 else 0.0
        for s, c in zip(scores, close, strict=True)
    ]


def _earlier_first(
    scores: list[float], doc_orders: Sequence[tuple[int, int, int, int]], parts: Sequence[_Part]
) -> list[float]:
    """The scores, each times `1 + EARLY_WEIGHT` for the oldest document down to 1 for the newest
    (by place among the documents, so a session's many late outputs do not crowd its start)."""
    orders = sorted({part.doc.order for part in parts})
    if len(orders) < 2:
        return scores
    place = {order: n / (len(orders) - 1) for n, order in enumerate(orders)}
    return [s * (1 + EARLY_WEIGHT * (1 - place[o])) for s, o in zip(scores, doc_orders, strict=True)]


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

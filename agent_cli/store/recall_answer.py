"""Recall's answer laid out: each passage with its source, as many as its budget holds.

    fit("which port?", [shown(p) for p in ranked], 12_000, weights=question_terms("which port?"))

A passage is shown as its source (`[file · ref]`), its title (the call that printed it) and its
lines. The best comes first. A passage longer than its share of the budget (`SHARE`: a third, so
one long line of minified code or a wall of log cannot take the whole answer) is cut to its share
around the part where the question's terms are densest, and says how much was left out on each
side. A passage that does not fit in the room left is cut to that room when the room is worth it
(`MIN_ROOM`), else passed over for the next, smaller one; a closing note says how many passages
were not shown at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_cli.store.ranking import Passage
from agent_cli.store.terms import terms

__all__ = ["MIN_ROOM", "SHARE", "Shown", "fit", "shown"]

SHARE = 3  # a passage takes at most a third of the budget when it is one of several
MIN_ROOM = 400  # room left under this many characters is not worth a cut passage
_PIECE = 160  # a body is weighed in pieces of about this many characters
_BREAK = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Shown:
    """A passage as recall shows it: `head` (source, title, line range) and its `body`."""

    head: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.head}\n{self.body}" if self.body else self.head


def shown(passage: Passage) -> Shown:
    """`passage` as recall returns it: its source, its title (the call), then its lines."""
    doc = passage.doc
    head = f"[{doc.file} · {doc.ref}]"
    if doc.title:
        head = f"{head}\n{doc.title}"
    if passage.whole:
        return Shown(head, doc.text)
    lines = doc.text.split("\n")
    body = "\n".join(lines[passage.start : passage.end])
    if passage.start > 0 or passage.end < len(lines):
        head = f"{head}\n(lines {passage.start + 1}-{min(passage.end, len(lines))} of {len(lines)})"
    return Shown(head, body)


def fit(
    query: str,
    passages: Sequence[Shown],
    max_chars: int,
    *,
    weights: Mapping[str, float] | None = None,
    share: int = SHARE,
) -> str:
    """As many of `passages` as fit in `max_chars`, best first (see the module's docstring).

    `weights`: the question's terms, to cut a long passage around them (none: keep its start).
    `share` 1 lets a passage fill the whole budget (a call's own output, asked for by its id)."""
    parts: list[str] = []
    used = 0
    left_out = 0
    for item in passages:
        room = max_chars - used - 2
        limit = min(room, max(max_chars // max(share, 1), MIN_ROOM))
        text = item.text
        if len(text) > limit:
            if limit < MIN_ROOM and parts:
                left_out += 1
                continue
            text = _cut(item, max(limit, 0), weights or {})
        parts.append(text)
        used += len(text) + 2
    note = f"\n\n[{left_out} more passages for {query!r} not shown; ask with more specific words]"
    return "\n\n".join(parts) + (note if left_out else "")


def _cut(item: Shown, limit: int, weights: Mapping[str, float]) -> str:
    """`item` within `limit` characters: its head, then the stretch of its body where the
    question's terms weigh most (its start when none is there), with what was left out counted."""
    room = limit - len(item.head) - 90  # the head's line break and the two counts
    if room <= 0:
        return item.text[: max(limit, 0)]
    pieces = _pieces(item.body)
    scores = [sum(weights.get(term, 0.0) for term in set(terms(piece))) for piece in pieces]
    best_start, best_score, total = 0, -1.0, 0.0
    start = 0
    length = 0
    for end, piece in enumerate(pieces):  # the window of whole pieces within room, weighed
        length += len(piece)
        total += scores[end]
        while length > room and start < end:
            length -= len(pieces[start])
            total -= scores[start]
            start += 1
        if total > best_score:
            best_start, best_score = start, total
    body = "".join(pieces[best_start:])
    before = sum(len(piece) for piece in pieces[:best_start])
    kept = body[:room]
    after = len(body) - len(kept)
    parts = [item.head]
    if before:
        parts.append(f"[... {before:,} characters before]")
    parts.append(kept)
    if after:
        parts.append(f"[... {after:,} more characters of this passage]")
    return "\n".join(parts)


def _pieces(body: str) -> list[str]:
    """`body` in pieces of about `_PIECE` characters, each ending after a run of white space
    where there is one; joined, they are `body`."""
    out: list[str] = []
    at = 0
    while at < len(body):
        end = min(at + _PIECE, len(body))
        if end < len(body):
            gap = _BREAK.search(body, end)
            if gap is not None and gap.start() - end < _PIECE:
                end = gap.end()
        out.append(body[at:end])
        at = end
    return out

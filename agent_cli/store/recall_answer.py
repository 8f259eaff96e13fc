"""Recall's answer laid out: each passage with its source, as many as its budget holds.

    fit("which port?", [shown(p) for p in ranked], 12_000, weights=question_terms("which port?"))

A passage is shown as its source (`[file · ref]`), its title (the call that printed it) and its
lines. The best comes first. A passage that others follow and that is longer than its share of
the budget (`SHARE`: a third, so one long line of minified code or a wall of log cannot take the
whole answer) is cut to its share around the part where the question's terms are densest, that
part in the middle, and says how much was left out on each side; the last passage, and a call's
whole output when the question names the call (its id, path or command), may take all the room
left, and the latter keeps its start. A passage that does not fit in the room left is cut to that
room when the room is worth it (`MIN_ROOM`), else passed over and the next one tried; a closing
note, counted in the budget, says how many passages were not shown at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_cli.store.ranking import Passage
from agent_cli.store.terms import terms

__all__ = ["MIN_ROOM", "SHARE", "Shown", "fit", "shown"]

SHARE = 3  # a passage that others follow takes at most a third of the budget
MIN_ROOM = 400  # room left under this many characters is not worth a cut passage
_PIECE = 160  # a body is weighed in pieces of about this many characters
_BREAK = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Shown:
    """A passage as recall shows it: `head` (source, title, line range) and its `body`."""

    head: str
    body: str
    whole: bool = False  # the call the question names (its path, its command): its start matters

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
        return Shown(head, doc.text, whole=True)
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
) -> str:
    """As many of `passages` as fit in `max_chars`, the closing note included, best first (see the
    module's docstring). `weights`: the question's terms, to cut a long passage around them (none:
    keep its start)."""
    budget = max_chars - len(_note(query, len(passages)))  # room for the note, should one be needed
    parts: list[str] = []
    used = 0
    left_out = 0
    for index, item in enumerate(passages):
        room = budget - used - (2 if parts else 0)
        last = index == len(passages) - 1
        free = last or item.whole  # the last, or the call the question names, may take the room left
        limit = room if free else min(room, max(max_chars // SHARE, MIN_ROOM))
        text = item.text
        if len(text) > limit:
            if limit <= 0 or (limit < MIN_ROOM and parts):
                left_out += 1
                continue
            text = _cut(item, limit, {} if item.whole else weights or {})
        parts.append(text)
        used += len(text) + (2 if len(parts) > 1 else 0)
    return "\n\n".join(parts) + (_note(query, left_out) if left_out else "")


def _note(query: str, left_out: int) -> str:
    return f"\n\n[{left_out} more passages for {query!r} not shown; ask with more specific words]"


def _cut(item: Shown, limit: int, weights: Mapping[str, float]) -> str:
    """`item` within `limit` characters: its head (a call's long input cut to its start), then the
    stretch of its body where the question's terms weigh most, that stretch's best part in its
    middle (the body's start when none is there), with what was left out counted."""
    head = item.head
    if len(head) > limit // 2:  # a call's whole input is its title (a large write): its start
        keep = max(limit // 2 - 40, 0)
        head = f"{head[:keep]} [... {len(head) - keep:,} characters of the call]"
    room = limit - len(head) - 90  # the head's line break and the two counts
    if room <= 0:
        return head[: max(limit, 0)]
    pieces = _pieces(item.body)
    first, end = _window(pieces, [sum(weights.get(t, 0.0) for t in set(terms(p))) for p in pieces], room)
    kept = "".join(pieces[first:end])[:room]  # one piece longer than the room (no white space) is cut
    before = sum(len(piece) for piece in pieces[:first])
    after = len(item.body) - before - len(kept)
    parts = [head]
    if before:
        parts.append(f"[... {before:,} characters before]")
    parts.append(kept)
    if after:
        parts.append(f"[... {after:,} more characters of this passage]")
    return "\n".join(parts)


def _window(pieces: Sequence[str], scores: Sequence[float], room: int) -> tuple[int, int]:
    """The pieces `first` to `end` (excluded) to keep within `room` characters: of the longest
    windows ending at each piece, those that weigh most; of the first run of them, the middle one,
    so the best part has text on both sides. From the start when nothing weighs anything."""
    windows: list[tuple[int, int, float]] = []
    start, length, total = 0, 0, 0.0
    for end, piece in enumerate(pieces):
        length += len(piece)
        total += scores[end]
        while length > room and start < end:
            length -= len(pieces[start])
            total -= scores[start]
            start += 1
        windows.append((start, end + 1, total))
    best = max((w[2] for w in windows), default=0.0)
    if best <= 0:  # nothing weighs anything: the start
        end, length = 0, 0
        while end < len(pieces) and length + len(pieces[end]) <= room:
            length += len(pieces[end])
            end += 1
        return 0, max(end, 1)
    heavy = [w[2] >= best - 1e-9 for w in windows]
    lo = heavy.index(True)
    hi = lo
    while hi + 1 < len(windows) and heavy[hi + 1]:
        hi += 1
    first, end, _ = windows[(lo + hi + 1) // 2]
    return first, end


def _pieces(body: str) -> list[str]:
    """`body` in pieces of `_PIECE` characters, each carried on to the end of the next run of
    white space when one starts within another `_PIECE`; joined, they are `body`."""
    out: list[str] = []
    at = 0
    while at < len(body):
        end = min(at + _PIECE, len(body))
        if end < len(body):
            gap = _BREAK.search(body, end, end + _PIECE)
            if gap is not None:
                end = gap.end()
        out.append(body[at:end])
        at = end
    return out

"""Where a Messages API request's prompt-cache breakpoints go (`cache_control`), and what earlier
requests of the session wrote.

Terms (as `billing/anthropic.py` bills them). A *position* is one block of the prompt in the
order the API reads it: each tool, each system block, each message content block. The *prefix*
at a position is everything up to and including it. Anthropic writes a cache entry only at a
breakpoint, and reads one only by looking back from a breakpoint of the new request, at most
`LOOKBACK` positions (the breakpoint itself the first); a change of `tool_choice` or of the
thinking settings is a new messages prefix. A request may carry at most 4 breakpoints, and an
extra one costs nothing (a request is billed for what it writes up to its last breakpoint, wherever
the others fall), so the question is only which 4.

In order of what they save:

1. the *frame*: the last system block (the tools come before it, so it caches them too), or the
   last tool when there is no system prompt;
2. the *newest*: the last block of the last message, which the next request reads back (left
   unmarked when the context engine expects its next clear to change it: `newest`);
3. the *anchor*: the end of the last message the context engine's next clear keeps (the
   request's `cache_anchor`), so a request after that clear reads everything before the change;
4. the *bridge*: the latest position whose prefix an earlier request wrote (`WrittenPrefixes`),
   when no other breakpoint lies within `LOOKBACK` positions after it: without it the request
   would find no entry behind a change far from its own breakpoints (a clear that moved the
   anchor more than 20 blocks on, a summary request whose instruction follows a long span) and
   write it all again;
5. the *span end*: the end of the span the context engine's next summary would condense (the
   request's `cache_span_end`), so that summary's request (the span, then its instruction) finds
   the span written a moment ago, where the entry written when the span's last message was newest
   has long expired. It costs nothing (the prefix is read or written up to the newest anyway); it
   is not placed past the last other mark, where it would.

A last free slot goes on the last tool (it keeps the tools when the system prompt changes).

The *checkpoint* (the request's `cache_checkpoint`, chosen by the context engine) is a 1-hour
entry (`"ttl": "1h"`, a write at 2x the input price): after a user's pause past 5 minutes, when
every 5-minute entry has expired, the request reads everything up to it back instead of writing
the whole prompt again. It is written where it is the newest message (the engine names a new one
only then, so only that request's new tokens pay the 1-hour price; an entry already written keeps
its TTL) and marked by every later request while a slot is left (each read refreshes it). A 1-hour
breakpoint may not follow a 5-minute one: on a request that carries a checkpoint the frame (and
the last tool) and every mark before the checkpoint are 1-hour marks too (a write ending at a
1-hour mark is billed at 1 hour anyway, so that costs nothing more).

A thinking block cannot carry a breakpoint: a turn's mark goes on its last other block.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "HOUR_SECONDS", "LOOKBACK", "MAX_MARKS", "TTL_SECONDS", "WrittenPrefixes", "place_marks", "prefix_ids"
]  # fmt: skip

LOOKBACK = 20  # positions Anthropic looks back from a breakpoint, the breakpoint itself included
MAX_MARKS = 4
TTL_SECONDS = 300.0  # an ephemeral entry lives 5 minutes from its last use
HOUR_SECONDS = 3600.0  # a 1-hour entry (`"ttl": "1h"`)
_EPHEMERAL = {"type": "ephemeral"}
_THOUGHTS = ("thinking", "redacted_thinking")
_REMEMBERED = 64  # prefixes kept: a few requests' worth of breakpoints


def _blocks(wire: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(section, block) for every position of the request, in the API's order."""
    out: list[tuple[str, dict[str, Any]]] = [("tools", t) for t in wire.get("tools") or ()]
    out += [("system", b) for b in wire.get("system") or ()]
    for message in wire.get("messages") or ():
        out += [("messages", b) for b in message["content"]]
    return out


def _stripped(block: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def prefix_ids(wire: dict[str, Any]) -> list[str]:
    """An id of the prefix at each position: the model, the blocks without their marks, and, from the
    messages on, the settings whose change invalidates the cached messages."""
    running = hashlib.sha256(f"model\0{wire.get('model', '')}".encode())
    settings = json.dumps(
        [wire.get("tool_choice"), wire.get("thinking"), wire.get("output_config")], sort_keys=True
    )
    ids: list[str] = []
    entered = False
    for section, block in _blocks(wire):
        if section == "messages" and not entered:
            running.update(f"\0settings\0{settings}".encode())
            entered = True
        running.update(f"\0{section}\0{_stripped(block)}".encode())
        ids.append(running.copy().hexdigest())
    return ids


class WrittenPrefixes:
    """The prefixes earlier requests of a session wrote or read back at their breakpoints, with when
    they were last used (`at`: any clock in seconds; None, no expiry) and how long each lives unused
    (5 minutes, or 1 hour for one written at a 1-hour mark: an entry read back keeps the TTL it was
    written with). One per provider: the cache is the model's, and the ids carry the model. A
    summary made in the background sends through the same provider as the turn: a lock keeps the
    record whole."""

    def __init__(self) -> None:
        self._used: dict[str, tuple[float | None, float]] = {}
        self._lock = threading.Lock()

    def alive(self, prefix: str, at: float | None) -> bool:
        with self._lock:
            return self._alive(prefix, at)

    def _alive(self, prefix: str, at: float | None) -> bool:
        if prefix not in self._used:
            return False
        last, ttl = self._used[prefix]
        return at is None or last is None or at - last < ttl

    def use(self, prefixes: Iterable[str], at: float | None, hour: Iterable[str] = ()) -> None:
        """Record a request's breakpoints at `at`; those in `hour` carried a 1-hour mark."""
        hourly = set(hour)
        with self._lock:
            for prefix in prefixes:
                kept = self._used[prefix][1] if self._alive(prefix, at) else None
                ttl = kept or (HOUR_SECONDS if prefix in hourly else TTL_SECONDS)
                self._used.pop(prefix, None)  # the newest use last
                self._used[prefix] = (at, ttl)
            while len(self._used) > _REMEMBERED:
                del self._used[next(iter(self._used))]


def _last_markable(content: Sequence[dict[str, Any]]) -> int | None:
    return next((i for i in range(len(content) - 1, -1, -1) if content[i]["type"] not in _THOUGHTS), None)


def place_marks(
    wire: dict[str, Any],
    anchor_turn: int | None,
    written: WrittenPrefixes | None = None,
    at: float | None = None,
    *,
    newest: bool = True,
    span_end: int | None = None,
    checkpoint: int | None = None,
) -> None:
    """Put `cache_control` on the request's breakpoints (the module docstring's order), in place, and
    record them in `written` (when given: without it there is no bridge). `newest` False: the
    context engine expects its next clear to change the last message, so it is sent uncached (1x)
    rather than written (1.25x) for a read that would never come; the anchor still is written.
    `span_end`: the turn the next summary's span ends with, marked when a slot is left.
    `checkpoint`: the turn marked at 1 hour when a slot is left (the module docstring); given, the
    frame is a 1-hour mark too."""
    blocks = _blocks(wire)
    if not blocks:
        return
    n_tools = len(wire.get("tools") or ())
    n_frame = n_tools + len(wire.get("system") or ())
    marks: list[int] = []
    if n_frame:
        marks.append(n_frame - 1)
    turns = wire.get("messages") or []
    starts, position = [], n_frame
    for turn in turns:
        starts.append(position)
        position += len(turn["content"])

    def end_of(turn: int | None) -> int | None:
        last = _last_markable(turns[turn]["content"]) if turn is not None and turns else None
        return starts[turn] + last if turn is not None and last is not None else None

    newest_turn = len(turns) - 1 if newest or anchor_turn is None else None
    for mark in (end_of(newest_turn), end_of(anchor_turn)):
        if mark is not None and mark not in marks:
            marks.append(mark)
    span = end_of(span_end)
    # (never past the last other mark: a request pays writes up to its last breakpoint, and a newest
    # message left unmarked was left so not to pay them)
    extra = [span] if span is not None and span not in marks and marks and span < max(marks) else []
    ids: list[str] = []
    if written is not None:
        ids = prefix_ids(wire)
        bridge = next((i for i in range(len(ids) - 1, -1, -1) if written.alive(ids[i], at)), None)
        if bridge is not None and not any(bridge <= m < bridge + LOOKBACK for m in [*marks, *extra]):
            marks.append(bridge)  # (a position an earlier request marked: never a thinking block)
    marks += extra
    hour = end_of(checkpoint)
    if hour is not None and hour not in marks:
        marks.append(hour)  # (the last of the request's own: refreshing it matters only after a pause)
    if len(marks) < MAX_MARKS and n_tools and n_tools - 1 not in marks:
        marks.append(n_tools - 1)
    marks = marks[:MAX_MARKS]
    # (a 1-hour mark may not follow a 5-minute one: the frame and whatever precedes the checkpoint)
    last_hour = -1
    if checkpoint is not None:
        last_hour = max(n_frame - 1, hour if hour is not None and hour in marks else -1)
    for m in marks:
        blocks[m][1]["cache_control"] = dict(_EPHEMERAL, ttl="1h") if m <= last_hour else dict(_EPHEMERAL)
    if written is not None:
        kept = _kept(ids, marks, written, at)
        written.use(kept, at, [ids[m] for m in marks if m <= last_hour and ids[m] in kept])


def _kept(ids: Sequence[str], marks: Sequence[int], written: WrittenPrefixes, at: float | None) -> list[str]:
    """The prefixes a request with breakpoints `marks` writes or refreshes: each past its read (the
    first entry alive in the look-back from a breakpoint, the last first), and each at or before it
    that is alive. A breakpoint behind the read on a prefix no request wrote (a span's end marked
    first when the newest had passed it) is neither: recorded, it would be taken for a bridge."""
    read = next(
        (
            pos
            for m in sorted(marks, reverse=True)
            for pos in range(m, max(m - LOOKBACK, -1), -1)
            if written.alive(ids[pos], at)
        ),
        -1,
    )
    return [ids[m] for m in marks if m > read or written.alive(ids[m], at)]

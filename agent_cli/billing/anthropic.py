"""Anthropic's prompt cache: explicit breakpoints, the 20-block look-back, entries with a TTL.

Terms. A *unit* is one block of the prompt in the order the API reads it: each tool, each system
block, each message content block (`Unit`: its section, its token count, its *key*, an identity of
its content without `cache_control`, and its breakpoint if it carries one). A *prefix id* is the
running hash of the keys up to a unit, seeded with the model; the system part also folds in the
settings that change the system prompt (the speed setting), and the messages part those that
invalidate the cached messages (`tool_choice`, thinking parameters, whether images are present).
So a change of tools changes every id, of the speed setting the system and message ids, of
`tool_choice`, thinking or images only the message ids: the docs' invalidation table.

The rules (docs/cost-model.md gives the page and the date each was read):

- A request has at most 4 breakpoints (`MAX_BREAKPOINTS`), none on a thinking block; a top-level
  `cache_control` (automatic caching) puts one on the last cacheable block and takes a slot; a
  1-hour breakpoint may not follow a 5-minute one. A request that breaks these is a 400
  (`BreakpointError`).
- Writes happen only at breakpoints: each breakpoint past the read writes the prefix ending there
  (if that prefix has at least the model's minimum of tokens). Nothing is written anywhere else.
- A read looks back from each breakpoint, last first, at most `LOOKBACK_BLOCKS` positions (the
  breakpoint itself the first) for an entry an earlier request wrote and that is still alive; the
  first one found is read. Finding none, it resumes at the next breakpoint back.
- An entry lives 5 minutes (or 1 hour) from its last use: a read refreshes it, and refreshes the
  request's breakpoints at or before it.
- Writes are billed per segment at the TTL of the breakpoint that ends it; reads and the rest at
  the model's prices (`prices.py`).

Thinking blocks of earlier turns (`in_context`): on the models that keep them (Claude Opus 4.5 and
later Opus, Sonnet 4.6 and later Sonnet, every model numbered 4.6 or higher, Fable, Mythos) they
stay in the prompt and in the cached prefix when a new user turn arrives, so the turn reads the
whole previous prefix; on the others (earlier Opus and Sonnet, Haiku through 4.5) the API strips
them once a user message that is not only tool results arrives, and the prefix changes at the
first of them (`providers.model_names.keeps_prior_thinking`; prompt-caching and thinking pages, read
2026-12-05, see docs/cost-model.md).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from agent_cli.billing.prices import Bill, CacheTerms, Ttl, priced, ttl_seconds

__all__ = [
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "AnthropicCache",
    "AnthropicRequest",
    "BreakpointError",
    "Section",
    "Unit",
    "bill_anthropic",
    "breakpoints",
    "find_hit",
    "in_context",
    "prefix_ids",
    "without_thinking_before",
]

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20

Section: TypeAlias = Literal["tools", "system", "messages"]
_ORDER = {"tools": 0, "system": 1, "messages": 2}


class BreakpointError(ValueError):
    """The request's breakpoints are ones the API rejects (HTTP 400)."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One block of the prompt. `message`: the index of the message it belongs to (-1 outside)."""

    section: Section
    tokens: int
    key: str
    breakpoint: Ttl | None = None
    thinking: bool = False
    message: int = -1


@dataclass(frozen=True, slots=True)
class AnthropicRequest:
    """One request as the cache sees it; `at` is its time in seconds (any fixed origin)."""

    model: str
    units: tuple[Unit, ...]
    at: float
    tool_choice: str = "auto"
    thinking: str = ""
    images: bool = False
    speed: str = ""
    automatic: Ttl | None = None  # a top-level cache_control


def without_thinking_before(units: Sequence[Unit], message: int) -> tuple[Unit, ...]:
    """The units a model that keeps only the last turn's thinking reads once message `message` (a
    user turn that is not only tool results) is sent: thinking blocks of the messages before it
    are dropped (`in_context` applies this only to those models)."""
    return tuple(u for u in units if not (u.thinking and 0 <= u.message < message))


def in_context(keeps_thinking: bool, units: Sequence[Unit], turn: int) -> tuple[Unit, ...]:
    """The units the API reads for a request whose newest turn opened at message `turn` (the last
    user message that is not only tool results): all of them on a model that keeps earlier
    thinking (`keeps_thinking`: `providers.model_names.keeps_prior_thinking`, which reads the model's
    name), else without the thinking blocks of the messages before `turn`."""
    return tuple(units) if keeps_thinking else without_thinking_before(units, turn)


def _cacheable(unit: Unit) -> bool:
    return not unit.thinking and unit.tokens > 0


def breakpoints(request: AnthropicRequest) -> tuple[tuple[int, Ttl], ...]:
    """(unit index, TTL) of every breakpoint the request has, automatic caching's included."""
    units = request.units
    if any(_ORDER[a.section] > _ORDER[b.section] for a, b in itertools.pairwise(units)):
        raise BreakpointError("units must come as tools, then system, then messages")
    marks: dict[int, Ttl] = {}
    for i, unit in enumerate(units):
        if unit.breakpoint is None:
            continue
        if unit.thinking:
            raise BreakpointError(f"unit {i}: a thinking block cannot carry cache_control")
        marks[i] = unit.breakpoint
    if request.automatic is not None:
        last = next((i for i in range(len(units) - 1, -1, -1) if _cacheable(units[i])), None)
        if last is not None and last in marks:
            if marks[last] != request.automatic:
                raise BreakpointError("automatic caching: the last block has another TTL")
        elif last is not None:
            if len(marks) >= MAX_BREAKPOINTS:
                raise BreakpointError("automatic caching: no breakpoint slot left")
            marks[last] = request.automatic
    if len(marks) > MAX_BREAKPOINTS:
        raise BreakpointError(f"{len(marks)} breakpoints: at most {MAX_BREAKPOINTS}")
    ordered = tuple(sorted(marks.items()))
    ttls = [t for _, t in ordered]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        raise BreakpointError("a 1-hour breakpoint must come before every 5-minute one")
    return ordered


def prefix_ids(request: AnthropicRequest) -> tuple[str, ...]:
    """The id of the prefix ending at each unit (see the module docstring)."""
    running = hashlib.sha256(f"model\0{request.model}".encode())
    entered = 0
    ids: list[str] = []
    for unit in request.units:
        order = _ORDER[unit.section]
        if entered < 1 <= order:
            running.update(f"\0system-settings\0{request.speed}".encode())
        if entered < 2 <= order:
            running.update(
                f"\0message-settings\0{request.tool_choice}\0{request.thinking}\0{request.images}".encode()
            )
        entered = max(entered, order)
        running.update(f"\0{unit.section}\0{unit.key}".encode())
        ids.append(running.copy().hexdigest())
    return tuple(ids)


def find_hit(ids: Sequence[str], marks: Sequence[int], alive: Callable[[str], bool]) -> int:
    """The index of the unit the request reads up to, or -1: the look-back from each breakpoint,
    last first, over at most LOOKBACK_BLOCKS positions, the breakpoint itself the first."""
    for mark in sorted(marks, reverse=True):
        for pos in range(mark, max(mark - LOOKBACK_BLOCKS, -1), -1):
            if alive(ids[pos]):
                return pos
    return -1


def bill_anthropic(
    request: AnthropicRequest, hit: int, terms: CacheTerms
) -> tuple[Bill, tuple[tuple[int, Ttl], ...]]:
    """The bill of a request that reads up to unit `hit` (-1: nothing), and the breakpoints it writes."""
    cum: list[int] = []
    total = 0
    for unit in request.units:
        total += max(0, unit.tokens)
        cum.append(total)
    read = cum[hit] if hit >= 0 else 0
    written = tuple((i, t) for i, t in breakpoints(request) if i > hit and cum[i] >= terms.minimum)
    by_ttl = {"5m": 0, "1h": 0}
    start = read
    for i, ttl in written:
        by_ttl[ttl] += cum[i] - start
        start = cum[i]
    uncached = total - read - by_ttl["5m"] - by_ttl["1h"]
    return priced(uncached, read, by_ttl["5m"], by_ttl["1h"], terms.prices), written


class AnthropicCache:
    """The entries written so far (id -> expiry, TTL), for one workspace; bills requests in time order.

    `terms` gives a model's prices and minimum. Each model has its own entries (the id is seeded
    with the model), as the provider's cache is per model."""

    def __init__(self, terms: Mapping[str, CacheTerms] | Callable[[str], CacheTerms]) -> None:
        self._terms = terms
        self._entries: dict[str, tuple[float, Ttl]] = {}

    def terms(self, model: str) -> CacheTerms:
        return self._terms(model) if callable(self._terms) else self._terms[model]

    def alive_at(self, at: float) -> Callable[[str], bool]:
        def alive(prefix: str) -> bool:
            entry = self._entries.get(prefix)
            return entry is not None and entry[0] > at

        return alive

    def bill(self, request: AnthropicRequest) -> Bill:
        """Bill `request`, then record what it wrote and refreshed."""
        ids = prefix_ids(request)
        marks = breakpoints(request)
        alive = self.alive_at(request.at)
        hit = find_hit(ids, [i for i, _ in marks], alive)
        bill, written = bill_anthropic(request, hit, self.terms(request.model))
        used = [hit] if hit >= 0 else []
        used += [i for i, _ in marks if i <= hit and alive(ids[i])]
        for i in used:
            ttl = self._entries[ids[i]][1]
            self._entries[ids[i]] = (request.at + ttl_seconds(ttl), ttl)
        for i, ttl in written:
            self._entries[ids[i]] = (request.at + ttl_seconds(ttl), ttl)
        return bill

    def warm(self, request: AnthropicRequest, upto: int) -> None:
        """Record the prefix ending at unit `upto` as written by another conversation at `request.at`
        (a frame another session keeps warm)."""
        ids = prefix_ids(request)
        ttl = dict(breakpoints(request)).get(upto, "5m")
        self._entries[ids[upto]] = (request.at + ttl_seconds(ttl), ttl)

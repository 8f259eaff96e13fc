"""What the context engine remembers between requests, as one frozen value (`EngineState`).

    EngineState.start(settings, window, max_output)   # a new engine's memory
    state.record                                      # the record on its way: Ahead, StandIn or None
    state.failures                                    # the latch and the loop guard (CompactionState)

Only `decide.decide` makes a new one (each transition returns a new value); the engine keeps the
latest and reads it. The parts:

*The record on its way* (one at a time; its summary call is the engine's one background future):
prepared ahead (`Ahead`, the span L1 leaves alone), or being written while a digest stands in for
it (`StandIn`).

*The cache* (`Cached`): the last message the next clear keeps, which the wire marks
(`providers/cache_marks.py` places the other breakpoints and remembers what each request wrote),
the message the next clear changes first, and when the request that marked it went.

*The failure memory* (`CompactionState`, with its `Limits`):
*The summarizer latch.* A summary is a full model call. When the model keeps failing at it (an
error or timeout after the call's own retries, an empty answer, a record larger than what it
replaces: the digest stood in; or a record that was used but fell short: over its length cap, or
without the latest error or every file the span touched, repaired by code), calling it again each
compaction only spends money on the same failure (Claude Code's tracker counts sessions with 50
failed compactions in a row; gemini-cli latches after a summary that grew). So:

    not holding -> every automatic compaction asks the model
    failed twice in a row -> holding: automatic compactions use the digest (no call), said once
    holding, `retry_after` compactions later, or a requested one -> the model is asked again;
                             one more failure holds again at once

*The loop guard.* An automatic compaction that leaves the request above the trigger failed; after
`max_failures` in a row automatic compaction stops (said once) until a requested compaction or a
fresh start.

*Requested* is L3: a compaction asked for, by the user (/compact, trigger "manual") or by the model
(its compact call, trigger "tool"). Its layer is "manual" in events, the contract's name for L3.

The engine asks `may_call` before a compaction and reports how it fared with `summary` and
`compaction`; `requested` and `fresh` are the resets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from agent_cli.billing.prices import CachePrice
from agent_cli.config.settings import ContextSettings
from agent_cli.context.cut import CondensePlan
from agent_cli.context.thresholds import Thresholds, compute_thresholds
from agent_cli.core.events import CompactTrigger
from agent_cli.core.messages import Message

__all__ = [
    "Ahead",
    "CachePrice",
    "Cached",
    "CompactionState",
    "EngineState",
    "Limits",
    "StandIn",
    "SummaryOutcome",
]

SummaryOutcome = Literal["ok", "failed", "skipped"]
_HOW: dict[CompactTrigger, str] = {"manual": "a /compact", "tool": "a compaction the model asked for"}


@dataclass(frozen=True, slots=True)
class Limits:
    failures_to_latch: int = 2  # summaries failed in a row before the latch holds
    retry_after: int = 5  # digests built while holding before the model is asked again
    max_failures: int = 2  # automatic compactions in a row that did not get below the trigger

    def __post_init__(self) -> None:
        for name in ("failures_to_latch", "retry_after", "max_failures"):
            object.__setattr__(self, name, max(getattr(self, name), 1))


@dataclass(frozen=True, slots=True)
class CompactionState:
    summary_failures: int = 0  # summaries in a row that failed
    skipped: int = 0  # digests built since the latch began to hold
    latched: bool = False
    compaction_failures: int = 0  # automatic compactions in a row left above the trigger
    automatic: bool = True  # False once the loop guard stopped automatic compaction

    def may_call(self, limits: Limits) -> bool:
        """Whether the next automatic compaction may call the model (the latch is not holding)."""
        return not self.latched or self.skipped >= limits.retry_after

    def summary(
        self, outcome: SummaryOutcome, limits: Limits, *, trigger: CompactTrigger = "auto"
    ) -> tuple[CompactionState, str | None]:
        """How a compaction's summary fared; with a notice when the latch just began to hold. The
        notice says what follows from the failures, not what each was: the engine says that, in the
        same message (`notices.summary_outcome`)."""
        if outcome == "skipped":
            return (replace(self, skipped=self.skipped + 1) if self.latched else self), None
        if outcome == "ok":
            return replace(self, summary_failures=0, skipped=0, latched=False), None
        failures = self.summary_failures + 1
        if failures < limits.failures_to_latch:
            return replace(self, summary_failures=failures), None
        new = replace(self, summary_failures=failures, latched=True, skipped=0)
        if self.latched:
            return new, None  # said once, when it first held
        how = _HOW.get(trigger, "an automatic compaction")
        return new, (
            f"{failures} summaries in a row did not hold (the last in {how}), so the records of "
            "automatic compactions are built by code (a digest) from now on; the model is asked again "
            f"after {limits.retry_after} compactions, or now with /compact."
        )

    def compaction(self, failed: bool, limits: Limits) -> tuple[CompactionState, bool]:
        """How an automatic compaction fared; True when the loop guard just stopped automatic
        compaction."""
        failures = self.compaction_failures + 1 if failed else 0
        stop = failed and failures >= limits.max_failures
        return replace(self, compaction_failures=failures, automatic=self.automatic and not stop), stop

    def requested(self) -> CompactionState:
        """A requested compaction (/compact, or the model's compact call): the loop guard starts over
        and automatic compaction is back on."""
        return replace(self, compaction_failures=0, automatic=True)

    def stopped(self) -> CompactionState:
        """Automatic compaction off, as the loop guard leaves it."""
        return replace(self, automatic=False)

    @staticmethod
    def fresh() -> CompactionState:
        """`/clear`, another model or session: past failures no longer count."""
        return CompactionState()


def _same(now: Sequence[Message], then: Sequence[Message]) -> bool:
    return all(a is b or a == b for a, b in zip(now, then, strict=True))


@dataclass(frozen=True, slots=True)
class Ahead:
    """L2's record prepared before it is needed: the span `plan` cuts, as it was when its call began.
    L1 leaves that span alone; the record is of use only while the span still leads the history."""

    plan: CondensePlan
    span: tuple[Message, ...]

    def leads(self, messages: Sequence[Message]) -> bool:
        cut = self.plan.cut
        return len(messages) > cut and _same(messages[:cut], self.span)


@dataclass(frozen=True, slots=True)
class StandIn:
    """A digest standing in for the record of `span` while the model writes it in the background.

    The digest's messages lead the history (`head`); the span went to the archive at `path`. When
    the call has ended, the record it gives (or the digest again, if it fails) is built from `span`
    and what follows the head then: the history a summary made at the swap would have given.
    `owed`: an earlier run of the session ended before the record came (no call is on its way): the
    next request makes it first.
    """

    span: tuple[Message, ...]
    head: tuple[Message, ...]
    path: str
    owed: bool = False

    def leads(self, messages: Sequence[Message]) -> bool:
        n = len(self.head)
        return len(messages) >= n and _same(messages[:n], self.head)

    def tail(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[len(self.head) :])


@dataclass(frozen=True, slots=True)
class Cached:
    """What the provider's cache holds by the engine's reckoning: the last message the next clear
    keeps (its id and index; the wire marks it, `providers/cache_marks.py` adds the rest), the
    message the next clear changes first, and when the request that marked it went; and the message
    each request marks where the next summary's span will end (`held`: its id, `cache_choices._span_end`);
    the 1-hour checkpoint and the request's own last message (`sent`), each as its id and a digest
    of the ids up to it (`cache_choices._checkpoint`); how many requests were marked, and how many
    of them came after an idle gap past the TTL (`colds`); the sizes of the newest rounds' tool
    results, as each request sent them (`rounds`: what the next round is guessed from, kept across
    compactions, which leave few rounds to tell by)."""

    anchor: str | None = None
    index: int | None = None
    next_change: int | None = None
    at: float | None = None
    held: str | None = None
    checkpoint: tuple[str, str] | None = None
    sent: tuple[str, str] | None = None
    requests: int = 0
    colds: int = 0
    rounds: tuple[tuple[str, int], ...] = ()  # the newest rounds' results: (id, count), newest last


@dataclass(frozen=True, slots=True)
class EngineState:
    settings: ContextSettings
    thresholds: Thresholds
    max_output: int
    limits: Limits
    failures: CompactionState = field(default_factory=CompactionState)  # the latch and the loop guard
    record: Ahead | StandIn | None = None  # the record on its way
    clear_skip: tuple[str, int] = ("", 0)  # (first message id, count): L1 found no batch below that count
    still_below: int = 0  # after /uncompact: no automatic L1 or L2 until the count reaches this
    in_request: frozenset[str] = frozenset()  # the ids of the messages the last request held
    said_under_report: bool = False  # a usage report far below the local count is said once
    cache: Cached = field(default_factory=Cached)
    price: CachePrice = field(default_factory=CachePrice)  # what the provider's cache charges

    @staticmethod
    def start(
        settings: ContextSettings, window: int, max_output: int, price: CachePrice | None = None
    ) -> EngineState:
        limits = Limits(settings.summary_failures_to_latch, settings.latch_compactions, settings.max_failures)
        th = compute_thresholds(settings, window, max_output)
        return EngineState(settings, th, max_output, limits, price=price or CachePrice())

    @property
    def stands_in(self) -> bool:
        """A digest may stand in for a record (the setting on, records written by our summary call:
        a provider's own record is carried as it came, after the history it was made for)."""
        return self.settings.digest_stands_in and self.settings.summarizer == "model"

    @property
    def may_call(self) -> bool:
        """The latch lets the model be asked for an automatic record."""
        return self.failures.may_call(self.limits)

    def clear_skipped(self, messages: Sequence[Message], tokens: int, at: float | None = None) -> bool:
        """Whether L1 need not look: the same history has not grown past what it last found short,
        and the cache is not cold (then any batch is worth clearing: `cold`)."""
        key = messages[0].id if messages else ""
        return key == self.clear_skip[0] and tokens < self.clear_skip[1] and not self.cold(at)

    def cold(self, at: float | None) -> bool:
        """Whether the provider's cache has gone cold by `at`: the last request went longer ago than
        an entry lives unused (`price.ttl`), so the next request writes everything again anyway."""
        last = self.cache.at
        return at is not None and last is not None and at - last > self.price.ttl

    @property
    def holds(self) -> int:
        """The end of the span whose record is being prepared (0 when none): L1 leaves it alone."""
        return self.record.plan.cut if isinstance(self.record, Ahead) else 0

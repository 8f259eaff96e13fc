"""What the engine remembers of its failures, as one value with named transitions.

Two memories, one state (`CompactionState`, frozen; each transition returns a new one):

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

from dataclasses import dataclass, replace
from typing import Literal

from agent_cli.core.events import CompactTrigger

__all__ = ["CompactionState", "Limits", "SummaryOutcome"]

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

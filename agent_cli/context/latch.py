"""The summarizer latch: after summaries fail twice in a row, records are built by code for a while.

A summary is a full model call. When the model keeps failing at it (an error
or timeout after the call's own retries, an empty answer, a record larger than
what it replaces: the digest stood in; or a record that was used but fell
short: over its length cap, or without the latest error or every file the span
touched, repaired by code), calling it again each compaction only spends money on the same
failure (Claude Code's tracker counts sessions with 50 failed compactions in a
row; gemini-cli latches after a summary that grew). So:

    closed  -> every automatic compaction asks the model
    failed twice in a row -> open: automatic compactions use the digest (no call),
                             said once
    open, `retry_after` compactions later, or a manual /compact -> the model is asked again;
                             one more failure opens the latch again at once

State only; the engine asks `open()` before a compaction and reports how it
fared with `note()`.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["SummaryLatch"]


class SummaryLatch:
    def __init__(self, failures_to_latch: int = 2, retry_after: int = 5) -> None:
        self.failures_to_latch = max(failures_to_latch, 1)
        self.retry_after = max(retry_after, 1)
        self.failures = 0  # summaries in a row that failed
        self.skipped = 0  # digests built since the latch opened
        self.latched = False

    def may_call(self) -> bool:
        """Whether the next automatic compaction may call the model (the latch is not holding)."""
        return not self.latched or self.skipped >= self.retry_after

    def note(self, outcome: Literal["ok", "failed", "skipped"], *, manual: bool = False) -> str | None:
        """Record how a compaction's summary fared; a notice to show when the latch just opened. The
        notice says what follows from the failures, not what each was: the engine says that, in the
        same message (`notices.summary_outcome`)."""
        if outcome == "skipped":
            if self.latched:
                self.skipped += 1
            return None
        if outcome == "ok":
            self.failures, self.skipped, self.latched = 0, 0, False
            return None
        self.failures += 1
        if self.failures < self.failures_to_latch:
            return None
        was_latched, self.latched, self.skipped = self.latched, True, 0
        if was_latched:
            return None  # said once, when it first opened
        how = "a manual /compact" if manual else "an automatic compaction"
        return (
            f"{self.failures} summaries in a row did not hold (the last in {how}), so the records of "
            "automatic compactions are built by code (a digest) from now on; the model is asked again "
            f"after {self.retry_after} compactions, or now with /compact."
        )

    def reset(self) -> None:
        self.failures, self.skipped, self.latched = 0, 0, False

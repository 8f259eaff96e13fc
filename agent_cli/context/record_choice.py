"""L2/L3's choice of record, pure: does the model's summary stand, or does the digest stand in?

The layer runner (layers.py) makes the summary call and counts; `judge_record` decides from the
figures alone, so the rule reads in one place and is tested as a table:

- the call failed: the digest stands in, and the failure is said;
- the summary is as large as what it replaces, or (when the request must shrink: every automatic
  compaction) the history with it is no smaller than before: the digest stands in;
- else the summary stands; it *fell short* when it ran over its length (its end was cut) or left
  out the latest error or every file the span touched (code adds them). A record that fell short
  counts as a failed summary for the latch, though it is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["MISSED_FACTS", "OVERLONG", "Verdict", "judge_record"]

OVERLONG = 1.5  # a record this far over its length cap counts as a failed summary
MISSED_FACTS = "left out the latest error or every file it touched; code added them to the record"


@dataclass(frozen=True, slots=True)
class Verdict:
    failure: str | None = None  # why the model's record is not used: the digest stands in
    shortfall: str | None = None  # how a record that is used fell short (repaired by code)

    @property
    def fared(self) -> Literal["ok", "failed"]:
        return "failed" if self.failure is not None or self.shortfall is not None else "ok"


def judge_record(
    *,
    failure: str | None,
    written: int,
    replaced: int,
    after: int | None,
    total: int,
    cap: int,
    must_shrink: bool,
    misses_facts: Callable[[], bool],
) -> Verdict:
    """The verdict on a summary of `written` tokens for a span of `replaced` tokens.

    `failure` is the call's own failure (no summary then), `after` the count of the history with
    the summary in it (None when it was not built: no summary, or one too large), `total` the count
    before, `cap` the record's length cap. `misses_facts` checks the record's content (only asked
    when nothing else is wrong)."""
    if failure is not None:
        return Verdict(failure)
    if written and written >= replaced:
        return Verdict(f"the model's record ({written:,} tokens) is larger than what it replaces")
    if written and must_shrink and after is not None and after >= total:
        return Verdict(f"the model's record would not shrink the request ({total:,} -> {after:,} tokens)")
    if written > cap * OVERLONG:
        return Verdict(shortfall=f"ran over its length ({written:,} tokens for {cap:,}), so its end was cut")
    if misses_facts():
        return Verdict(shortfall=MISSED_FACTS)
    return Verdict()

"""The values `decide` speaks in: what the engine saw (observations) and what it does (actions).

Each is frozen and tagged by its type; `decide.decide` matches on the observation and returns one
action, and `engine.ContextEngine` matches on the action. What each is for, row by row, is
`decide.py`'s table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agent_cli.context.cut import CondensePlan
from agent_cli.context.engine_state import Ahead, CachePrice, StandIn, SummaryOutcome
from agent_cli.core.events import CompactTrigger
from agent_cli.core.messages import Message

__all__ = [
    "Action",
    "Answered",
    "AtTrigger",
    "Clear",
    "Clearing",
    "Compacted",
    "Condense",
    "DigestIn",
    "DigestTooBig",
    "Drop",
    "Ending",
    "Fared",
    "FinishRecord",
    "Forget",
    "Happened",
    "Happening",
    "Hold",
    "KeepSize",
    "Mark",
    "Nothing",
    "Observation",
    "OweRecord",
    "Owed",
    "PastTrigger",
    "Prepare",
    "PrepareAhead",
    "Quiet",
    "Reset",
    "Say",
    "Sending",
    "SmallerWindow",
    "StandInDigest",
    "StartHeld",
    "StopAutomatic",
    "SwapIn",
    "TurnEnded",
    "WaitForRecord",
    "takes_call",
]


# -- observations: what the engine saw --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quiet:
    """A request below the L1 line (or the size the user chose), or after L1: may a record swap in?"""

    messages: Sequence[Message]
    ready: bool  # the background call has ended


@dataclass(frozen=True, slots=True)
class Prepare:
    """A request below the trigger, automatic compaction on: above the prepare line with L1 idle
    (`starts`: a record may be started), or with the record on its way ready (then it goes in, unless
    the turn's plan is in its span on a warm cache: `decide._prepare`); whether that record is
    ready, and the time."""

    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int
    ready: bool = False
    at: float | None = None
    starts: bool = True


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """A turn ended (the model answered; the user is to speak), automatic compaction on: the history
    and its size."""

    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int


@dataclass(frozen=True, slots=True)
class AtTrigger:
    """A request at or past the L2 trigger, automatic compaction on."""

    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int
    ready: bool


@dataclass(frozen=True, slots=True)
class DigestIn:
    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class DigestTooBig:
    plan: CondensePlan
    path: str
    ahead: bool  # its call was started before the trigger


Happening = Literal["refused", "skipped", "folded", "requested", "stopped", "restarted"]


@dataclass(frozen=True, slots=True)
class Happened:
    """What the engine was told or did that changes what it remembers: the disk refused a span
    (`refused`), the gate skipped the record just started (`skipped`), an overflow or /compact
    condenses now (`folded`: a digest standing in goes into its span), /compact or the model's
    compact call (`requested`), automatic compaction turned off (`stopped`), /clear (`restarted`)."""

    what: Happening


@dataclass(frozen=True, slots=True)
class Ending:
    """The run ends (the session closes, or /resume leaves it): no later request of this run will
    take a record made in the background. `ready`: its call has ended."""

    messages: Sequence[Message]
    ready: bool


@dataclass(frozen=True, slots=True)
class Owed:
    """A session opened again (`--continue`, `/resume`) whose earlier run ended owing the record of
    the digest that leads its history (`OweRecord`, logged)."""

    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class Fared:
    summary: SummaryOutcome
    trigger: CompactTrigger = "auto"


@dataclass(frozen=True, slots=True)
class Compacted:
    """An automatic compaction built a record (used or not): the history after it, its count, and
    each message's count (to tell what only the newest, unanswered part keeps above the trigger)."""

    messages: Sequence[Message]
    tokens: int
    counts: Sequence[int] = ()


@dataclass(frozen=True, slots=True)
class Reset:
    """Another model or session: its window, output reserve and (another model's) cache price."""

    window: int
    max_output: int
    price: CachePrice | None = None


@dataclass(frozen=True, slots=True)
class SmallerWindow:
    """The provider named a smaller window in an overflow error: every line follows it, and the
    reply shrinks with it (a prompt plus max_tokens over the window is refused too)."""

    window: int


@dataclass(frozen=True, slots=True)
class Clearing:
    """A request above the L1 line, after L0 (`past`: at or past the trigger, automatic compaction on).
    The engine counts the messages only when L1 is to look (`EngineState.clear_skipped`). `at`: the
    time (seconds, the engine's clock), which tells whether the provider's cache has gone cold."""

    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int
    past: bool
    at: float | None = None


@dataclass(frozen=True, slots=True)
class PastTrigger:
    """L2 was asked at the trigger: whether it `acted` (it did not when a PreCompact hook skipped
    it, nothing was worth a record or the disk refused the span), and the history after it."""

    acted: bool
    messages: Sequence[Message]
    counts: Sequence[int]
    tokens: int
    at: float | None = None


@dataclass(frozen=True, slots=True)
class KeepSize:
    tokens: int


@dataclass(frozen=True, slots=True)
class Sending:
    """Before a request: the history, its messages' counts (None for a first request: nothing is
    counted), the time, and the tokens of the system prompt and tools (`frame`)."""

    messages: Sequence[Message]
    counts: Sequence[int] | None
    at: float
    frame: int = 0


@dataclass(frozen=True, slots=True)
class Answered:
    """After a response: the ids of the messages the request held, and the local count when the
    provider's usage report was far below it (None otherwise)."""

    sent: frozenset[str]
    reported: int
    counted: int | None


Observation = (
    Quiet | Prepare | AtTrigger | DigestIn | DigestTooBig | Happened | Ending | Owed | Fared | Compacted
    | Reset | KeepSize | SmallerWindow | Clearing | PastTrigger | Sending | Answered | TurnEnded
)  # fmt: skip


# -- actions: what the engine does about it ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Nothing:
    pass


@dataclass(frozen=True, slots=True)
class Hold:
    """Past the trigger, under the hold line: the request goes as it is; its record is on its way."""


@dataclass(frozen=True, slots=True)
class Clear:
    """L1: the results `to_clear` names (message index -> result ids) become stubs, freeing `freed`."""

    to_clear: dict[int, set[str]]
    freed: int


@dataclass(frozen=True, slots=True)
class SwapIn:
    """The record made in the background takes the place of the digest that stood in for it."""

    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class Forget:
    """The record on its way is of no use: its call is cancelled, its reply not read."""


@dataclass(frozen=True, slots=True)
class PrepareAhead:
    """Start the record of the span `plan` cuts (once the gate lets it go); the request goes on."""

    plan: CondensePlan


@dataclass(frozen=True, slots=True)
class StartHeld:
    """Past the trigger, under the hold line: start the record a summary now would make (once the
    gate lets it go) and let the request go as it is."""

    plan: CondensePlan


@dataclass(frozen=True, slots=True)
class Condense:
    """L2 now, the turn waiting for its record: the one prepared ahead (`ahead`), or one made now."""

    ahead: Ahead | None


@dataclass(frozen=True, slots=True)
class StandInDigest:
    """A digest of the span of `plan` now, the model's record written in the background: the call
    prepared ahead goes on (`reuse`), or the one a summary now would make is started."""

    plan: CondensePlan
    reuse: bool


@dataclass(frozen=True, slots=True)
class WaitForRecord:
    """The digest could not stand in: the turn waits for the record the call already made writes."""

    plan: CondensePlan
    path: str
    ahead: bool


@dataclass(frozen=True, slots=True)
class OweRecord:
    """The run ends with a digest standing in for a record whose call has not ended: the call is
    dropped (exit does not wait for it) and the session logs the record as owed, so the next run of
    the session makes it before its first request (`Owed`, then `FinishRecord`)."""

    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class FinishRecord:
    """The record an earlier run owed (its digest still leads): made now, before the request goes
    (the turn waits for it, as for a blocking summary), and swapped in."""

    stand_in: StandIn


@dataclass(frozen=True, slots=True)
class Say:
    """A notice for the user (the latch just began to hold; a usage report not believed)."""

    text: str


@dataclass(frozen=True, slots=True)
class Drop:
    """L4 after an automatic compaction that failed (it left the request above the trigger)."""


@dataclass(frozen=True, slots=True)
class StopAutomatic:
    """The loop guard stopped automatic compaction, after `failures` in a row (L4 follows, as after
    any failed compaction)."""

    failures: int
    text: str


@dataclass(frozen=True, slots=True)
class Mark:
    """The message to mark for the provider's cache (the last the next clear keeps), if any, and
    whether the newest message is worth writing to it (`newest`: False when the next request is
    expected to clear it, so a write would never be read back: `cache_choices._worth_writing`);
    `span_end`: the last message of the span the next summary would condense, if any (marked, its
    summary request reads the span back: `cache_choices.sending`); `checkpoint`: the message marked
    for an hour, if any (a request after a long pause reads back up to it: `cache_choices._checkpoint`)."""

    anchor: int | None
    newest: bool = True
    span_end: int | None = None
    checkpoint: int | None = None


Action = (
    Nothing | Clear | Hold | SwapIn | Forget | PrepareAhead | StartHeld | Condense | StandInDigest
    | WaitForRecord | OweRecord | FinishRecord | Say | Drop | StopAutomatic | Mark
)  # fmt: skip


def takes_call(action: Action) -> bool:
    """Whether carrying `action` out takes the background call (else the call follows the record)."""
    return (
        isinstance(action, SwapIn)
        or (isinstance(action, Condense) and action.ahead is not None)
        or (isinstance(action, StandInDigest) and action.reuse)
    )

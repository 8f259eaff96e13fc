"""When one reply is not the whole answer: a reply cut off at the output limit, or a paused turn.

A reply that stopped at `max_tokens` is continued by asking for the rest (at most
`MAX_CONTINUATIONS` times a turn): that is no input overflow, so nothing is compacted for it. A
turn the provider paused (Anthropic's `pause_turn`) is continued as Anthropic documents it: the
paused reply goes back as it is, as the last turn, and the model goes on with the same turn; a
provider that pauses more than `MAX_PAUSES` times in a row is not asked again. Either way the
turn's answer is then the text of every reply, not only the last one's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "CONTINUE_AFTER_CUTOFF",
    "MAX_CONTINUATIONS",
    "MAX_PAUSES",
    "TOO_MANY_PAUSES",
    "Continuations",
    "Step",
]

CONTINUE_AFTER_CUTOFF = "Your last reply hit the output token limit. Continue exactly where it stopped."
MAX_CONTINUATIONS = 3
MAX_PAUSES = 8
TOO_MANY_PAUSES = f"The provider paused this turn {MAX_PAUSES} times in a row; send a message to go on."

Step: TypeAlias = Literal["paused", "cut_off", "too_many_pauses", "done"]


@dataclass(slots=True)
class Continuations:
    """One turn's count of continued replies; `after` says what a reply's stop reason asks for."""

    cutoffs: int = 0
    pauses: int = 0  # in a row
    continued: bool = False  # the answer is the text of more than one reply

    def after(self, stop_reason: str | None) -> Step:
        if stop_reason == "pause_turn":
            self.pauses += 1
            self.continued = True
            return "paused" if self.pauses <= MAX_PAUSES else "too_many_pauses"
        self.pauses = 0
        if stop_reason == "max_tokens" and self.cutoffs < MAX_CONTINUATIONS:
            self.cutoffs += 1
            self.continued = True
            return "cut_off"
        return "done"

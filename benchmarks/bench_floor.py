"""The floor of a session's bill, and the goals restated against it (issue 36, item 5).

    floor(session, frame_tokens) -> Bill      from the session's own, uncapped bytes
    floor_check(ours, seeds, baselines, low)  -> FloorCheck for one cell and one pace

The floor is what no policy can go below on a session, whatever it keeps: every distinct byte the
session sends is written to the cache once (the frame by the first request; each message by the
first request that carries it), every later request reads the frame back, and the replies are
output. Counted on the session's steps as recorded (no cap, no record, no stub), with the replay's
reference tokenizer and per-message overhead, so its units are the replay's (`Bill.dollars` with
`CLAUDE_RATIO` prices it as the replay's Claude bills).

The goals per cell (one pace: steady or paused): ours at most 1.5x the floor; ours' excess over the
floor at most half the best finishing seed's; and no baseline both cheaper than ours and at least as
faithful on every share it is given (the probes, and `bench_replay.SEEN`: the requests that carried
the message they answer).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench_billing import Bill, reference_count
from bench_sessions import Session

from agent_cli.core.messages import Message

__all__ = ["EXCESS_SHARE", "FLOOR_TIMES", "FloorCheck", "Rival", "floor", "floor_check", "message_tokens"]

FLOOR_TIMES = 1.5  # ours at most 1.5x the floor
EXCESS_SHARE = 0.5  # ours' excess over the floor at most half the best finishing seed's


def message_tokens(message: Message, count: Callable[[str], int] = reference_count) -> int:
    """The replay's count of one message (`bench_replay._Counts`): each block's JSON, plus 4."""
    return sum(count(json.dumps(b.to_json(), ensure_ascii=False)) for b in message.content) + 4


def floor(session: Session, frame_tokens: int, count: Callable[[str], int] = reference_count) -> Bill:
    """The floor's tokens: writes (frame once, each message once when first sent), reads (the frame,
    by every request after the first), output (each reply). A message no request sends (after the
    last reply) is not written."""
    bill = Bill(write=frame_tokens)
    pending = 0
    requests = 0
    for step in session.steps:
        if step.is_user:
            pending += message_tokens(step.messages[0], count)
            continue
        requests += 1
        if requests > 1:
            bill.read += frame_tokens
        bill.write += pending
        reply, *results = step.messages
        bill.output += message_tokens(reply, count)
        pending = sum(message_tokens(m, count) for m in (reply, *results))
    return bill


@dataclass(frozen=True)
class Rival:
    """One other policy's figures in a cell: its cost, whether it finished, its probe shares."""

    policy: str
    cost: float
    finished: bool
    shares: dict[str, float | None]


@dataclass(frozen=True)
class FloorCheck:
    floor: float
    ours: float
    best_seed: Rival | None
    beaten_by: tuple[str, ...]

    @property
    def times(self) -> float:
        return self.ours / self.floor if self.floor else float("inf")

    @property
    def excess_share(self) -> float | None:
        """Ours' excess over the floor as a share of the best finishing seed's (None: no seed
        finished, or the seed is at or below the floor, where a share says nothing)."""
        if self.best_seed is None or self.best_seed.cost <= self.floor:
            return None
        return (self.ours - self.floor) / (self.best_seed.cost - self.floor)

    @property
    def excess_met(self) -> bool:
        """Ours' excess at most half the best finishing seed's (both may be below the floor, where
        a policy caps what it keeps: then ours must be that much further below)."""
        if self.best_seed is None:
            return True
        return self.ours - self.floor <= EXCESS_SHARE * (self.best_seed.cost - self.floor) + 1e-12

    @property
    def misses(self) -> list[str]:
        out = []
        if self.times > FLOOR_TIMES:
            out.append(f"{self.times:.2f}x the floor (goal <= {FLOOR_TIMES}x)")
        if not self.excess_met and self.best_seed is not None:
            share = self.excess_share
            said = f"{share:.0%} of" if share is not None else "more than half of"
            out.append(f"excess {said} {self.best_seed.policy}'s (goal <= 50%)")
        if self.beaten_by:
            out.append("cheaper and as faithful: " + ", ".join(self.beaten_by))
        return out


def _as_faithful(other: Rival, ours: Rival) -> bool:
    for probe, mine in ours.shares.items():
        theirs = other.shares.get(probe)
        if mine is not None and (theirs is None or theirs + 1e-9 < mine):
            return False
    return True


def floor_check(ours: Rival, seeds: Sequence[Rival], baselines: Sequence[Rival], low: float) -> FloorCheck:
    """The three goals for one cell at one pace (`low`: the floor in the same unit as the costs)."""
    done = [s for s in seeds if s.finished]
    best = min(done, key=lambda s: s.cost) if done else None
    beaten = tuple(
        b.policy for b in [*seeds, *baselines] if b.finished and b.cost < ours.cost and _as_faithful(b, ours)
    )
    return FloorCheck(low, ours.cost, best, beaten)

"""L2/L3 planning: which leading span of the history a condensed record replaces (pure).

Terms:
- the *engine prefix*: the leading messages that are the engine's own (an
  earlier record or a note, and its acknowledgement). A new record folds the
  old one in, so the span always starts at 0, but a span that holds nothing
  beyond the prefix is not worth a summary.
- the *unanswered end*: what the model has not answered yet stays verbatim.
  That is the latest plain user request, and, for the automatic layers, a
  trailing tool round whose results the model has not seen (else it would never
  see that output).
- the *cut*: `messages[:cut]` become the record, `messages[cut:]` stay. L2 keeps
  up to `keep_tail` tokens verbatim and cuts at a safe boundary (cut.py); L3,
  asked for by the user or the model, condenses everything up to the open round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.cut import find_safe_cut, open_round_start
from agent_cli.context.emergency import is_ack
from agent_cli.context.thresholds import Thresholds, is_engine_note
from agent_cli.core.messages import Message

__all__ = ["CondensePlan", "engine_prefix", "plan_condense"]


@dataclass(frozen=True, slots=True)
class CondensePlan:
    prefix: int  # leading messages that are the engine's own record or note
    cut: int  # messages[:cut] become the record; messages[cut:] stay verbatim

    def span(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[: self.cut])

    def tail(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[self.cut :])


def engine_prefix(messages: Sequence[Message]) -> int:
    """How many leading messages are the engine's own (a record or note, and its acknowledgement)."""
    first = messages[0] if messages else None
    if first is not None and (first.summary is not None or first.native is not None or is_engine_note(first)):
        return 2 if len(messages) > 1 and is_ack(messages[1]) else 1
    return 0


def plan_condense(
    messages: Sequence[Message], counts: Sequence[int], thresholds: Thresholds, *, requested: bool
) -> CondensePlan | None:
    """Where to cut for a record (L3 when `requested`, else L2); None when nothing is worth condensing.

    `counts[i]` is the token count of `messages[i]`. An automatic cut must
    replace more than a record's worth of tokens: condensing a span no larger
    than the summary cap frees nothing, so no model call is made for it.
    """
    prefix = engine_prefix(messages)
    end = len(messages) - 1 if messages and messages[-1].is_plain_user else len(messages)
    if requested:
        cut = open_round_start(messages[:end])
    else:
        end = min(end, open_round_start(messages))
        room = max(thresholds.keep_tail - sum(counts[end:]), 0)
        cut = find_safe_cut(messages[:end], counts[:end], room, floor=prefix + 1)
    if cut <= prefix:
        return None
    if not requested and sum(counts[prefix:cut]) <= thresholds.summary_cap:
        return None
    return CondensePlan(prefix, cut)

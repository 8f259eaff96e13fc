"""Where a history may be cut (pure): the boundaries a cut may take, and the span L2/L3 replaces.

Pure functions over message lists. A cut at index `i` splits `messages[:i]`
(replaced or dropped) from `messages[i:]` (kept). It is *safe* when no tool
call before `i` has its result at or after `i`, and when it does not cut off a
trailing tool round that is still open (its results not yet in). Between two
consecutive safe cuts lies a *group*: the smallest unit a layer may remove.

Which span L2/L3 replaces (`plan_condense`):
- the *engine prefix*: the leading messages that are the engine's own (an
  earlier record or a note, and its acknowledgement, `ACK`). A new record folds the
  old one in, so the span always starts at 0, but a span that holds nothing
  beyond the prefix is not worth a summary.
- the *unanswered end*: what the model has not answered yet stays verbatim.
  That is the latest plain user request, and, for the automatic layers, a
  trailing tool round whose results the model has not seen (else it would never
  see that output).
- the *span*: `messages[:cut]` become the record, `messages[cut:]` stay. L2 keeps
  up to `keep_tail` tokens verbatim and cuts at a safe boundary (`find_safe_cut`); L3,
  asked for by the user or the model, condenses everything up to the open round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.thresholds import Thresholds
from agent_cli.core.messages import Message

__all__ = [
    "ACK",
    "ENGINE_NOTE_PREFIX",
    "CondensePlan",
    "engine_prefix",
    "find_safe_cut",
    "groups",
    "is_ack",
    "is_engine_note",
    "is_preferred_cut",
    "latest_user_index",
    "open_round_start",
    "plan_condense",
    "safe_cuts",
]

# -- the engine's own messages, and the user's ------------------------------------------------------

# Text the engine itself puts into user messages starts with this, so later
# compactions do not mistake its notes for something the user typed.
ENGINE_NOTE_PREFIX = "[context note: "

# The assistant turn that follows an engine note, so user and assistant alternate.
ACK = "Understood. I will continue from here."


def is_engine_note(message: Message) -> bool:
    return message.role == "user" and message.text.startswith(ENGINE_NOTE_PREFIX)


def latest_user_index(messages: Sequence[Message]) -> int | None:
    """Index of the newest message the user typed, or None."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].is_plain_user and not is_engine_note(messages[i]):
            return i
    return None


# -- safe cuts -------------------------------------------------------------------------------------


def safe_cuts(messages: Sequence[Message]) -> list[bool]:
    """`ok[i]` for i in 0..len(messages): may the history be cut before message i?"""
    n = len(messages)
    used_at: dict[str, int] = {}
    answered: set[str] = set()
    # diff[k] += 1 / diff[j+1] -= 1 marks cuts k..j unsafe; O(n + blocks).
    diff = [0] * (n + 2)
    last_assistant = -1
    for i, message in enumerate(messages):
        if message.role == "assistant":
            last_assistant = i
            for use in message.tool_uses:
                used_at[use.id] = i
        for result in message.tool_results:
            u = used_at.get(result.tool_use_id)
            if u is not None and u < i:
                answered.add(result.tool_use_id)
                diff[u + 1] += 1
                diff[i + 1] -= 1
    # A call still waiting for its result: only the trailing round counts (the
    # loop appends the result next); an old unanswered call is a broken history
    # the loop repairs, and must not freeze every cut after it.
    for use_id, u in used_at.items():
        if use_id not in answered and u == last_assistant:
            diff[u + 1] += 1
            diff[n + 1] -= 1
    ok: list[bool] = []
    running = 0
    for i in range(n + 1):
        running += diff[i]
        ok.append(running == 0)
    return ok


def is_preferred_cut(messages: Sequence[Message], i: int) -> bool:
    """A turn boundary: before a plain user message or right after a finished assistant turn."""
    if i <= 0 or i >= len(messages):
        return True
    before = messages[i - 1]
    return messages[i].is_plain_user or (before.role == "assistant" and not before.tool_uses)


def groups(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """The history as consecutive `(start, end)` slices, each the smallest removable unit."""
    ok = safe_cuts(messages)
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(messages) + 1):
        if ok[i]:
            out.append((start, i))
            start = i
    if start < len(messages):  # an open trailing round: one group to the end
        out.append((start, len(messages)))
    return out


def open_round_start(messages: Sequence[Message]) -> int:
    """Where the trailing tool round starts if the history ends inside one, else len(messages).

    The history ends inside a round when its last message is an assistant tool
    call (results pending) or a tool result the model has not answered yet.
    """
    n = len(messages)
    if n == 0:
        return 0
    last = messages[-1]
    if last.role == "assistant" and last.tool_uses:
        return n - 1
    if last.role == "user" and last.tool_results:
        ok = safe_cuts(messages)
        for i in range(n - 1, -1, -1):
            if ok[i] and messages[i].role == "assistant":
                return i
    return n


def find_safe_cut(
    messages: Sequence[Message], counts: Sequence[int], keep_tokens: int, *, floor: int = 0
) -> int:
    """The cut that keeps the longest verbatim tail of at most `keep_tokens`, at a safe boundary.

    `counts[i]` is message i's token count. Among safe cuts whose tail fits,
    a turn boundary is preferred when it keeps at least half the allowance
    (gemini-cli cuts only at user messages; aider ends the replaced head on a
    finished assistant turn). If no safe cut leaves a fitting tail (a huge open
    round at the end), the nearest safe cut before it is returned. The result
    is never below `floor` (taken as `len(messages)` when it is larger).
    """
    n = len(messages)
    floor = min(max(floor, 0), n)  # a floor past the end means "the end"
    ok = safe_cuts(messages)
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + counts[i]
    first_fit = n
    for i in range(floor, n + 1):
        if suffix[i] <= keep_tokens:
            first_fit = i
            break
    fitting = [i for i in range(first_fit, n + 1) if ok[i]]
    if fitting:
        for i in fitting:
            if suffix[i] * 2 < keep_tokens and i != fitting[0]:
                break
            if is_preferred_cut(messages, i):
                return i
        return fitting[0]
    for i in range(first_fit, floor - 1, -1):
        if ok[i]:
            return i
    return floor


# -- the span L2/L3 replaces -----------------------------------------------------------------------


def is_ack(message: Message) -> bool:
    return message.role == "assistant" and message.text == ACK and not message.tool_uses


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

"""Where a history may be cut without splitting a tool_use from its tool_result.

Pure functions over message lists. A cut at index `i` splits `messages[:i]`
(replaced or dropped) from `messages[i:]` (kept). It is *safe* when no tool
call before `i` has its result at or after `i`, and when it does not cut off a
trailing tool round that is still open (its results not yet in). Between two
consecutive safe cuts lies a *group*: the smallest unit a layer may remove.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.core.messages import Message

__all__ = ["find_safe_cut", "groups", "is_preferred_cut", "open_round_start", "safe_cuts"]


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

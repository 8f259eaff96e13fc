"""Preserved thinking and an edited history: what to keep so every request passes the prefix check.

A thinking block (and an encrypted reasoning item) is bound to the exact
conversation before it. When anything before it changes (a layer clears an
old tool result, a record replaces the older part, pair repair answers a call
on resume, a resumed log carries redacted text) the block no longer matches:
Claude 5.5 rejects the request with a 400 ("bound to a different
conversation"), OpenAI silently withholds the item.

One change is not one: a provider's record that stands for the older part of the history and
whose docs say the turns sent right after it keep their thinking (`NativeRecord.keeps_tail`,
Anthropic's keep-tail compaction) replaces that part without changing what follows it.

The rule here: after the first position where a history changed, every
assistant message loses its thinking blocks, whole (the API accepts removing
all of a turn's thinking; it rejects a partial or moved one). Thinking before
that position stays, byte for byte. Why strip rather than send the API's
`drop_block` setting: both lose exactly the same reasoning (drop_block drops
the first failing block and every thinking block after it) and restart the
prompt cache at the same place, but stripping sends fewer bytes, needs no beta
header, works for the Responses API too, and leaves a history that is
append-only from then on (docs/context-engine.md has the measurement).

Pure functions over message lists.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.core.messages import Message
from agent_cli.core.thought_blocks import THOUGHT_TYPES

__all__ = ["first_change", "settle_thinking", "strip_thinking"]


def first_change(before: Sequence[Message], after: Sequence[Message]) -> int | None:
    """The first index where `after` differs from `before` (messages compare by id), None if none does.

    A history that only grew at the end has not changed: appending is what the
    conversation does.
    """
    for i, (old, new) in enumerate(zip(before, after, strict=False)):
        if old.id != new.id:
            return i
    if len(after) < len(before):
        return len(after)
    return None


def strip_thinking(messages: Sequence[Message], start: int) -> list[Message]:
    """`messages` with every thinking block removed from index `start` on (a message left empty goes)."""
    out = list(messages[:start])
    for message in messages[start:]:
        if not message.thoughts:
            out.append(message)
            continue
        kept = [b for b in message.content if not isinstance(b, THOUGHT_TYPES)]
        if kept:
            out.append(message.replace(kept))
    return out


def _after_record(before: Sequence[Message], after: Sequence[Message]) -> int | None:
    """The first change in `after` past a keep-tail record at its start: the kept turns follow it as
    they were in `before` (by id), and what comes after them is appended."""
    if len(after) < 2:
        return None
    ids = [m.id for m in before]
    if after[1].id not in ids:
        return 1
    j = ids.index(after[1].id)
    for k in range(1, len(after)):
        if j + k - 1 >= len(before):
            return None  # the rest was appended
        if before[j + k - 1].id != after[k].id:
            return k
    return None


def settle_thinking(before: Sequence[Message], after: Sequence[Message]) -> list[Message]:
    """`after`, with the thinking that its changes to `before` made invalid removed."""
    start = first_change(before, after)
    record = after[0].native if start == 0 and after else None
    if record is not None and record.keeps_tail and (not before or before[0].id != after[0].id):
        start = _after_record(before, after)
    if start is None or not any(m.thoughts for m in after[start:]):
        return list(after)
    return strip_thinking(after, start)

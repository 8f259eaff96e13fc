"""Thinking blocks on the Anthropic wire: sealing the reply's blocks, and checking them on replay.

Terms. A *thinking block* is a `thinking` block (its seal in `signature`) or a `redacted_thinking`
block (its seal in `data`); `binding` defines the seal. A block's *prefix* is the non-thinking
content before it: system, tools, the messages before its own (without their thinking blocks),
and the earlier non-thinking blocks of its own message. A block is *kept* when the model reads
it, *dropped* when the API leaves it out without an error.

The rules, as the providers' docs describe them:
- a block holds when its seal was made by this model over the request's own prefix for it, so
  changing, adding or removing anything that is not thinking before it breaks it; its own
  `thinking` text is not checked (the docs: it "is ignored").
- the chain: each seal records the digest of the kept thinking block before it at the time it was
  written. A kept block that is not the first kept block of the request must name the kept block
  before it in this request. So a block left out (or moved) between kept blocks breaks the next
  one, while removing blocks from the start, from the end, or all of them breaks nothing.
- a block sealed for another model is dropped silently (model binding).
- a block that does not hold is a 400 naming its place; with `drop_block` it and every later
  thinking block of the request are dropped instead, and reported. A string that is not a seal
  at all (tampered) is always the 400.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .binding import canonical, digest, holds, same_model, seal, unseal
from .compaction import expanded, is_compaction, prefix_messages
from .wire import JSON, blocks

__all__ = ["Review", "is_thinking", "review", "seal_text", "seals"]

_THINKING = ("thinking", "redacted_thinking")


def is_thinking(block: JSON) -> bool:
    return block.get("type") in _THINKING


def seal_text(block: JSON) -> str:
    return str((block.get("signature") if block.get("type") == "thinking" else block.get("data")) or "")


class _Prefixes:
    """The canonical pieces of one request's prefixes, each message canonicalized once. A compaction
    block first stands for the messages it summarized (keep-tail: the kept turns' thinking was sealed
    over those): `compaction.prefix_messages`."""

    def __init__(self, body: JSON) -> None:
        system = body.get("system")
        self._head = [canonical(blocks(system) if system else []), canonical(list(body.get("tools") or []))]
        self._messages, self._offset = prefix_messages(body)
        self._compacted = expanded(body) is not None

    def at(self, index: int, own: Sequence[JSON]) -> list[str]:
        """The prefix of a block in message `index`, after the blocks `own` of that message."""
        mine = [
            b
            for b in own
            if isinstance(b, dict)
            and not is_thinking(b)
            and not (index == 0 and self._compacted and is_compaction(b))
        ]
        return [*self._head, *self._messages[: index + self._offset], canonical(mine)]


@dataclass(frozen=True)
class Review:
    """What replaying a request's thinking comes to."""

    body: JSON  # the request as the model reads it: without the dropped blocks
    kept: int = 0
    dropped: tuple[JSON, ...] = ()  # input_transformations entries, in request order
    failure: str | None = None  # "messages.{i}.content.{j}" of a block that does not hold


def review(body: JSON, model: str, key: bytes, *, drop: bool) -> Review:
    """Check every thinking block of the request (see the module docstring)."""
    prefixes = _Prefixes(body)
    kept, dropped, gone = 0, list[JSON](), set[tuple[int, int]]()
    previous: str | None = None  # digest of the last kept block
    failing = False  # drop_block: a block failed, so every later one goes too
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, dict) or not is_thinking(block):
                continue
            path = f"messages.{i}.content.{j}"
            text = seal_text(block)
            found = unseal(text)
            if found is None:
                return Review(body, kept, tuple(dropped), path)
            if not same_model(found, model):
                reason = "model_binding_mismatch"
            elif (
                not failing
                and previous in (None, found.ref)
                and holds(key, found, model, prefixes.at(i, content[:j]))
            ):
                kept, previous = kept + 1, digest(text)
                continue
            elif drop:
                failing, reason = True, "prefix_binding_mismatch"
            else:
                return Review(body, kept, tuple(dropped), path)
            gone.add((i, j))
            dropped.append({"type": "thinking_dropped", "path": path, "reason": reason})
    return Review(_without(body, gone), kept, tuple(dropped))


def _without(body: JSON, gone: set[tuple[int, int]]) -> JSON:
    if not gone:
        return body
    messages = []
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        if isinstance(content, list):
            message = {**message, "content": [b for j, b in enumerate(content) if (i, j) not in gone]}
        messages.append(message)
    return {**body, "messages": messages}


def seals(body: JSON, model: str, key: bytes, reply: Sequence[JSON], tokens: Sequence[int]) -> list[str]:
    """The seals of the reply's thinking blocks, in order; `tokens[k]` is the k-th block's reasoning.

    `body` is the request as the model read it (its kept blocks only): the reply's first block
    records the digest of the last of them. A reply to a request that ends with an assistant turn
    (a paused turn sent back to continue it) joins that turn: its blocks' prefix is the turn so far.
    """
    prefixes = _Prefixes(body)
    messages = body.get("messages") or []
    index, carried = len(messages), list[JSON]()
    if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "assistant":
        index, carried = index - 1, blocks(messages[-1].get("content"))
    earlier = [
        seal_text(b) for m in body.get("messages") or [] for b in blocks(m.get("content")) if is_thinking(b)
    ]
    previous = digest(earlier[-1]) if earlier else "-"
    made: list[str] = []
    for j, block in enumerate(reply):
        if is_thinking(block):
            text = seal(key, model, previous, prefixes.at(index, [*carried, *reply[:j]]), tokens[len(made)])
            made.append(text)
            previous = digest(text)
    return made

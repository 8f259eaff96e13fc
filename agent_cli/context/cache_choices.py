"""The engine's choices that weigh the provider's prompt cache, pure: L1's clear and a request's marks.

    action, state = clearing(state, Clearing(...))   # L1: Clear a batch worth its rewrite, or Nothing
    action, state = sending(state, Sending(...))     # Mark: the anchor, the span's end, the newest or not,
                                                     #   the 1-hour checkpoint

`decide.decide` (decide.py) asks these for its `Clearing`, `PastTrigger` and `Sending` rows; they are
one responsibility because each weighs the same thing, what a change to the history or a write costs
in the session's cache prices (`EngineState.price`), and because whether the newest message is worth
writing is asked of the clear itself (`_next_keeps`). No call, no thread, no clock: a time comes in
the observation.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence

from agent_cli.context.clear import clearable, is_stub, next_change
from agent_cli.context.cut import engine_prefix
from agent_cli.context.engine_state import Cached, EngineState
from agent_cli.context.engine_values import Action, Clear, Clearing, Mark, Nothing, Sending
from agent_cli.core.messages import Message

__all__ = ["clearing", "sending"]


def clearing(state: EngineState, seen: Clearing) -> tuple[Action, EngineState]:
    """L1: stub old tool results when a big enough batch can go (never in the span whose record is
    being prepared). Past the trigger it must also get the request below the trigger, else L2 takes
    the span whole (its summary sees the output, not stubs). Clearing is free and a summary is a
    model call: L1 carries what it can. A clear rewrites the cache from its first change on, hence
    the minimum batch; when the cache has gone cold (an idle gap past its TTL: `EngineState.cold`)
    the next request rewrites everything anyway, so any batch is worth clearing then."""
    th, messages = state.thresholds, seen.messages
    to_clear, freed = clearable(messages, seen.counts, protect_tokens=th.clear_protect, start=state.holds)
    cold = state.cold(seen.at)
    minimum = 1 if cold else th.clear_min_batch
    if freed < minimum or not to_clear:
        # What L1 could free grows by at most what the history grows: while the same history (same
        # first message) has not grown by the shortfall, there is no need to look again. Keeps
        # prepare O(new content) above the L1 line.
        key = messages[0].id if messages else ""
        return Nothing(), dataclasses.replace(
            state, clear_skip=(key, seen.tokens + th.clear_min_batch - freed)
        )
    if seen.past and seen.tokens - freed >= th.trigger_at:
        return Nothing(), state  # L1 alone cannot get below the trigger: L2 takes the span whole
    if not (cold or seen.past or _repays(state, seen, min(to_clear), freed)):
        return Nothing(), state  # a bigger batch later, or L2 takes the span: cheaper than this rewrite
    return Clear(to_clear, freed), state


def sending(state: EngineState, seen: Sending) -> tuple[Action, EngineState]:
    """The anchor: the last message the next clear keeps (see `clear.next_change`), if any; the
    last message of the span the next summary would condense (`_span_end`); whether the newest
    message is worth writing to the cache (`_worth_writing`); and the 1-hour checkpoint
    (`_checkpoint`)."""
    change = next_change(seen.messages, seen.counts) if seen.counts is not None else None
    anchor = change - 1 if change else None
    named = seen.messages[anchor].id if anchor is not None else None
    rounds = _rounds(state.cache.rounds, seen)
    cache = Cached(anchor=named, index=anchor, next_change=change, at=seen.at, rounds=rounds)
    newest = anchor is None or _worth_writing(state, seen, rounds)
    span_end = _span_end(state, seen)
    held = seen.messages[span_end].id if span_end is not None else None
    checkpoint, kept = _checkpoint(state, seen, newest)
    # (what `_checkpoint` compares the next request with: kept only where a 1-hour mark may be placed)
    marks = state.price.marks and not state.price.free
    last = len(seen.messages) - 1
    sent = (seen.messages[last].id, _prefix(seen.messages, last)) if marks and seen.messages else None
    colds = state.cache.colds + (1 if state.cold(seen.at) else 0)
    cache = dataclasses.replace(
        cache, held=held, checkpoint=kept, sent=sent, requests=state.cache.requests + 1, colds=colds
    )
    return Mark(anchor, newest, span_end, checkpoint), dataclasses.replace(state, cache=cache)


_HOUR = 3600.0  # a 1-hour entry's life unused


def _checkpoint(state: EngineState, seen: Sending, newest: bool) -> tuple[int | None, tuple[str, str] | None]:
    """The message marked for an hour, if any, and what `Cached.checkpoint` keeps of it. A user's
    pause past 5 minutes lets every 5-minute entry expire, and the next request writes the whole
    prompt again (`write`); a 1-hour entry is read back instead (`read`) up to its message. A 1-hour
    entry is written only where its message is the newest (an entry already written keeps its TTL),
    and only the request's new tokens pay its price (`write_hour`, 2x, for `write`, 1.25x): so a
    checkpoint is named only at the newest message of a request whose last request's messages are
    there unchanged and the cache warm, and only when that pays: when the tokens it would read back
    beyond the current checkpoint (all of them if there is none), times the saving at a cold
    request and the chance that the next request is cold (the session's cold requests so far, over
    its requests: none at a steady pace, where nothing is ever named), outweigh the new tokens
    times the extra write price. The checkpoint holds while the messages up to it are the same (a
    change before it would be written again at 1 hour: it is let go; a message's content never
    changes under its id, so the ids tell) and it was used within the hour. None on an automatic
    cache (it keeps every prefix) or a free one, and before anything is counted."""
    price, counts, messages, cache = state.price, seen.counts, seen.messages, state.cache
    if not price.marks or price.free or not messages or counts is None:
        return None, None
    at = _same(messages, cache.checkpoint)
    if at is not None and not (cache.at is None or seen.at is None or seen.at - cache.at < _HOUR):
        at = None
    kept = (at, cache.checkpoint) if at is not None else (None, None)
    last = _same(messages, cache.sent)
    if not newest or last is None or state.cold(seen.at) or cache.colds == 0:
        return kept
    new = sum(counts[last + 1 :])
    gained = sum(counts[at + 1 :] if at is not None else counts)
    chance = cache.colds / max(cache.requests, 1)
    if chance * (price.write - price.read) * gained < (price.write_hour - price.write) * new:
        return kept
    return len(messages) - 1, (messages[-1].id, _prefix(messages, len(messages) - 1))


def _same(messages: Sequence[Message], named: tuple[str, str] | None) -> int | None:
    """The index of the message `named` (its id, `_prefix` up to it) if the messages up to it are
    the ones named."""
    if named is None:
        return None
    at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].id == named[0]), None)
    return at if at is not None and _prefix(messages, at) == named[1] else None


def _prefix(messages: Sequence[Message], upto: int) -> str:
    """A digest of the ids of the messages up to and including `upto`."""
    return hashlib.sha1("\0".join(m.id for m in messages[: upto + 1]).encode()).hexdigest()


def _span_end(state: EngineState, seen: Sending) -> int | None:
    """The message each request marks where the next summary's span will end. The summary request
    sends its span as it is; on a cache that reads only at marked points (Anthropic's) it reads the
    span back only from an entry still alive at or near the span's end. The entry written when that
    message was newest expires 5 minutes after its last use, and no request reads it again, so the
    span would be written all over (in the replay, most of the summary calls' cost). Marked by every
    request from the one that wrote it on, it is read and so refreshed each time, and lives until
    the summary reads it.

    The summary made at the trigger keeps at most `keep_tail` verbatim, and one prepared ahead (above
    the prepare line, or at a turn's end) keeps that tail less the room left to the trigger, which
    regrows by then: either way its span ends at or after the last message that fits under the
    trigger less the tail (`_reach`).
    While the history is under that point the newest message is that message, written by its own
    request; past it, the message is held (`Cached.held`) while it stays at or before the point
    (a count that moves by a token does not move the mark off the written entry). A later cut (the
    request overshoots the line) leaves a few messages to write. None on an automatic cache (it
    keeps every prefix) or a free one."""
    price, counts = state.price, seen.counts
    if counts is None or not price.marks or price.free:
        return None
    reach = _reach(state, seen, counts)
    if reach is None:
        return None
    sent = [i for i, m in enumerate(seen.messages) if m.id in state.in_request]
    if reach >= (sent[-1] if sent else -1):
        return reach  # the last request's newest or later: written by it or by this request
    held, messages = state.cache.held, seen.messages
    at = next((i for i in range(reach + 1, -1, -1) if messages[i].id == held), None) if held else None
    # (the held message joined by the next on the wire ends no turn; the newest always ends one: the
    # loop appends after every answer, but a request sent again as it was must not fail here)
    if at is None or (at + 1 < len(messages) and messages[at + 1].role == messages[at].role):
        return reach
    return at


def _reach(state: EngineState, seen: Sending, counts: Sequence[int]) -> int | None:
    """The last message that fits under the summary's line less the verbatim tail, if any."""
    th = state.thresholds
    room = th.trigger_at - th.keep_tail - seen.frame
    messages = seen.messages
    first = engine_prefix(messages)  # (a record and its acknowledgement lead every span)
    total, last = sum(counts[:first]), None
    for i in range(first, len(counts)):
        total += counts[i]
        if total > room:
            break
        if i + 1 == len(messages) or messages[i + 1].role != messages[i].role:
            last = i  # (a message the next one joins on the wire ends no turn: no mark goes there)
    return last


def _repays(state: EngineState, seen: Clearing, first: int, freed: int) -> bool:
    """Whether a warm clear below the trigger repays the rewrite it causes, in the session's cache
    prices (`EngineState.price`). The next request reads the prefix up to the clear's first change
    and sends what follows again: what the last request held after it, less the freed tokens, costs
    `write` instead of `read` (on OpenAI's automatic cache every such token; on Anthropic's up to the
    last breakpoint, about the same). The saving: the freed tokens are not read back at each later
    request until the trigger, about (trigger - the request after the clear) / a round like the
    newest. A clear that the next round needs to stay below the trigger is always worth it (L2 costs
    more), and a free cache (a compatible server) prices nothing: the minimum batch alone decides.
    With OpenAI's cheap reads (gpt-6.2-sol: 0.05x, writes 1.25x) a deep clear waits for a bigger
    batch, or for L2, where Anthropic's (0.1x) would clear now."""
    price, counts, th = state.price, seen.counts, state.thresholds
    round_tokens = max(sum(counts[-2:]), 1)  # what the next request adds: a round like the newest
    if price.free or price.write <= price.read or seen.tokens + round_tokens >= th.trigger_at:
        return True
    held = [i for i, m in enumerate(seen.messages) if m.id in state.in_request]
    end = held[-1] + 1 if held else len(counts)  # (the last request's messages: what the cache holds)
    rewrite = max(sum(counts[first:end]) - freed, 0)
    horizon = max((th.trigger_at - (seen.tokens - freed)) / round_tokens, 1.0)
    return freed * price.read * horizon >= rewrite * (price.write - price.read)


def _worth_writing(state: EngineState, seen: Sending, rounds: Sequence[tuple[str, int]]) -> bool:
    """Whether writing the newest message to the cache pays. Written, it costs `write` a token now
    and `read` at the next request if it is still there; sent unwritten, 1 now and `write` at the
    next request if it is still there (nothing if the next clear stubs it). So it is written when
    write < 1 + p * (write - read), p the chance it is still there. p is 0 only when the next clear
    takes the newest message's results whatever the next round brings (a survey that reads a file a
    turn: each read is stubbed by the next clear, and writing it at 1.25x was paid for a read that
    never came), 1 otherwise. What the next clear does is asked of `_clearing` itself, on the history
    grown by a round (`_next_keeps`). The next round's size is not known: it is taken as small as the
    smallest and as big as the biggest of the session's last `_RECENT_ROUNDS` rounds (`Cached.rounds`,
    each at its size when sent, remembered across compactions: the two or three rounds a compaction
    leaves are no sample), its call as the newest's (in the small round, no larger than its
    results: an edit's long input says nothing of the next call), and the message is left unwritten
    only when the clear takes it in both.
    A smaller round leaves it inside L1's protected window, a bigger one sends the request past the
    trigger where the clear cannot get below it and L2's summary request reads it back; a missed
    write costs 0.9x a token, a wasted one 0.25x."""
    price, counts, messages = state.price, seen.counts, seen.messages
    if counts is None or len(messages) < 2 or not messages[-1].tool_results:
        return True
    if not price.marks or price.free:
        return True  # an automatic cache keeps every prefix sent: there is no write to leave out
    sizes = [size for _, size in rounds]
    call, small, big = counts[-2], min(sizes), max(sizes)
    survives = _next_keeps(state, seen, small, min(call, small)) or _next_keeps(state, seen, big, call)
    return price.write < 1 + (price.write - price.read if survives else 0.0)


# (the recent rounds the next one is guessed from)
_RECENT_ROUNDS = 4


def _rounds(known: tuple[tuple[str, int], ...], seen: Sending) -> tuple[tuple[str, int], ...]:
    """`known` with the newest message's tool results added, if it holds some not seen yet and not
    stubbed (a stub tells no round's size): the last `_RECENT_ROUNDS` rounds' sizes, newest last."""
    messages, counts = seen.messages, seen.counts
    if counts is None or not messages or not messages[-1].tool_results:
        return known
    newest = messages[-1]
    if any(newest.id == name for name, _ in known) or all(is_stub(r) for r in newest.tool_results):
        return known
    return (*known, (newest.id, counts[-1]))[-_RECENT_ROUNDS:]


def _next_keeps(state: EngineState, seen: Sending, size: int, call_size: int) -> bool:
    """Whether the newest message is still there as sent at the next request, if the next round is
    the newest's call again, of `call_size` tokens, with results of `size` tokens: what the engine
    does with that request,
    by the same tests it applies (the L1 line, /uncompact's size, `EngineState.clear_skipped`,
    `_clearing`)."""
    messages, counts, th = seen.messages, seen.counts or (), state.thresholds
    call, results = messages[-2], messages[-1]
    grown = [*messages, dataclasses.replace(call, id=f"{call.id}+next"),
             dataclasses.replace(results, id=f"{results.id}+next")]  # fmt: skip
    grown_counts = [*counts, call_size, size]
    tokens = seen.frame + sum(grown_counts)
    if tokens < max(th.clear_at, state.still_below):
        return True  # no clear below the L1 line, nor below the size the user kept
    # (the state the next request meets: this one sent now and held whole)
    state = dataclasses.replace(
        state,
        in_request=frozenset(m.id for m in messages),
        cache=dataclasses.replace(state.cache, at=seen.at),
    )
    if state.clear_skipped(grown, tokens, seen.at):
        return True
    past = tokens >= th.trigger_at
    action, _ = clearing(state, Clearing(grown, grown_counts, tokens, past, seen.at))
    # (not cleared, past the trigger: L2 comes, and its summary request reads the newest back)
    return not (isinstance(action, Clear) and len(messages) - 1 in action.to_clear)

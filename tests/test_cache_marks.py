"""Where the Anthropic requests' cache breakpoints go, billed by the cost model (issue 37, item 2).

A session is scripted through the real context engine (its L1 clears, its cache anchor) and each
request put on the wire by the adapter (`anthropic_wire.to_wire`, with the provider's record of
what earlier requests wrote) and billed by `billing.AnthropicCache` (explicit breakpoints, the
20-block look-back). Both tests failed before the change: the breakpoint before the newest round's
result was never sent (`clear.next_change` skipped that round, the one the next clear stubs), and
nothing kept a breakpoint within 20 blocks of the last write after a clear moved the anchor on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_context_fakes import FRAME, filler, make_engine, tool_round, user

from agent_cli.billing import AnthropicCache, Bill, CacheTerms
from agent_cli.billing.anthropic import prefix_ids as billing_prefix_ids
from agent_cli.billing.prices import CachePrices
from agent_cli.billing.wire_units import anthropic_request
from agent_cli.context.clear import is_stub
from agent_cli.core.messages import Message, ToolResult
from agent_cli.core.requests import Request, RequestOptions
from agent_cli.providers.anthropic_wire import to_wire
from agent_cli.providers.cache_marks import LOOKBACK, MAX_MARKS, WrittenPrefixes, prefix_ids
from agent_cli.testing.fakeserver.anthropic_api import _problem

MODEL = "claude-sonnet-4-6"
# No minimum length: the scripted requests are small, and where the marks go is the subject.
TERMS = CacheTerms(CachePrices(input=3.0, cache_read=0.3, write_5m=3.75, write_1h=6.0), minimum=1)


def count(text: str) -> int:
    return (len(text) + 3) // 4


class Session:
    """Requests as the provider sends them (one record of writes, like one AnthropicProvider),
    billed one after another through one cache."""

    def __init__(self) -> None:
        self.written = WrittenPrefixes()
        self.cache = AnthropicCache(lambda _model: TERMS)
        self.sent: list[dict[str, Any]] = []
        self.bills: list[Bill] = []

    def send(
        self, messages: list[Message], anchor: int | None, newest: bool = True, span_end: int | None = None
    ) -> Bill:
        options = RequestOptions(cache_anchor=anchor, cache_newest=newest, cache_span_end=span_end)
        return self.send_request(Request(FRAME.system, tuple(messages), FRAME.tools, options=options))

    def send_request(self, request: Request, at: float | None = None) -> Bill:
        """`request` on the wire and billed at `at` (seconds; by default 10 s after the last)."""
        at = 10.0 * (len(self.sent) + 1) if at is None else at
        wire = to_wire(request, MODEL, caching=True, written=self.written, at=at)
        self.sent.append(wire)
        bill = self.cache.bill(anthropic_request(wire, count, at))
        self.bills.append(bill)
        return bill

    def unchanged(self, n: int) -> int:
        """Tokens of request n's longest prefix that request n-1 sent too: what it could read back."""
        before, now = prefix_ids(self.sent[n - 1]), prefix_ids(self.sent[n])
        same = 0
        while same < min(len(before), len(now)) and before[same] == now[same]:
            same += 1
        return sum(u.tokens for u in anthropic_request(self.sent[n], count, 0).units[:same])


def test_each_request_of_a_file_survey_reads_back_all_the_last_one_kept(tmp_path: Path) -> None:
    """Each turn reads a 4,400-character file; once past the line, L1 stubs older results turn
    by turn. Every request reads back the whole prefix it shares with the one before."""
    engine, _, _ = make_engine(tmp_path)
    session = Session()
    history = [user("read the modules one by one")]
    clears = 0
    for i in range(24):
        history += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(4_400, f"m{i}"))
        prepared = engine.prepare(history, FRAME)
        clears += sum(1 for e in prepared.events if getattr(e, "layer", "") == "clear")
        history = list(prepared.messages)
        session.send(history, engine.cache_options(history).cache_anchor)
    assert clears >= 3
    short = [n for n in range(1, len(session.sent)) if session.bills[n].read < session.unchanged(n)]
    assert short == []  # before: every request after a clear read the frame back, nothing more
    written = sum(b.write for b in session.bills)
    assert written < 1.6 * sum(count(filler(4_400, "m")) for _ in range(24))  # each file written once


def test_a_file_the_next_clear_stubs_is_sent_uncached_not_written(tmp_path: Path) -> None:
    """The same survey, the engine's `cache_newest` on the wire: once each read is stubbed by the
    next clear, the newest result is not written (1.25x) for a read that never comes, but sent
    uncached (1x). Every request still reads back all it shares with the one before but that
    result, and the session costs less. Before: every newest message was written."""
    engine, _, _ = make_engine(tmp_path)
    priced, always = Session(), Session()
    history = [user("read the modules one by one")]
    unwritten: list[int] = []  # the index of each newest message left unwritten
    checked = 0
    for i in range(24):
        history += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(4_400, f"m{i}"))
        history = list(engine.prepare(history, FRAME).messages)
        if unwritten and unwritten[-1] == len(history) - 3:  # the request after one left unwritten
            assert is_stub(history[unwritten[-1]].tool_results[0])  # the clear took it, as expected
            checked += 1
        options = engine.cache_options(history)
        anchor = options.cache_anchor
        if not options.cache_newest:
            unwritten.append(len(history) - 1)
        priced.send(history, anchor, options.cache_newest)
        always.send(history, anchor)
    assert len(unwritten) >= 3 and checked >= 2
    cost = [sum(b.token_equivalents for b in s.bills) for s in (priced, always)]
    writes = [sum(b.write for b in s.bills) for s in (priced, always)]
    assert cost[0] < cost[1]
    assert writes[1] - writes[0] >= 0.9 * len(unwritten) * count(filler(4_400, "m"))  # each file not written


def test_a_bridge_reaches_the_last_write_when_the_anchor_moves_past_the_look_back() -> None:
    """A clear stubs the oldest result and the next one whole lies more than 20 blocks on (a run of
    small results between): the request keeps a breakpoint on the last message the earlier request
    marked, and reads everything up to the change."""
    big = filler(4_000, "big")
    history = [user("go: " + filler(2_000)), *tool_round("read_file", {"path": "a.py"}, big)]
    for i in range(15):  # small results (no clear touches them): 2 blocks a round
        history += tool_round("bash", {"command": f"echo {i}"}, "ok")
    history += tool_round("read_file", {"path": "b.py"}, big)
    session = Session()
    first = session.send(history, 1)  # the engine's anchor: the call before a.py's result
    assert first.read == 0
    # The next clear stubs a.py's result; b.py's is now the first a clear changes: the anchor
    # moves to the call before it, 32 blocks on.
    stub = ToolResult(history[2].tool_results[0].tool_use_id, "[cleared: read_file a.py]")
    cleared = [*history[:2], history[2].replace([stub]), *history[3:], user("and now?")]
    second = session.send(cleared, len(cleared) - 3)
    units = anthropic_request(session.sent[-1], count, 0).units
    marks = [i for i, u in enumerate(units) if u.breakpoint]
    # The system prompt (after the one tool), the bridge (the call before a.py's result: what the
    # first request marked), the new anchor 32 blocks on, and the newest block.
    assert marks == [1, 3, 35, 37] and len(marks) == MAX_MARKS
    assert marks[2] - marks[1] > LOOKBACK  # out of the new anchor's look-back
    assert second.read == session.unchanged(1)  # before: only the system and tools (the frame)
    assert second.read > count(FRAME.system) + 100


def test_without_a_record_of_writes_three_marks_and_the_last_tool() -> None:
    history = [user("go"), *tool_round("read_file", {"path": "a.py"}, "text")]
    request = Request(FRAME.system, tuple(history), FRAME.tools, options=RequestOptions(cache_anchor=1))
    wire = to_wire(request, MODEL, caching=True)
    assert "cache_control" in wire["system"][-1] and "cache_control" in wire["tools"][-1]
    assert ["cache_control" in b for m in wire["messages"] for b in m["content"]] == [False, True, True]


def test_a_prefix_past_its_five_minutes_is_no_bridge() -> None:
    history = [user("go: " + filler(2_000)), *tool_round("read_file", {"path": "a.py"}, filler(4_000))]
    for i in range(15):
        history += tool_round("bash", {"command": f"echo {i}"}, "ok")
    history += tool_round("read_file", {"path": "b.py"}, filler(4_000))
    stub = ToolResult(history[2].tool_results[0].tool_use_id, "[cleared: read_file a.py]")
    cleared = (*history[:2], history[2].replace([stub]), *history[3:], user("and now?"))

    def marks(at: float) -> list[int]:
        written = WrittenPrefixes()
        first = Request(FRAME.system, tuple(history), FRAME.tools, options=RequestOptions(cache_anchor=1))
        to_wire(first, MODEL, caching=True, written=written, at=0.0)
        options = RequestOptions(cache_anchor=len(cleared) - 3)
        wire = to_wire(Request(FRAME.system, cleared, FRAME.tools, options=options), MODEL, caching=True,
                       written=written, at=at)  # fmt: skip
        return [i for i, u in enumerate(anthropic_request(wire, count, 0).units) if u.breakpoint]

    assert marks(60.0) == [1, 3, 35, 37]  # the bridge to the first request's anchor
    assert marks(400.0) == [0, 1, 35, 37]  # gone after 5 idle minutes: the last tool's mark instead


def test_the_summary_request_reads_its_span_back_from_the_mark_every_request_kept_alive(
    tmp_path: Path,
) -> None:
    """A conversation without tools, a prompt every three minutes, until L2 summarizes. The span ends
    some ten messages before the newest; the entry written when its last message was newest is
    fifteen minutes old: gone after five unread. Each request marks where the next span will end
    (`RequestOptions.cache_span_end`), reads it and so keeps it alive: the summary request reads
    its span back and writes only its last messages and the instruction. Before, it read the system
    prompt and tools and wrote the whole span again."""
    now = [0.0]
    engine, _, summarizer = make_engine(tmp_path, clock=lambda: now[0])
    session = Session()
    history: list[Message] = []
    summary: Bill | None = None
    for n in range(80):
        now[0] = 180.0 * n
        history.append(user(f"question {n}: " + filler(800, f"q{n}")))
        asked = len(summarizer.requests)
        history = list(engine.prepare(history, FRAME).messages)
        if len(summarizer.requests) > asked:
            span = summarizer.requests[-1]
            summary = session.send_request(span, at=now[0] + 1)
            break
        options = engine.cache_options(history)
        request = Request(FRAME.system, tuple(history), FRAME.tools, options=options)
        session.send_request(request, at=now[0] + 1)
        history.append(Message.assistant(f"answer {n}: " + filler(800, f"a{n}")))
    assert summary is not None
    span_tokens = sum(u.tokens for u in anthropic_request(session.sent[-1], count, 0).units)
    assert summary.read >= 0.7 * span_tokens  # before: the frame only
    assert summary.write <= 0.3 * span_tokens


def test_the_span_end_is_marked_only_before_the_last_other_mark() -> None:
    """A request pays writes up to its last breakpoint: a span-end mark past the others would write
    what the engine chose to send uncached (a newest result the next clear stubs)."""
    history = [user("go")]
    for n in range(4):
        history += tool_round("read_file", {"path": f"m{n}.py"}, filler(400, f"m{n}"))

    def marked(span_end: int, newest: bool) -> list[bool]:
        options = RequestOptions(cache_anchor=4, cache_newest=newest, cache_span_end=span_end)
        request = Request(FRAME.system, tuple(history), FRAME.tools, options=options)
        wire = to_wire(request, MODEL, caching=True)
        return ["cache_control" in b for m in wire["messages"] for b in m["content"]]

    # (one block a message: go, call 0, result 0, ..., call 3, result 3; the anchor is result 1)
    assert marked(2, newest=True) == [False, False, True, False, True, False, False, False, True]
    assert marked(6, newest=False) == [False, False, False, False, True, False, False, False, False]
    assert marked(2, newest=False) == [False, False, True, False, True, False, False, False, False]


def test_a_mark_below_the_read_that_was_never_written_is_not_recorded_as_written() -> None:
    """The span's end falls behind the newest message before any request wrote it (the count moved
    it back, or it ends a turn no request ended): the request reads up to the last request's newest
    block, so its mark there is neither written nor refreshed (each breakpoint past the read writes;
    one at or before it refreshes only an entry that is alive). The record of writes must not count
    it: a later request would take it for a bridge to an entry that does not exist, where an older
    one that does exist would have been read."""
    history = [user("go: " + filler(2_000))]
    for n in range(3):
        history += tool_round("read_file", {"path": f"m{n}.py"}, filler(800, f"m{n}"))
    session = Session()
    session.send(history, None)  # writes its newest block (and the frame)
    history += tool_round("read_file", {"path": "m3.py"}, filler(800, "m3"))
    at = 20.0
    session.send(history, None, span_end=3)  # the second call: marked now, never before
    wire = session.sent[-1]
    units = anthropic_request(wire, count, at).units
    marks = [i for i, u in enumerate(units) if u.breakpoint]
    billed = billing_prefix_ids(anthropic_request(wire, count, at))
    ours = prefix_ids(wire)
    alive = session.cache.alive_at(at)
    assert len(marks) == 4  # the frame, the span's end, the newest, the last tool
    # Every marked prefix the record says is written is one the cache holds, and the other way round.
    assert [session.written.alive(ours[i], at) for i in marks] == [alive(billed[i]) for i in marks]


def test_after_a_pause_past_five_minutes_the_request_reads_back_up_to_the_one_hour_checkpoint() -> None:
    """The engine names a checkpoint (`RequestOptions.cache_checkpoint`) where it is the newest
    message: its request writes it at 1 hour (and the frame: no 1-hour mark may follow a 5-minute
    one), each later request marks it again. Fifteen minutes later every 5-minute entry is gone;
    the request reads the frame and the messages up to the checkpoint back and writes the rest.
    Before, it wrote everything again."""
    session = Session()
    history = [user("go: " + filler(2_000)), *tool_round("read_file", {"path": "a.py"}, filler(4_000))]
    checkpoint = len(history) - 1

    def send(at: float) -> Bill:
        options = RequestOptions(cache_anchor=checkpoint, cache_checkpoint=checkpoint)
        request = Request(FRAME.system, tuple(history), FRAME.tools, options=options)
        return session.send_request(request, at=at)

    send(10.0)
    ttls = [u.breakpoint for u in anthropic_request(session.sent[-1], count, 0).units if u.breakpoint]
    assert ttls[0] == "1h" and ttls[-1] == "1h"  # the frame and the checkpoint, the newest here
    history += tool_round("read_file", {"path": "b.py"}, filler(4_000, "b"))
    send(20.0)
    units = anthropic_request(session.sent[-1], count, 0).units
    assert [u.breakpoint for u in units if u.breakpoint][-1] == "5m"  # the newest: after the checkpoint
    upto = sum(u.tokens for u in units if u.section != "messages")
    upto += sum(u.tokens for u in units if u.section == "messages" and u.message <= checkpoint)
    history.append(user("and now?"))
    cold = send(20.0 + 900)
    assert cold.read >= upto  # before: 0, everything written again
    assert session.written.alive(prefix_ids(session.sent[0])[-1], 20.0 + 900 + 1_000)  # (1 hour)
    # The fake server takes these requests, and refuses a 1-hour mark after a 5-minute one, as the API.
    assert all(_problem(wire) is None for wire in session.sent)
    swapped = json.loads(json.dumps(session.sent[-1]))
    swapped["system"][-1]["cache_control"] = {"type": "ephemeral"}
    assert "1h" in (_problem(swapped) or "")


def test_a_prefix_already_written_keeps_its_five_minutes_when_marked_for_an_hour() -> None:
    """An entry read back keeps the TTL it was written with: the record of what was written says
    so, and a 1-hour mark on it is no bridge after 5 idle minutes."""
    written = WrittenPrefixes()
    written.use(["a"], 0.0)
    written.use(["a", "b"], 60.0, hour=["a", "b"])
    assert not written.alive("a", 400.0) and written.alive("b", 400.0) and not written.alive("b", 3_700.0)

"""A digest standing in for a record still being made (context/engine_state.py `StandIn`, the engine's
`digest_stands_in`): no turn waits for a summary.

Through the real `ContextEngine` over a conversation that only grows, with no prepare line (so
every record is made at the trigger), a deterministic summarizer, and a `submit` that holds each
call until the test says it has ended. The reference is the engine's own `LayerRunner` making the
summary at the trigger, blocking, for the same span.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from test_context_fakes import (
    FRAME,
    FakeSummarizer,
    assistant,
    filler,
    make_engine,
    sent,
    tail_start,
    unnamed,
    user,
)

from agent_cli.context.cut import CondensePlan, engine_prefix
from agent_cli.context.engine import ContextEngine, Frame
from agent_cli.context.engine_state import StandIn
from agent_cli.context.layers import LayerRunner
from agent_cli.context.protocol import Prepared
from agent_cli.context.summary_request import SummaryFailed, SummaryReply
from agent_cli.core.events import CompactEvent, WarningEvent
from agent_cli.core.messages import Message
from agent_cli.core.requests import Request, ToolSpec

WINDOW = 80_000


class Held:
    """A `submit` whose calls run only when `finish()` says so: until then nobody has the reply."""

    def __init__(self) -> None:
        self.pending: list[tuple[Callable[[], SummaryReply], Future[SummaryReply]]] = []

    def __call__(self, call: Callable[[], SummaryReply]) -> Future[SummaryReply]:
        future: Future[SummaryReply] = Future()
        self.pending.append((call, future))
        return future

    def finish(self) -> None:
        for call, future in self.pending:
            if future.cancelled():
                continue
            try:
                future.set_result(call())
            except SummaryFailed as exc:
                future.set_exception(exc)
        self.pending = []


def _record(request: Request) -> str:
    text = "".join(block.text for m in request.messages for block in m.content if hasattr(block, "text"))
    return f"## Work state\nDone: {len(request.messages)} messages, {len(text)} characters."


def _engine(tmp_path: Path, summarizer: FakeSummarizer, held: Held) -> ContextEngine:
    engine, _, _ = make_engine(
        tmp_path, summarizer, submit=held, window=WINDOW, prepare_ratio=0.9, digest_stands_in=True
    )
    return engine


def _step(history: list[Message], n: int) -> list[Message]:
    return [
        *history,
        user(f"step {n}\n" + filler(1_200, f"u{n}")),
        assistant(f"done {n}\n" + filler(800, f"a{n}")),
    ]


def _to_trigger(engine: ContextEngine) -> tuple[list[Message], list[Message], list[CompactEvent]]:
    """Talk until L2 acts: (the history it was given, what it made, its events)."""
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    for n in range(200):
        history = _step(history, n)
        prepared = engine.prepare(history, FRAME)
        events = [e for e in prepared.events if isinstance(e, CompactEvent) and e.layer == "summarize"]
        if events:
            return history, prepared.messages, events
        history = prepared.messages
    raise AssertionError("no compaction")


def test_at_the_trigger_a_digest_stands_in_at_once_and_the_call_goes_on(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    before, after, events = _to_trigger(engine)
    assert [(e.stand_in, e.degraded, e.ahead) for e in events] == [(True, True, False)]
    assert "mechanical digest" in after[0].text and len(after) < len(before)
    assert engine.tokens(after, FRAME) < engine.thresholds.trigger_at
    assert len(summarizer.requests) == 0 and len(held.pending) == 1  # sent, and nobody waits for it


def test_the_record_takes_the_digests_place_as_a_blocking_summary_would_have_made_it(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    before, after, _ = _to_trigger(engine)
    again = engine.prepare(after, FRAME)
    assert again.messages == after and not again.events  # not ready: the digest stays
    held.finish()
    later = [*after, user("and now the cache")]
    swapped = engine.prepare(later, FRAME)
    (event,) = [e for e in swapped.events if isinstance(e, CompactEvent)]
    assert (event.stand_in, event.ahead, event.degraded) == (True, True, False)
    # The reference: the same span summarized at the trigger, the turn waiting for it.
    reference = FakeSummarizer([_record])
    runner = LayerRunner(engine.counter, engine.archive, reference, lambda: 0.0)
    cut = tail_start(before, after)
    blocking = runner.condense(
        before, CondensePlan(engine_prefix(before), cut), FRAME, engine.tokens(before, FRAME),
        thresholds=engine.thresholds, layer="summarize", trigger="auto", focus=None,
    )  # fmt: skip
    assert sent(reference.requests) == sent(summarizer.requests)  # the same call
    assert unnamed(swapped.messages) == unnamed([*blocking.messages, later[-1]])
    assert "mechanical digest" not in swapped.messages[0].text


def test_a_record_not_ready_at_the_next_trigger_is_dropped_and_the_digest_folded_in(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    first = held.pending[0][1]
    history = after
    for n in range(200, 400):
        history = _step(history, n)
        prepared = engine.prepare(history, FRAME)
        history = prepared.messages
        if any(isinstance(e, CompactEvent) and e.layer == "summarize" for e in prepared.events):
            break
    assert first.cancelled() and len(held.pending) == 2
    assert "mechanical digest" in history[0].text
    # The new call's span starts with the digest that stood in: nothing it held is lost.
    call, _ = held.pending[1]
    call()
    assert "mechanical digest" in summarizer.requests[-1].messages[0].text


def test_a_record_that_fails_leaves_the_digest_and_says_so(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([SummaryFailed("the model returned nothing")]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    held.finish()
    later = [*after, user("go on")]
    prepared = engine.prepare(later, FRAME)
    assert prepared.messages == later  # the digest stays where it was
    assert not [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert [e for e in prepared.events if isinstance(e, WarningEvent)]


def test_with_stand_ins_off_the_turn_waits_for_the_record(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine, _, _ = make_engine(tmp_path, summarizer, submit=held, window=WINDOW, prepare_ratio=0.9)
    _, after, events = _to_trigger(engine)
    assert [(e.stand_in, e.degraded) for e in events] == [(False, False)]
    assert len(summarizer.requests) == 1 and not held.pending
    assert "mechanical digest" not in after[0].text


def _at_once(call: Callable[[], SummaryReply]) -> Future[SummaryReply]:
    """A `submit` whose call has ended when it hands the future back."""
    future: Future[SummaryReply] = Future()
    future.set_result(call())
    return future


def test_a_digest_that_cannot_shrink_the_request_waits_for_the_record_already_asked_for(
    tmp_path: Path,
) -> None:
    # A frame that takes most of the window and a short span, mostly the assistant's last words: the
    # digest (which keeps those words and the user's) is no smaller than the span, the model's record
    # is. Before the fix the call was made, its reply thrown away, and L4 dropped the span instead.
    summarizer = FakeSummarizer(["## Work state\nDone: the first step."])
    engine, _, _ = make_engine(tmp_path, summarizer, submit=_at_once, digest_stands_in=True)
    history = [
        user("step one\n" + filler(1_600, "u1")),
        assistant("done one\n" + filler(1_400, "a1")),
        user("step two\n" + filler(400, "u2")),
        assistant("done two\n" + filler(6_400, "a2")),
    ]
    need = engine.thresholds.trigger_at - engine.tokens(history, Frame("You are a coding agent.", ())) + 50
    frame = Frame("You are a coding agent.", (ToolSpec("read_file", "x" * (need * 4), {"type": "object"}),))
    total = engine.tokens(history, frame)
    assert engine.thresholds.trigger_at <= total < engine.thresholds.emergency_at
    prepared = engine.prepare(history, frame)
    compactions = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert [(e.layer, e.stand_in, e.degraded) for e in compactions] == [("summarize", False, False)]
    assert len(summarizer.requests) == 1  # the one call made, and its record used
    assert "Done: the first step." in prepared.messages[0].text
    assert "mechanical digest" not in prepared.messages[0].text
    assert prepared.messages[-2:] == history[-2:]  # the tail kept verbatim; nothing dropped
    assert engine.tokens(prepared.messages, frame) < engine.thresholds.trigger_at


# -- the run ends while a digest stands in (issue 37, item 5) --------------------------------------


def test_a_run_that_ends_with_the_record_ready_swaps_it_in_without_a_call(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    held.finish()
    finished = engine.finish(after, FRAME)
    assert isinstance(finished, Prepared), finished
    (event,) = [e for e in finished.events if isinstance(e, CompactEvent)]
    assert (event.stand_in, event.degraded) == (True, False)
    record = finished.messages[0].text
    assert "mechanical digest" not in record and "## Work state" in record
    assert len(summarizer.requests) == 1  # the background call's, nothing more
    assert engine.finish(finished.messages, FRAME) is None  # nothing is due any more


def test_a_run_that_ends_before_the_record_came_owes_it_and_the_next_run_makes_it_first(
    tmp_path: Path,
) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    before, after, _ = _to_trigger(engine)
    owed = engine.finish(after, FRAME)
    assert isinstance(owed, StandIn) and owed.head == tuple(after[: len(owed.head)])
    assert held.pending[0][1].cancelled()  # exit does not wait for the call
    # The next run: another engine (the session opened again), told what its log owes.
    fresh = FakeSummarizer([_record])
    again, _, _ = make_engine(
        tmp_path, fresh, submit=Held(), window=WINDOW, prepare_ratio=0.9, digest_stands_in=True
    )
    again.owe(owed)
    later = [*after, user("and now the cache")]
    prepared = again.prepare(later, FRAME)
    (event,) = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert (event.layer, event.stand_in, event.degraded) == ("summarize", True, False)
    assert len(fresh.requests) == 1  # made before the request went, the turn waiting for it
    # What a blocking summary of the same span would have made.
    reference = FakeSummarizer([_record])
    runner = LayerRunner(again.counter, again.archive, reference, lambda: 0.0)
    cut = tail_start(before, after)
    blocking = runner.condense(
        before, CondensePlan(engine_prefix(before), cut), FRAME, again.tokens(before, FRAME),
        thresholds=again.thresholds, layer="summarize", trigger="auto", focus=None,
    )  # fmt: skip
    assert sent(reference.requests) == sent(fresh.requests)
    assert unnamed(prepared.messages) == unnamed([*blocking.messages, later[-1]])
    assert again.finish(prepared.messages, FRAME) is None  # nothing owed any more


def test_a_record_owed_whose_digest_is_gone_is_not_made(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    owed = engine.finish(after, FRAME)
    assert isinstance(owed, StandIn)
    fresh = FakeSummarizer([_record])
    again, _, _ = make_engine(tmp_path, fresh, window=WINDOW, prepare_ratio=0.9, digest_stands_in=True)
    again.owe(owed)
    edited = [user("something else entirely"), *after[len(owed.head) :]]
    prepared = again.prepare(edited, FRAME)
    assert prepared.messages == edited and not fresh.requests


def _switched(engine: ContextEngine, writer: FakeSummarizer, *, max_output: int = 2_000) -> None:
    """/model to another model (as AgentSession.switch_model does it): its window, output limit and
    summary call; `make_engine`'s limits unless `max_output` says otherwise."""
    engine.reset(window=WINDOW, max_output=max_output, counter=engine.counter, summarize=writer)


def test_a_record_on_its_way_carries_across_a_model_switch(tmp_path: Path) -> None:
    # Before the fix the switch dropped the record (the call was cancelled) and the digest stayed
    # where the model's record was due, for good.
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    other = FakeSummarizer(["## Work state\nfrom the other model"])
    _switched(engine, other)
    held.finish()  # the record the first model was writing comes after the switch
    swapped = engine.prepare([*after, user("and now the cache")], FRAME)
    (event,) = [e for e in swapped.events if isinstance(e, CompactEvent)]
    assert (event.stand_in, event.ahead, event.degraded) == (True, True, False)
    assert "mechanical digest" not in swapped.messages[0].text
    assert "Done: " in swapped.messages[0].text and not other.requests  # its record, no new call


def test_a_record_ready_before_a_model_switch_is_swapped_in_after_it(tmp_path: Path) -> None:
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    held.finish()  # ready, not yet swapped in
    other = FakeSummarizer(["## Work state\nfrom the other model"])
    _switched(engine, other)
    swapped = engine.prepare([*after, user("go on")], FRAME)
    assert [e.stand_in for e in swapped.events if isinstance(e, CompactEvent)] == [True]
    assert "Done: " in swapped.messages[0].text and "mechanical digest" not in swapped.messages[0].text
    assert not other.requests


def test_a_model_whose_record_room_is_smaller_makes_the_record_again_before_its_first_request(
    tmp_path: Path,
) -> None:
    # A smaller reply limit gives the record less room than it was asked for: the record on its way
    # would be cut to fit. It is owed instead: the new model writes it for its own lines before the
    # next request (decide's Reset row), and the old call is dropped.
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    _, after, _ = _to_trigger(engine)
    cap = engine.thresholds.summary_cap
    other = FakeSummarizer(["## Work state\nfrom the other model"])
    _switched(engine, other, max_output=400)
    assert engine.thresholds.summary_cap < cap
    first = held.pending[0][1]
    swapped = engine.prepare([*after, user("go on")], FRAME)
    assert first.cancelled() and len(other.requests) == 1  # written now, by the model read next
    assert "from the other model" in swapped.messages[0].text
    assert "mechanical digest" not in swapped.messages[0].text


def test_a_turn_ending_near_the_trigger_starts_the_record_and_no_digest_stands_in(tmp_path: Path) -> None:
    """With no room for a prepare line, a turn that ends within half the verbatim tail below the
    trigger starts the record while the user reads and types (`ContextEngine.turn_ended`); by the
    trigger it is ready and goes in at once: one compaction, the model's record, no digest standing in
    for it and no second rewrite of the cached conversation."""
    summarizer, held = FakeSummarizer([_record]), Held()
    engine = _engine(tmp_path, summarizer, held)
    history: list[Message] = [user("Refactor the parser, then the cache.")]
    started = None
    for n in range(200):
        history = _step(history, n)
        prepared = engine.prepare(history, FRAME)
        events = [e for e in prepared.events if isinstance(e, CompactEvent)]
        if events:
            break
        history = prepared.messages
        engine.turn_ended(history, FRAME)
        if held.pending and started is None:
            started = engine.tokens(history, FRAME)
        held.finish()  # (the call ends while the user types)
    else:
        raise AssertionError("no compaction")
    th = engine.thresholds
    assert started is not None and th.trigger_at - th.keep_tail // 2 <= started < th.trigger_at
    assert [(e.layer, e.stand_in, e.ahead, e.degraded) for e in events] == [("summarize", False, True, False)]
    assert "mechanical digest" not in prepared.messages[0].text and len(summarizer.requests) == 1

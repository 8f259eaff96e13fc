"""The engine across many turns: the summarizer latch, the loop guard and hysteresis over sequences.

One engine, a history that grows turn by turn as a session's does (the loop
appends, the engine prepares), and a summarizer that behaves well or badly.
Table tests for the latch's state machine; property tests (hypothesis) over
random sequences of turns.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.context.cut import find_safe_cut
from agent_cli.context.engine import ContextEngine
from agent_cli.context.engine_state import CompactionState, Limits
from agent_cli.core.errors import TransientError
from agent_cli.core.events import CompactEvent, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.core.requests import Request
from tests.test_context_fakes import FRAME, FakeSummarizer, filler, make_engine, tool_round, user

# -- the latch on its own --------------------------------------------------------------------


def test_latch_holds_after_two_failures_and_retries_after_five_compactions() -> None:
    limits = Limits(2, 5)
    state = CompactionState()
    assert state.may_call(limits)
    state, notice = state.summary("failed", limits)
    assert notice is None and state.may_call(limits)
    state, notice = state.summary("failed", limits)
    assert notice is not None and "2 summaries in a row did not hold" in notice and not state.may_call(limits)
    for _ in range(4):
        state, notice = state.summary("skipped", limits)
        assert notice is None and not state.may_call(limits)
    state, _ = state.summary("skipped", limits)
    assert state.may_call(limits)  # the fifth compaction by code: the model is asked again
    state, notice = state.summary("failed", limits)
    assert notice is None and not state.may_call(limits)  # failed again: holds at once, said once
    state, _ = state.summary("ok", limits)
    assert state.may_call(limits) and state.summary_failures == 0


@pytest.mark.parametrize(
    ("trigger", "said"),
    [
        ("auto", "an automatic compaction"),
        ("manual", "a /compact"),
        ("tool", "a compaction the model asked for"),
    ],
)
def test_the_latch_says_who_asked_for_the_compaction_that_failed(trigger: str, said: str) -> None:
    """L3 is "manual" in events whoever asked; the notice names who did (the model's compact call
    is no /compact)."""
    limits = Limits(2, 5)
    state, _ = CompactionState().summary("failed", limits, trigger=trigger)  # type: ignore[arg-type]
    _, notice = state.summary("failed", limits, trigger=trigger)  # type: ignore[arg-type]
    assert notice is not None and f"(the last in {said})" in notice


def test_a_success_between_failures_keeps_the_latch_from_holding() -> None:
    limits = Limits(2, 5)
    state = CompactionState()
    for outcome in ("failed", "ok", "failed", "ok", "failed"):
        state, notice = state.summary(outcome, limits)  # type: ignore[arg-type]
        assert notice is None
    assert state.may_call(limits)


def test_the_loop_guard_stops_after_two_failed_compactions_and_a_manual_one_restarts_it() -> None:
    limits = Limits(max_failures=2)
    state, stopped = CompactionState().compaction(True, limits)
    assert not stopped and state.automatic
    state, stopped = state.compaction(True, limits)
    assert stopped and not state.automatic and state.compaction_failures == 2
    assert state.requested().automatic and state.requested().compaction_failures == 0
    assert CompactionState.fresh() == CompactionState()
    state, stopped = CompactionState().compaction(True, limits)
    state, stopped = state.compaction(False, limits)
    assert not stopped and state.compaction_failures == 0  # a success in between starts the count over


# -- a session's worth of turns ------------------------------------------------------------------


def run_turns(engine: ContextEngine, turns: int, *, read: int = 200, answer: int = 1_500) -> list[object]:
    """`turns` turns of "read a file, answer about it", each prepared as the loop would."""
    history: list[Message] = [user("survey the modules")]
    events: list[object] = []
    for t in range(turns):
        history += tool_round("read_file", {"path": f"src/m{t}.py"}, filler(read * 4, f"m{t}"))
        prepared = engine.prepare(history, FRAME)
        events += prepared.events
        history = [*prepared.messages, Message.assistant(f"m{t} does this: " + filler(answer * 4, "a"))]
        history.append(user(f"next {t}"))
    return events


def distinct(requests: list[Request]) -> int:
    return len({tuple((m.id, m.text) for m in r.messages) for r in requests})


@pytest.mark.parametrize("behaviour", ["error", "huge"])
def test_a_failing_summarizer_is_asked_twice_then_rarely(tmp_path: Path, behaviour: str) -> None:
    reply: object = TransientError("down") if behaviour == "error" else "## Work state\n" + "x " * 40_000
    summarizer = FakeSummarizer([reply])  # type: ignore[list-item]
    engine, _, _ = make_engine(tmp_path, summarizer)
    events = run_turns(engine, 90)
    compactions = [e for e in events if isinstance(e, CompactEvent) and e.layer == "summarize"]
    assert len(compactions) >= 10
    # Two failures latch it; every fifth compaction by code it is asked once more, and fails again.
    assert len(summarizer.requests) <= 2 + len(compactions) // 5 + 1
    assert distinct(summarizer.requests) == len(summarizer.requests)
    notices = [e for e in events if isinstance(e, WarningEvent) and "built by code" in e.message]
    assert len(notices) == 1
    assert all(e.degraded for e in compactions)  # the digest stood in every time
    assert not [e for e in events if isinstance(e, ErrorEvent)]  # the digest shrinks: no loop guard


def test_manual_compact_asks_the_model_while_latched(tmp_path: Path) -> None:
    summarizer = FakeSummarizer([TransientError("down"), TransientError("down"), "## Work state\nfine"])
    engine, _, _ = make_engine(tmp_path, summarizer)
    run_turns(engine, 30)
    assert not engine.state.may_call(engine.limits)
    asked = len(summarizer.requests)
    history = [user("a"), Message.assistant(filler(8_000, "b")), user("c"), Message.assistant("d"), user("e")]
    prepared = engine.compact(history, FRAME, "keep it", "manual")
    assert len(summarizer.requests) == asked + 1
    (event,) = [e for e in prepared.events if isinstance(e, CompactEvent)]
    assert not event.degraded and engine.state.may_call(engine.limits)


def test_the_loop_guard_counts_a_request_that_cannot_be_shrunk(tmp_path: Path) -> None:
    # The round the model has not seen yet stays verbatim; here it alone is above the trigger.
    engine, _, summarizer = make_engine(tmp_path, tool_result_max_tokens=50_000)
    history: list[Message] = [user("go"), Message.assistant(filler(8_000, "early"))]
    guard: list[ErrorEvent] = []
    for t in range(4):
        use = ToolUse(f"t{t}", "bash", {"command": "make"})
        history += [
            user(f"turn {t}"),
            Message("assistant", (use,)),
            Message("user", (ToolResult(use.id, filler(70_000, "o")),)),
        ]
        prepared = engine.prepare(history, FRAME)
        guard += [e for e in prepared.events if isinstance(e, ErrorEvent)]
        history = [*prepared.messages, Message.assistant("noted")]
    assert guard and "stopped after 2 attempts" in guard[0].message
    assert not engine.auto_compact
    assert len(summarizer.requests) <= 2


def test_the_loop_guard_does_not_count_a_round_the_model_has_not_seen_yet(tmp_path: Path) -> None:
    # Each turn's newest round is under the trigger alone but, beside the record (the user's words
    # verbatim), keeps the request above it. It stays verbatim only until the model has seen it, and
    # the next compaction condenses it with the answer: no loop, automatic compaction stays on
    # (before: stopped at the second record).
    engine, _, summarizer = make_engine(tmp_path, tool_result_max_tokens=50_000)
    history: list[Message] = [user("go"), Message.assistant(filler(8_000, "early"))]
    above = 0
    for t in range(4):
        use = ToolUse(f"t{t}", "bash", {"command": f"make part{t}"})
        history += [
            user(f"turn {t}\n" + filler(3_000, f"ask{t}")),
            Message("assistant", (use,)),
            Message("user", (ToolResult(use.id, filler(54_000, f"o{t}")),)),
        ]
        prepared = engine.prepare(history, FRAME)
        assert not [e for e in prepared.events if isinstance(e, ErrorEvent)]
        assert any(isinstance(e, CompactEvent) and e.layer == "summarize" for e in prepared.events)
        above += engine.tokens(prepared.messages, FRAME) >= engine.thresholds.trigger_at
        history = [*prepared.messages, Message.assistant(filler(16_000, f"answer{t}"))]
    assert above >= 2  # the case: still above the trigger after each record
    assert engine.auto_compact and engine.state.compaction_failures == 0
    assert len(summarizer.requests) >= 4  # a record each turn, each of the round seen since


# -- properties over random sequences ----------------------------------------------------------------

turn = st.tuples(st.sampled_from(["read", "chat", "error"]), st.integers(200, 9_000))
behaviours = st.sampled_from(["ok", "fail", "huge", "empty"])


@settings(max_examples=25, deadline=None)
@given(st.lists(turn, min_size=5, max_size=40), behaviours, st.sampled_from([12_000, 20_000, 40_000]))
def test_guard_latch_and_hysteresis_hold_across_a_session(
    turns: list[tuple[str, int]], behaviour: str, window: int
) -> None:
    script: dict[str, object] = {
        "ok": "## Work state\nDone: the earlier turns. Next: go on.",
        "fail": TransientError("down"),
        "huge": "## Work state\n" + "detail " * 30_000,
        "empty": "",
    }
    summarizer = FakeSummarizer([script[behaviour]])  # type: ignore[list-item]
    with tempfile.TemporaryDirectory() as tmp:
        engine, _, _ = make_engine(Path(tmp), summarizer, window=window)
        history: list[Message] = [user("start")]
        compactions = 0
        latched_asks = 0
        for n, (kind, size) in enumerate(turns):
            if kind == "read":
                history += tool_round("read_file", {"path": f"f{n}.py"}, filler(size, f"r{n}"))
            elif kind == "error":
                history += tool_round("bash", {"command": "pytest"}, filler(size, "E") + "\n[exit code 1]")
            else:
                history += [Message.assistant(filler(size, f"a{n}")), user(f"q{n}")]
            before = len(summarizer.requests)
            was_open = engine.state.may_call(engine.limits)
            prepared = engine.prepare(history, FRAME)
            summaries = [e for e in prepared.events if isinstance(e, CompactEvent) and e.layer == "summarize"]
            compactions += len(summaries)
            if not was_open:
                latched_asks += len(summarizer.requests) - before
            assert latched_asks == 0  # while the latch holds, no summary call
            if not engine.auto_compact:
                assert not summaries  # the guard tripped: nothing automatic until /compact
            history = prepared.messages
            if summaries and summaries[-1].tokens_after < engine.thresholds.target:
                # Hysteresis: right after compacting down to the target, a small turn compacts nothing.
                again = engine.prepare([*history, user("ok")], FRAME)
                assert not [e for e in again.events if isinstance(e, CompactEvent) and e.layer == "summarize"]
        failing = behaviour in ("fail", "huge", "empty")
        if failing:
            assert len(summarizer.requests) <= 2 + compactions // 5 + 1


# -- bugs found in review ----------------------------------------------------------------------


def test_l0_counts_text_that_takes_several_tokens_a_character(tmp_path: Path) -> None:
    from agent_cli.config.settings import ContextSettings
    from agent_cli.providers.model_names import tokenizer_for
    from agent_cli.store.archive import Archive
    from agent_cli.tokens.counter import TokenCounter

    # The real counter: emoji are several tokens.
    counter = TokenCounter("claude-sonnet-5-5", tokenizer_for("claude-sonnet-5-5", "anthropic"))
    engine = ContextEngine(
        settings=ContextSettings(tool_result_max_tokens=2_000),
        window=200_000,
        max_output=8_000,
        counter=counter,
        archive=Archive(tmp_path / "s"),
        summarize=FakeSummarizer(),
    )
    limit = engine.thresholds.tool_result_cap
    emoji = "🦩" * (limit // 2)  # half the cap in characters, three tokens each: well over it
    assert len(emoji) * 2 <= limit and counter.count_text(emoji) > limit
    use = ToolUse("t1", "bash", {"command": "cat faces.txt"})
    capped, event = engine.ingest(use, ToolResult("t1", emoji))
    assert event is not None and event.layer == "cap" and counter.count_text(capped.content) <= limit * 1.1


def test_find_safe_cut_never_returns_below_its_floor() -> None:
    messages = [user("a"), Message.assistant("b"), user("c")]
    counts = [10, 10, 10]
    for floor in range(0, 6):
        cut = find_safe_cut(messages, counts, 5, floor=floor)
        assert min(floor, len(messages)) <= cut <= len(messages)


# -- what the user is told about a summary that did not hold (issue "Found from outside", 12) --------


def _compact_twice(tmp_path: Path, summarizer: FakeSummarizer) -> list[list[object]]:
    engine, _, _ = make_engine(tmp_path, summarizer)
    history: list[Message] = [user("fix the parser")]
    said: list[list[object]] = []
    for n in range(2):
        history += tool_round("read_file", {"path": f"src/m{n}.py"}, filler(4_000, f"m{n}"))
        history += [Message.assistant(f"m{n} read"), user(f"and now {n}")]
        prepared = engine.compact(history, FRAME, None, "manual")
        said.append(list(prepared.events))
        history = [*prepared.messages]
    return said


def test_two_records_that_fell_short_are_not_called_failed_calls(tmp_path: Path) -> None:
    # The model answers, but its record names none of the files it replaces: used, repaired by code.
    said = _compact_twice(tmp_path, FakeSummarizer(["## Work state\nDone: the earlier steps."]))
    for events in said:
        (panel,) = [e for e in events if isinstance(e, CompactEvent)]
        assert not panel.degraded  # the model's record is in use
        (warning,) = [e.message for e in events if isinstance(e, WarningEvent)]
        assert "summary is in use, but it left out" in warning
    last = next(e.message for e in said[1] if isinstance(e, WarningEvent))
    assert "2 summaries in a row did not hold" in last  # said once, in the same message
    text = " ".join(str(getattr(e, "message", "")) for events in said for e in events)
    assert "summary call failed" not in text and "request failed" not in text  # was: "failed 2 times"


def test_a_failed_call_says_digest_once_and_the_panel_too(tmp_path: Path) -> None:
    said = _compact_twice(tmp_path, FakeSummarizer([TransientError("down")]))  # type: ignore[list-item]
    for n, events in enumerate(said):
        (panel,) = [e for e in events if isinstance(e, CompactEvent)]
        assert panel.degraded  # the panel says it was a digest
        warnings = [e.message for e in events if isinstance(e, WarningEvent)]
        assert len(warnings) == 1, warnings  # was two on the second: the digest, then the latch
        assert "replaced by a mechanical digest" in warnings[0]
        assert ("2 summaries in a row did not hold" in warnings[0]) == (n == 1)

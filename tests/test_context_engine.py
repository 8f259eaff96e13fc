"""The engine end to end over fakes: each layer, the seeds' cases, and the loop guard.

The window is 20k tokens with 2k of output (B = 17,600; clear at 8,800; trigger at 14,080;
target 7,920; emergency at 16,720), so conversations stay small and the tests fast.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_context_fakes import (
    FRAME,
    FakeSummarizer,
    assistant,
    filler,
    make_engine,
    pairing_errors,
    removed_are_stored,
    tool_round,
    user,
)

from agent_cli.context.clear import is_stub
from agent_cli.context.cut import ACK
from agent_cli.core.errors import ContextOverflowError, TransientError
from agent_cli.core.events import CompactEvent, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse
from agent_cli.core.requests import Request, RequestOptions


def _shown(transcript: str | None) -> str:
    """A saved file as the model is told it: relative to the project (`.transcripts/<session>/...`)."""
    path = Path(transcript or "")
    return path.relative_to(path.parents[2]).as_posix()


def chat(turns: int, size: int = 4_000, start: int = 0) -> list[Message]:
    """Plain turns: a short user request and a long assistant answer (~size/4 tokens)."""
    out: list[Message] = []
    for i in range(start, start + turns):
        out += [user(f"request {i}: explain part {i}"), assistant(f"answer {i}: " + filler(size, f"p{i}"))]
    return out


def compacts(events: list[object]) -> list[CompactEvent]:
    return [e for e in events if isinstance(e, CompactEvent)]


def is_summary_request(request: Request) -> bool:
    """By structure, as the acceptance checks do: the instruction the last text block of a user message,
    with tool calls off or opening with the compaction tag (the main requests' tool_choice kept)."""
    last = request.messages[-1]
    if last.role != "user" or not last.content or not isinstance(last.content[-1], TextBlock):
        return False
    return request.options.tool_choice == "none" or last.content[-1].text.startswith("<compaction-request>")


# -- the fast path -----------------------------------------------------------------


def test_prepare_does_nothing_below_the_lines(tmp_path: Path) -> None:
    engine, counter, summarizer = make_engine(tmp_path)
    history = chat(5)
    engine.tokens(history, FRAME)
    calls = counter.text_calls
    prepared = engine.prepare(history, FRAME)
    assert prepared.messages == history and prepared.events == []
    assert summarizer.requests == [] and counter.text_calls == calls  # no text counted again
    assert not (tmp_path / ".transcripts").exists()


# -- L0 -------------------------------------------------------------------------------


def test_ingest_caps_saves_and_recall_finds_the_cut_part(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    use = ToolUse("toolu_big", "bash", {"command": "make"})
    output = "".join(f"step {i} ok\n" for i in range(3_000)).replace(
        "step 1500 ok", "step 1500 FAILED: disk full"
    )
    capped, event = engine.ingest(use, ToolResult(use.id, output))
    assert event is not None and (event.layer, event.trigger) == ("cap", "ingest")
    assert event.tokens_before > 1_500 >= event.tokens_after
    assert "disk full" not in capped.content and _shown(event.transcript) in capped.content
    found = engine.recall("disk full")
    assert "step 1500 FAILED: disk full" in found and "step 1499 ok" in found
    small, none = engine.ingest(use, ToolResult(use.id, "fine"))
    assert none is None and small.content == "fine"


# -- L1 -------------------------------------------------------------------------------


def test_l1_clears_old_results_in_a_batch_and_recall_brings_them_back(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    history = [user("read the modules")]
    for i in range(9):
        history += tool_round(
            "read_file", {"path": f"src/m{i}.py"}, f"# module {i}\n" + filler(4_400, f"m{i}")
        )
    history.append(assistant("read them"))
    total = engine.tokens(history, FRAME)
    assert engine.thresholds.clear_at <= total < engine.thresholds.trigger_at
    prepared = engine.prepare(history, FRAME)
    (event,) = compacts(prepared.events)
    assert (event.layer, event.trigger) == ("clear", "auto") and event.tokens_after < event.tokens_before
    assert summarizer.requests == []
    assert pairing_errors(prepared.messages) == [] and len(prepared.messages) == len(history)
    stubs = [r.content for m in prepared.messages for r in m.tool_results if r.content.startswith("[cleared")]
    first_id = prepared.messages[2].tool_results[0].tool_use_id
    assert f'recall("{first_id}")' in stubs[0] and "src/m0.py" in stubs[0]
    assert "# module 0" in engine.recall(first_id) and "# module 0" in engine.recall("src/m0.py")
    assert removed_are_stored(history, prepared.messages, engine.archive) == []
    # The next turn adds a little: no new batch, so the history (and the provider's cache) stays as is.
    more = [*prepared.messages, user("and now?"), assistant("nothing new")]
    assert engine.prepare(more, FRAME).messages == more


def test_the_cache_anchor_is_the_last_message_the_next_clear_keeps(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    history = [user("read the modules")]
    for i in range(9):
        history += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(4_400, f"m{i}"))
    history.append(assistant("read them"))
    # the first call: its result is the first a clear changes
    assert engine.cache_options(history).cache_anchor == 1
    prepared = engine.prepare(history, FRAME)
    assert compacts(prepared.events)[0].layer == "clear"
    # Work goes on: the next clear would start at the oldest result still whole.
    grown = list(prepared.messages)
    for i in range(9, 12):
        grown += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(4_400, f"m{i}"))
    anchor = engine.cache_options(grown).cache_anchor
    assert anchor is not None and anchor > 1
    whole = [i for i, m in enumerate(grown) if m.tool_results and not is_stub(m.tool_results[0])]
    assert anchor == whole[0] - 1 and grown[: anchor + 1] == prepared.messages[: anchor + 1]
    assert any(is_stub(r) for m in grown[:anchor] for r in m.tool_results)
    assert engine.cache_options([user("hi"), assistant("hello")]).cache_anchor is None


# -- L2 -------------------------------------------------------------------------------


def test_l2_replaces_the_old_part_with_a_record_and_keeps_the_tail(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    history = [*chat(14), user("summarize nothing, just go on")]
    before = engine.tokens(history, FRAME)
    assert before >= engine.thresholds.trigger_at
    prepared = engine.prepare(history, FRAME)
    (event,) = compacts(prepared.events)
    assert (event.layer, event.trigger) == ("summarize", "auto") and not event.degraded
    assert event.tokens_before == before and event.tokens_after <= engine.thresholds.target
    assert event.duration == 1.0  # the injected clock ticks once per call
    (request,) = summarizer.requests
    assert is_summary_request(request) and request.options == RequestOptions()  # the main requests' own
    first = prepared.messages[0]
    assert first.role == "user" and first.summary is not None
    record = first.summary.text
    assert first.summary.transcript == _shown(event.transcript) and _shown(event.transcript) in record
    assert "summarize" not in record.lower() and "recall(" in record
    assert "Done: the earlier steps." in record  # the model's text
    assert "request 0: explain part 0" in record  # the user's own words, verbatim
    assert prepared.messages[-1] is history[-1] and history[-3] in prepared.messages  # the tail, untouched
    assert pairing_errors(prepared.messages) == []
    assert removed_are_stored(history, prepared.messages, engine.archive) == []
    # The span in the request is the history's own prefix: the provider's cache is reused.
    assert [m.id for m in request.messages[:-1]] == [m.id for m in history[: len(request.messages) - 1]]


def test_rolling_record_goes_into_the_next_request(tmp_path: Path) -> None:
    summarizer = FakeSummarizer(["## Work state\nFIRST-RECORD-FACT", "## Work state\nSECOND"])
    engine, _, _ = make_engine(tmp_path, summarizer)
    first = engine.prepare(chat(15), FRAME).messages
    grown = first + chat(14, start=100)
    second = engine.prepare(grown, FRAME)
    assert len(summarizer.requests) == 2
    req = summarizer.requests[1]
    assert "FIRST-RECORD-FACT" in req.messages[0].text  # the previous record, folded in
    assert "earlier condensed record" in req.messages[-1].text
    record = second.messages[0].summary
    assert record is not None and "SECOND" in record.text
    assert "request 0: explain part 0" in record.text or "earlier user messages not shown" in record.text
    assert "request 100: explain part 100" in record.text


@pytest.mark.parametrize(
    "failure",
    [TransientError("stream cut short"), TimeoutError(), ""],
    ids=["provider-error", "timeout", "empty"],
)
def test_l2_degrades_to_the_digest_when_the_model_fails(tmp_path: Path, failure: object) -> None:
    engine, _, _ = make_engine(tmp_path, FakeSummarizer([failure]))  # type: ignore[list-item]
    history = [user("fix src/app.py")]
    history += tool_round("read_file", {"path": "src/app.py"}, filler(3_000))
    history += tool_round(
        "bash", {"command": "pytest -q"}, "FAILED test_app.py::test_x - KeyError: 'id'", error=True
    )
    history += chat(14)
    prepared = engine.prepare(history, FRAME)
    (event,) = compacts(prepared.events)
    assert event.layer == "summarize" and event.degraded
    assert any(isinstance(e, WarningEvent) and "mechanical digest" in e.message for e in prepared.events)
    record = prepared.messages[0].summary
    assert record is not None
    for fact in ("src/app.py", "`pytest -q` -> failed", "KeyError: 'id'", "fix src/app.py"):
        assert fact in record.text
    assert event.tokens_after < engine.thresholds.trigger_at
    assert pairing_errors(prepared.messages) == []


def test_a_bug_in_the_summary_call_is_not_turned_into_a_digest(tmp_path: Path) -> None:
    """Only the summary call's own failures (provider errors, timeouts, an empty or unusable
    record, I/O) fall back to the digest; a bug goes up to the crash log instead of hiding there."""
    engine, _, _ = make_engine(tmp_path, FakeSummarizer([KeyError("a bug")]))  # type: ignore[list-item]
    history = [user("fix src/app.py")]
    history += tool_round("read_file", {"path": "src/app.py"}, filler(3_000))
    history += chat(14)
    with pytest.raises(KeyError, match="a bug"):
        engine.prepare(history, FRAME)


def test_a_record_that_grows_the_request_is_rejected_for_the_digest(tmp_path: Path) -> None:
    bloated = "## Work state\n" + "very important detail. " * 2_000
    engine, _, _ = make_engine(tmp_path, FakeSummarizer([bloated]), summary_max_tokens=4_000)
    # The older part is small (~1.8k tokens), so the model's ~1.8k-token record plus the user's
    # messages would not shrink it; the digest (which leaves the tool output out) does.
    history = [m for i in range(40) for m in (user(f"q{i}"), assistant(f"a{i}"))]
    history += tool_round("bash", {"command": "build"}, filler(5_600))
    history += [assistant("built"), user("now review this paste:\n" + filler(50_000))]
    prepared = engine.prepare(history, FRAME)
    (event,) = compacts(prepared.events)
    assert event.degraded and event.tokens_after < event.tokens_before
    reasons = ("would not shrink", "larger than what it replaces")
    assert any(isinstance(e, WarningEvent) and any(r in e.message for r in reasons) for e in prepared.events)
    record = prepared.messages[0].summary
    assert record is not None and "very important detail" not in record.text
    assert prepared.messages[-1] is history[-1]  # the pending request stays a message of its own


def test_fidelity_repair_adds_what_the_record_left_out(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path, FakeSummarizer(["## Work state\nSome work was done."]))
    history = [user("port the parser")]
    history += tool_round("edit_file", {"path": "src/deep/parser.rs", "old": "a", "new": "b"}, "edited")
    history += tool_round("bash", {"command": "cargo test"}, "error[E0308]: mismatched types", error=True)
    history += chat(14)
    record = engine.prepare(history, FRAME).messages[0].summary
    assert record is not None
    assert "Also in the replaced part" in record.text
    assert "src/deep/parser.rs" in record.text and "error[E0308]: mismatched types" in record.text


def test_too_long_to_compact_goes_in_chunks_that_each_fit(tmp_path: Path) -> None:
    def answer(request: Request) -> str:
        return f"## Work state\nrecord after request {len(summarizer.requests)}"

    summarizer = FakeSummarizer([answer])
    engine, counter, _ = make_engine(tmp_path, summarizer)
    history = chat(30, size=4_000)  # ~30k tokens: larger than the whole budget
    prepared = engine.prepare(history, FRAME)
    assert len(summarizer.requests) >= 2
    for request in summarizer.requests:
        assert (
            counter.count_request(request.system, request.tools, list(request.messages))
            <= engine.thresholds.budget
        )
        assert is_summary_request(request)
    assert "record after request 1" in summarizer.requests[1].messages[0].text  # rolling over the chunks
    record = prepared.messages[0].summary
    assert record is not None and f"record after request {len(summarizer.requests)}" in record.text
    assert engine.tokens(prepared.messages, FRAME) <= engine.thresholds.target


# -- L3 -------------------------------------------------------------------------------


def test_manual_compact_takes_everything_with_the_focus(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    history = chat(2, size=200)  # short: a manual compaction still condenses it
    prepared = engine.compact(history, FRAME, "the database schema", "manual")
    (event,) = compacts(prepared.events)
    assert (event.layer, event.trigger) == ("manual", "manual")
    assert "the database schema" in summarizer.requests[0].messages[-1].text
    assert [m.role for m in prepared.messages] == ["user", "assistant"]  # record + acknowledgement
    assert prepared.messages[1].text == ACK


def test_compact_tool_keeps_the_open_round(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    call, result = tool_round("compact", {"focus": "tests"}, "compaction scheduled")
    history = [*chat(3), user("tidy up"), call, result]
    prepared = engine.compact(history, FRAME, "tests", "tool")
    assert prepared.messages[-2:] == [call, result] and prepared.messages[0].summary is not None
    assert len(prepared.messages) == 3 and pairing_errors(prepared.messages) == []
    assert compacts(prepared.events)[0].trigger == "tool"


def test_nothing_to_compact_says_so(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    prepared = engine.compact([], FRAME, None, "manual")
    assert prepared.messages == [] and isinstance(prepared.events[0], WarningEvent)
    assert summarizer.requests == []


# -- L4 and the loop guard ------------------------------------------------------------


def test_circuit_breaker_after_two_failures_then_l4_and_manual_reset(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    huge = user("please review this paste:\n" + filler(60_000))  # ~15k tokens on its own
    history = [user("hi"), assistant(filler(4_000, "hello")), huge]  # a span worth condensing
    first = engine.prepare(history, FRAME)
    assert engine.state.compaction_failures == 1 and engine.auto_compact
    assert first.messages[-1] is huge  # the latest user message always survives
    huge2 = user("and this one:\n" + filler(60_000, "ipsum"))  # again too big to fit under the trigger
    second = engine.prepare([*first.messages, assistant(filler(4_000, "noted")), huge2], FRAME)
    errors = [e for e in second.events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and "/compact" in errors[0].message and not engine.auto_compact
    asked = len(summarizer.requests)
    third = engine.prepare([*second.messages, assistant("ok"), user("more")], FRAME)
    assert len(summarizer.requests) == asked  # no more automatic attempts: no money burnt
    assert not [e for e in third.events if isinstance(e, ErrorEvent)]  # said once
    assert "off after repeated failures" in engine.breakdown(third.messages, FRAME).next_compaction
    engine.compact(third.messages, FRAME, None, "manual")
    assert engine.auto_compact and engine.state.compaction_failures == 0


def test_emergency_drops_oldest_groups_with_a_marker(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    engine.stop_automatic()  # as after the loop guard: only L4 is left
    history = [*chat(17), user("the latest request")]
    history += tool_round("bash", {"command": "ls"}, "a\nb")
    assert engine.tokens(history, FRAME) >= engine.thresholds.emergency_at
    prepared = engine.prepare(history, FRAME)
    (event,) = compacts(prepared.events)
    assert (event.layer, event.trigger) == ("emergency", "auto")
    assert event.tokens_after <= engine.thresholds.target and summarizer.requests == []
    marker = prepared.messages[0]
    assert marker.role == "user" and _shown(event.transcript) in marker.text and "recall(" in marker.text
    assert any(m.text == "the latest request" for m in prepared.messages)
    assert pairing_errors(prepared.messages) == []
    assert removed_are_stored(history, prepared.messages, engine.archive) == []


# -- reactive ------------------------------------------------------------------------


def test_overflow_learns_the_count_and_forces_compaction(tmp_path: Path) -> None:
    engine, counter, summarizer = make_engine(tmp_path)
    history = chat(8)  # ~4.5k tokens by our count: nothing fires proactively
    assert engine.prepare(history, FRAME).events == []
    error = ContextOverflowError(
        "prompt is too long: 21000 tokens > 20000 maximum", tokens=21_000, limit=20_000
    )
    prepared = engine.on_overflow(history, FRAME, error)
    assert counter.scale > 2  # the provider's count was learned
    (event,) = compacts(prepared.events)
    assert (event.layer, event.trigger) == ("summarize", "overflow") and event.tokens_before == 21_000
    assert engine.tokens(prepared.messages, FRAME) <= engine.thresholds.budget
    assert len(summarizer.requests) == 1


def test_overflow_with_nothing_left_to_remove_raises_a_clear_error(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    error = ContextOverflowError("request (40000 tokens) exceeds the available context size", tokens=40_000)
    history = [user("x" * 100_000)]
    prepared = engine.on_overflow(history, FRAME, error)
    assert prepared.unsendable is not None and "Shorten that message" in str(prepared.unsendable)
    assert prepared.messages == history  # nothing was sent, nothing changed


def test_a_message_far_over_the_window_is_not_sent(tmp_path: Path) -> None:
    """The user's words are never cut; a message 4x the window cannot go, so it is said before sending."""
    engine, _, _ = make_engine(tmp_path)
    prepared = engine.prepare([user("x" * 4 * 4 * 20_000)], FRAME)
    assert prepared.unsendable is not None and "Shorten that message" in str(prepared.unsendable)
    near = engine.prepare([user("x" * 4 * 20_000)], FRAME)  # within the estimate's error: the provider judges
    assert near.unsendable is None


def test_overflow_learns_a_smaller_window(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    history = chat(10)
    error = ContextOverflowError(
        "request (6000 tokens) exceeds the available context size (4096 tokens)", tokens=6_000, limit=4_096
    )
    prepared = engine.on_overflow(history, FRAME, error)
    assert engine.window == 4_096
    assert any(isinstance(e, WarningEvent) and "4,096" in e.message for e in prepared.events)
    assert engine.tokens(prepared.messages, FRAME) <= engine.thresholds.budget


# -- /context -------------------------------------------------------------------------


def test_breakdown_adds_up_and_says_when_compaction_fires(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path)
    history = [user("read"), *tool_round("read_file", {"path": "a"}, filler(8_000)), *chat(3)]
    bd = engine.breakdown(history, FRAME)
    assert bd.total == engine.tokens(history, FRAME)
    assert bd.system + bd.tools + bd.summary + bd.messages + bd.tool_results == bd.total
    assert bd.free == engine.thresholds.budget - bd.total and bd.tool_results > 1_900
    assert "14,080 tokens" in bd.next_compaction
    assert [label for label, _, _ in bd.rows()][-1] == "free"


def test_l1_looks_again_once_the_history_has_grown_enough(tmp_path: Path) -> None:
    engine, counter, _ = make_engine(tmp_path, clear_min_batch_tokens=2_000)
    history = [user("read"), *chat(8)]
    for i in range(3):
        history += tool_round("read_file", {"path": f"src/r{i}.py"}, filler(4_000, f"r{i}"))
    assert engine.tokens(history, FRAME) >= engine.thresholds.clear_at
    assert engine.prepare(history, FRAME).events == []  # ~1k tokens clearable: under the 2k batch
    cached = len(counter.cache)
    history += [assistant("ok"), user("again")]
    assert engine.prepare(history, FRAME).events == []
    assert len(counter.cache) == cached + 2  # only the new messages were counted
    for i in range(3, 5):
        history += tool_round("read_file", {"path": f"src/r{i}.py"}, filler(4_000, f"r{i}"))
    (event,) = compacts(engine.prepare(history, FRAME).events)
    assert event.layer == "clear"


def test_records_carry_the_users_words_and_the_models_byte_for_byte(tmp_path: Path) -> None:
    reply = "## Work state\nI summarized the logs as asked. Summarization done; next: summarise the tests."
    asked = "please summarize the logs — «résumé» 日本語のログ 🙂\u00a0twice"
    engine, _, summarizer = make_engine(tmp_path, FakeSummarizer([reply]))
    history = [user(asked), assistant("on it"), *chat(15)]
    prepared = engine.prepare(history, FRAME)
    assert is_summary_request(summarizer.requests[0])
    record = prepared.messages[0].summary
    assert record is not None
    assert asked in record.text  # the user's words, exactly as typed
    assert "I summarized the logs as asked. Summarization done; next: summarise the tests." in record.text
    assert "\u00ad" not in record.text
    # The digest path carries them as exactly.
    engine2, _, _ = make_engine(tmp_path / "2", FakeSummarizer([TransientError("down")]))
    degraded = engine2.prepare(history, FRAME).messages[0].summary
    assert degraded is not None and asked in degraded.text


# -- hysteresis between L1 and L2 ----------------------------------------------------------


def test_past_the_trigger_l1_alone_suffices_when_it_gets_below_the_trigger(tmp_path: Path) -> None:
    """Tool output is most of the history: stubbing it gets well below the trigger, so no summary."""
    engine, _, summarizer = make_engine(tmp_path)
    history = [user("read them all")]
    for i in range(10):
        history += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(6_000, f"m{i}"))
    th = engine.thresholds
    assert engine.tokens(history, FRAME) >= th.trigger_at
    prepared = engine.prepare(history, FRAME)
    assert [e.layer for e in compacts(prepared.events)] == ["clear"]
    assert engine.tokens(prepared.messages, FRAME) <= th.target and not summarizer.requests


def test_past_the_trigger_l2_takes_the_span_whole_when_l1_cannot_get_below_it(tmp_path: Path) -> None:
    """Mostly the model's own text: stubs would leave it above the trigger, so L2 runs instead of L1."""
    engine, _, summarizer = make_engine(tmp_path)
    history = [user("analyze")]
    for i in range(3):
        history += tool_round("read_file", {"path": f"src/m{i}.py"}, filler(5_000, f"m{i}"))
        history += [assistant(filler(18_000, f"analysis{i}")), user(f"next {i}")]
    th = engine.thresholds
    assert engine.tokens(history, FRAME) >= th.trigger_at
    prepared = engine.prepare(history, FRAME)
    assert [e.layer for e in compacts(prepared.events)] == ["summarize"]
    assert engine.tokens(prepared.messages, FRAME) <= th.target
    sent = summarizer.requests[0].messages
    seen = [r.content for m in sent for r in m.tool_results] + [m.text for m in sent]  # as is, or chunked
    assert any("m0 m0" in text for text in seen), "the summary saw the tool output"


def test_l2_keeps_the_tool_round_the_model_has_not_seen(tmp_path: Path) -> None:
    """The newest tool output reaches the model verbatim, however small the window."""
    engine, _, _ = make_engine(tmp_path)
    record = Message("user", (SummaryBlock("Condensed record: reading files one by one.", "t.jsonl"),))
    history = [record, assistant(filler(46_000, "notes"))]
    history += tool_round("read_file", {"path": "src/f9.py"}, filler(12_000, "f9"))  # over the kept tail
    assert engine.tokens(history, FRAME) >= engine.thresholds.trigger_at
    prepared = engine.prepare(history, FRAME)
    assert "summarize" in [e.layer for e in compacts(prepared.events)]
    assert prepared.messages[-2:] == history[-2:], "the last call and its result stay as they were"
    assert pairing_errors(prepared.messages) == []


def test_learning_a_smaller_window_shrinks_the_reply_size_too(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path, window=100_000, max_output=32_000)
    history = [user("hello")]
    for i in range(10):
        history += [assistant(filler(3_000, f"a{i}")), user(f"go on {i}")]
    error = ContextOverflowError(
        "request (9000 tokens) exceeds the available context size (8000 tokens)", tokens=9_000, limit=8_000
    )
    prepared = engine.on_overflow(history, FRAME, error)
    assert engine.tokens(prepared.messages, FRAME) <= engine.thresholds.budget
    assert engine.window == 8_000
    assert engine.max_output == 2_000, "a quarter of the learned window, not the 32k asked for before"
    assert engine.thresholds.budget > 8_000 // 2


def test_a_span_smaller_than_a_record_is_not_sent_to_the_model(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    huge = user("please review this paste:\n" + filler(60_000))
    prepared = engine.prepare([user("hi"), assistant("hello"), huge], FRAME)
    assert summarizer.requests == [] and engine.state.compaction_failures == 0 and engine.auto_compact
    assert prepared.messages[-1] is huge


def test_the_results_of_one_turn_share_the_ingest_cap(tmp_path: Path) -> None:
    """Three big reads in one turn stay verbatim until seen, so together they must fit."""
    engine, counter, _ = make_engine(tmp_path, tool_result_max_tokens=6_000)
    cap = engine.thresholds.tool_result_cap
    uses = [ToolUse(f"toolu_w{i}", "read_file", {"path": f"big{i}.txt"}) for i in range(3)]
    results = [
        engine.ingest(u, ToolResult(u.id, filler(cap * 4, f"w{i}")), round_size=3)[0]
        for i, u in enumerate(uses)
    ]
    total = sum(counter.count_text(r.content) for r in results)
    assert total <= cap * 1.1, (total, cap)
    alone, _ = engine.ingest(uses[0], ToolResult(uses[0].id, filler(cap * 4, "solo")))
    assert counter.count_text(alone.content) > cap * 0.8


def test_the_files_touched_are_carried_from_record_to_record(tmp_path: Path) -> None:
    """Whatever the model's summary says, the list of files survives any number of compactions."""
    engine, _, _ = make_engine(tmp_path, FakeSummarizer(["## Work state\nbusy"] * 3))
    history = [user("fix the parser"), *tool_round("read_file", {"path": "src/a.py"}, "a")]
    history += [assistant("read a"), user("now b")]
    history += tool_round("edit_file", {"path": "src/b.py", "old_string": "x", "new_string": "y"}, "ok")
    first = engine.compact([*history, assistant("done with b"), user("next")], FRAME, None, "manual").messages
    second_history = [*first, *tool_round("bash", {"command": "pytest tests/test_c.py"}, "1 passed")]
    second_history += [assistant("tests pass"), user("thanks")]
    second = engine.compact(second_history, FRAME, None, "manual").messages
    record = second[0].summary
    assert record is not None
    listed = record.text.split("## Files touched so far")[1]
    for path in ("src/a.py", "src/b.py", "tests/test_c.py"):
        assert f"- {path}" in listed


def test_after_uncompact_the_engine_keeps_the_size_until_the_context_grows(tmp_path: Path) -> None:
    """/uncompact: the user chose this size, so the next turn does not compact it again; the
    emergency line still holds."""
    engine, _, summarizer = make_engine(tmp_path)
    history = [*chat(14), user("go on")]
    th = engine.thresholds
    tokens = engine.tokens(history, FRAME)
    assert th.trigger_at <= tokens < th.emergency_at
    engine.keep_size(tokens)
    prepared = engine.prepare(history, FRAME)
    assert prepared.events == [] and prepared.messages == history and summarizer.requests == []
    grown = [*history, assistant("answer: " + filler(4_000, "g")), user("more")]
    assert engine.tokens(grown, FRAME) < tokens + th.trigger_at - th.target
    assert compacts(engine.prepare(grown, FRAME).events) == []
    past = [*chat(17), user("go on")]
    assert engine.tokens(past, FRAME) >= th.emergency_at
    prepared = engine.prepare(past, FRAME)  # past the emergency line the engine does its whole job
    assert compacts(prepared.events) and engine.tokens(prepared.messages, FRAME) < th.emergency_at


def test_every_part_of_a_summary_in_chunks_carries_the_notes(tmp_path: Path) -> None:
    # The goal's and the todo list's notes ride in every request; a summary too long for one request
    # goes in parts, and the part whose transcript no longer holds the notes (they sat early in the
    # span) carries them before its instruction, as the one-request summary does.
    summarizer = FakeSummarizer(["## Work state\nreading"])
    engine, _, _ = make_engine(tmp_path, summarizer)
    frame = dataclasses.replace(FRAME, todos="TODO NOTE: [ ] read every file", goal="GOAL NOTE: reach 14")
    history = [user("start\n\n" + frame.todos + "\n\n" + frame.goal), *chat(30, size=4_000)[1:]]
    engine.prepare(history, frame)
    assert len(summarizer.requests) >= 2
    for request in summarizer.requests:
        text = "\n".join(b.text for m in request.messages for b in m.content if isinstance(b, TextBlock))
        assert frame.todos in text and frame.goal in text
        assert is_summary_request(request)  # the instruction still the last text block

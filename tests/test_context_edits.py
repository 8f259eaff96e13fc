"""Pins, the record and its undo, below the REPL: a session built from settings with a scripted
provider (the real engine, log and archive in a temp dir), and the pure parts on their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.agent.record_edits import RECORD_EDIT, find_record, with_record
from agent_cli.agent.turn_stream import relayed
from agent_cli.app import LATEST, open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.context.record_parts import USER_END, USER_HEADER, archive_files, assemble_record, record_parts
from agent_cli.core.errors import CommandError, ConfigError
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, SummaryBlock, TextBlock
from agent_cli.core.thought_blocks import ThinkingBlock
from agent_cli.prompt.pins import PROJECT_PINS, PinBoard, section
from agent_cli.session import AgentSession
from agent_cli.store.compactions import UNCOMPACT, last_compaction
from agent_cli.store.log_records import read_log
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.testing.scripted import ScriptedProvider, Step, say

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test-edits-0000", "HOME": "/nonexistent-home"}


def _session(
    tmp_path: Path, script: list[Step], *, resume: str | None = None, pins: tuple[str, ...] = ()
) -> AgentSession:
    env = {**ENV, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state")}
    flags = Flags(model="claude-sonnet-4-6", context_window=30_000)
    settings = load_settings(config_path=None, env=env, flags=flags, cwd=tmp_path)
    make = lambda p: ScriptedProvider(script, model=p.model or "")  # noqa: E731 - one script, every call
    return open_session(settings, env=env, make_provider=make, resume=resume, pins=pins)


def _drain(events: object) -> list[object]:
    return list(events)  # type: ignore[call-overload]


# -- pins ------------------------------------------------------------------------------


def test_the_section_holds_each_pin_byte_for_byte(tmp_path: Path) -> None:
    odd = "  tabs\tand  spaces — ✓ \u202e kept  "
    board = PinBoard(tmp_path, [odd, "second"])
    text = section(board.pins)
    assert f"1. {odd}\n2. second" in text and text.startswith("\n\n")
    assert section(()) == ""


def test_what_a_pin_command_cannot_do_is_a_command_error_not_a_config_error(tmp_path: Path) -> None:
    board = PinBoard(tmp_path, ["only"])
    for attempt, said in (
        (lambda: board.remove(9), "no pin 9: /pins lists 1"),
        (lambda: board.add("  "), "/pin needs the instruction"),
        (lambda: board.add("two\nlines", project=True), "a project pin is one line"),
    ):
        with pytest.raises(CommandError, match=said) as info:
            attempt()
        assert not isinstance(info.value, ConfigError)  # before: ConfigError, as for a bad config file
    assert [p.text for p in board.pins] == ["only"]


def test_rewind_and_unpin_arguments_are_command_errors(tmp_path: Path) -> None:
    from agent_cli.agent.rewind import pick
    from agent_cli.ui.rewind_view import parse_rewind

    for attempt in (lambda: pick([], 1), lambda: parse_rewind("seven")):
        with pytest.raises(CommandError) as info:
            attempt()
        assert not isinstance(info.value, ConfigError)


def test_a_project_pin_goes_to_the_file_and_unpinning_it_takes_it_out(tmp_path: Path) -> None:
    (tmp_path / ".agent").mkdir()
    (tmp_path / PROJECT_PINS).write_text("# ours\n\nA note a person wrote.\n- first rule\n")
    board = PinBoard(tmp_path)
    assert [p.text for p in board.pins] == ["first rule"] and board.pins[0].project
    assert board.add("second rule", project=True) is not None
    assert board.add("second rule", project=True) is None  # pinned already
    assert (
        tmp_path / PROJECT_PINS
    ).read_text() == "# ours\n\nA note a person wrote.\n- first rule\n- second rule\n"
    gone = board.remove(1)
    assert gone.text == "first rule"
    assert (tmp_path / PROJECT_PINS).read_text() == "# ours\n\nA note a person wrote.\n- second rule\n"
    assert board.own() == []
    with pytest.raises(CommandError, match="no pin 5"):
        board.remove(5)
    with pytest.raises(CommandError, match="one line"):
        board.add("two\nlines", project=True)
    with pytest.raises(CommandError, match="needs the instruction"):
        board.add("   ")


def test_pins_reach_the_request_survive_clear_and_come_back_with_continue(tmp_path: Path) -> None:
    script = [say("one"), say("two")]
    session = _session(tmp_path, script, pins=("from the flag",))
    session.pin("from the REPL")
    provider = session._loop.provider
    assert isinstance(provider, ScriptedProvider)
    _drain(session.run("hi"))
    session.clear()
    _drain(session.run("again"))
    for request in provider.requests:
        assert request.system.endswith("1. from the flag\n2. from the REPL")
    assert session.breakdown().pins > 0
    session.close()
    again = _session(tmp_path, [say("three")], resume=LATEST)
    assert [p.text for p in again.pins] == ["from the flag", "from the REPL"]
    again.unpin(1)
    again.close()
    third = _session(tmp_path, [], resume=LATEST)
    assert [p.text for p in third.pins] == ["from the REPL"]
    third.close()


def test_a_change_of_pins_unbinds_the_thinking_of_the_history(tmp_path: Path) -> None:
    session = _session(tmp_path, [])
    thought = Message("assistant", (ThinkingBlock("hmm", "sig"), TextBlock("answer")))
    session._loop.replace_history([Message.user("q"), thought], "test")
    session.pin("a rule")
    assert not any(m.thoughts for m in session.history)
    session.close()


# -- the record ------------------------------------------------------------------------


def test_record_parts_say_who_wrote_what_and_the_files_it_names() -> None:
    text = assemble_record(
        body="## Goal\nfix the parser",
        users=f"{USER_HEADER}\n[user message 1]\nfix it\n{USER_END}",
        transcript=".transcripts/s1/span-001-l2.jsonl",
        replaced=4,
        recall_hint='"parser.py"',
    )
    parts = record_parts(text, writer="the model")
    assert [p.label for p in parts] == ["intro", "body", "user messages", "closing"]
    assert parts[1].text == "## Goal\nfix the parser" and parts[1].source == "the model"
    assert "your own 1 message" in parts[2].source
    assert "\n\n".join(p.text for p in parts) == text  # nothing lost, nothing added
    assert archive_files(text) == [".transcripts/s1/span-001-l2.jsonl"]
    edited = record_parts("whatever the user wrote", writer="you")
    assert [(p.label, p.text) for p in edited] == [("body", "whatever the user wrote")]


def test_an_edited_record_keeps_its_transcript_and_the_thinking_before_it() -> None:
    early = Message("assistant", (ThinkingBlock("before", "s0"), TextBlock("early")))
    record = Message("user", (SummaryBlock("old record", ".transcripts/s/span-001.jsonl"),))
    late = Message("assistant", (ThinkingBlock("after", "s1"), TextBlock("late")))
    history = [Message.user("q"), early, record, late]
    index = find_record(history)
    assert index == 2
    edited = with_record(history, index, "new record\n")
    block = edited[2].summary
    assert (
        block is not None
        and block.text == "new record\n"
        and block.transcript == ".transcripts/s/span-001.jsonl"
    )
    assert edited[1].thoughts and not edited[3].thoughts


def test_record_edit_is_in_the_log_and_survives_resume(tmp_path: Path) -> None:
    session = _session(tmp_path, [say("one"), say("two"), say("## Goal\nthe record")])
    _drain(session.run("first"))
    _drain(session.run("second"))
    _drain(session.compact())
    view = session.record()
    assert view is not None and view.origin is not None and view.origin.how.startswith("L3")
    session.edit_record("my own record")
    assert [m.summary.text for m in session.history if m.summary] == ["my own record"]
    records, _ = read_log(session.transcript_path)
    assert any(getattr(r, "reason", "") == RECORD_EDIT for r in records)
    archived = [p.name for p in session.engine.archive.files() if "record-before-edit" in p.name]
    assert archived, "the old record is in the archive"
    session.close()
    again = _session(tmp_path, [], resume=LATEST)
    view = again.record()
    assert (
        view is not None and view.text == "my own record" and view.origin is not None and view.origin.edited
    )
    again.close()


# -- the undo --------------------------------------------------------------------------


def test_uncompact_after_compact_restores_the_history_and_a_second_has_nothing_to_undo(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path, [say("one"), say("two"), say("## Goal\nthe record"), say("three")])
    _drain(session.run("first"))
    _drain(session.run("second"))
    before = [m.id for m in session.history]
    _drain(session.compact())
    assert [m.id for m in session.history] != before
    done = session.uncompact()
    assert done is not None and done.over == 0 and done.restored == 4
    assert [m.id for m in session.history] == before
    _drain(session.run("third"))  # no compaction fires for the undo
    assert [m.text for m in session.history][-2:] == ["third", "three"] and len(session.history) == 6
    assert session.uncompact() is None
    session.close()


def test_uncompact_that_does_not_fit_says_by_how_much_and_changes_nothing(tmp_path: Path) -> None:
    big = "word " * 30_000  # ~30k tokens: more than a 30k window leaves for input
    session = _session(tmp_path, [say("ok " + big[:40]), say("## Goal\nr")])
    session._loop.replace_history([Message.user(big), Message.assistant("ok")], "test")
    _drain(session.compact())
    now = [m.id for m in session.history]
    done = session.uncompact()
    assert done is not None and done.over > 0 and done.tokens - done.over == session.thresholds.budget
    assert [m.id for m in session.history] == now
    session.close()


def test_the_log_keeps_a_stack_of_compactions(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, redactor=Redactor(), meta={"model": "m"}) as log:
        a, b, c = Message.user("a"), Message.assistant("b"), Message.user("c")
        for m in (a, b, c):
            log.log_message(m)
        first = [Message("user", (SummaryBlock("r1"),)), c]
        log.log_history(first, "manual")
        log.log_event(CompactEvent(layer="manual", trigger="manual", messages_before=3, messages_after=2,
                                   tokens_before=9, tokens_after=4))  # fmt: skip
        second = [Message("user", (SummaryBlock("r2"),))]
        log.log_history(second, "manual")
        log.log_event(CompactEvent(layer="manual", trigger="manual", messages_before=2, messages_after=1,
                                   tokens_before=4, tokens_after=2))  # fmt: skip
        path = log.path
        top = last_compaction(read_log(path)[0])
        assert top is not None and [m.id for m in top.before] == [m.id for m in first]
        log.log_history(first, UNCOMPACT)
        top = last_compaction(read_log(path)[0])
        assert top is not None and [m.id for m in top.before] == [a.id, b.id, c.id] and top.removed == 2
        log.log_history([], "clear")
        assert last_compaction(read_log(path)[0]) is None


# -- the turn's generator ----------------------------------------------------------------


def test_ctrl_c_thrown_into_a_turn_reaches_the_loop_with_side_notes_too() -> None:
    """The REPL throws KeyboardInterrupt into the turn between two events; with the side queue's
    notes woven in (the loop's door) it must still reach the loop's generator, which ends the turn
    cleanly."""
    from agent_cli.core.events import AssistantText, ResultEvent, WarningEvent
    from agent_cli.core.messages import Usage

    def loop_turn():  # type: ignore[no-untyped-def]
        try:
            yield AssistantText(text="working")
            yield AssistantText(text="never")
        except KeyboardInterrupt:
            yield ResultEvent(text="", stop="interrupted", iterations=0, usage=Usage(), session_id="s")

    turn = relayed(loop_turn(), lambda event: [WarningEvent(message="server x failed"), event])
    assert isinstance(next(turn), WarningEvent)
    assert next(turn) == AssistantText(text="working")
    after = turn.throw(KeyboardInterrupt())  # at the event just shown: into the loop's generator
    assert isinstance(after, WarningEvent)  # (the note that comes before the loop's next event)
    after = next(turn)
    assert isinstance(after, ResultEvent) and after.stop == "interrupted"
    turn = relayed(loop_turn(), lambda event: [WarningEvent(message="server x failed"), event])
    assert isinstance(next(turn), WarningEvent) and next(turn) == AssistantText(text="working")
    assert isinstance(next(turn), WarningEvent)
    after = turn.throw(KeyboardInterrupt())  # at the note before the loop's next event
    assert after == AssistantText(text="never")  # that event still goes out, then the interrupt
    after = next(turn)
    while isinstance(after, WarningEvent):
        after = next(turn)
    assert isinstance(after, ResultEvent) and after.stop == "interrupted"


def test_a_native_record_is_shown_as_the_providers_and_cannot_be_edited(tmp_path: Path) -> None:
    from agent_cli.agent.record_edits import view_record
    from agent_cli.core.errors import AgentError
    from agent_cli.core.messages import NativeRecord

    native = NativeRecord("anthropic", '{"type": "compaction"}', "The provider's summary.", keeps_tail=True)
    history = [
        Message("user", (native,)),
        Message.assistant("kept turn"),
        Message("user", (SummaryBlock("our carrier", ".transcripts/s/span-001.jsonl"),)),
    ]
    view = view_record(history, [], writer="m")
    assert view is not None and view.native
    assert (view.parts[0].label, view.parts[0].text) == ("provider's record", "The provider's summary.")
    assert "cannot be edited" in view.parts[0].source
    session = _session(tmp_path, [])
    session._loop.replace_history(history, "test")
    with pytest.raises(AgentError, match="cannot be edited"):
        session.edit_record("mine")
    assert session.history[0].native == native
    session.close()

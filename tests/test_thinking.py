"""Preserved thinking through every change to a history: the layers, pair repair, redaction, a new frame.

The rule (core/thinking.py): thinking before the first changed position stays byte for byte;
every assistant message after it loses all of its thinking blocks, whole.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.app import LATEST, open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.core.thinking import first_change, settle_thinking, strip_thinking
from agent_cli.core.thought_blocks import ReasoningBlock, RedactedThinkingBlock, ThinkingBlock
from agent_cli.store.layout import SESSION_FILE
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import load_session
from agent_cli.testing.scripted import ScriptedProvider
from tests.test_context_fakes import FRAME, filler, make_engine, user


def thought(n: int) -> ThinkingBlock:
    return ThinkingBlock(f"thought {n}", f"sig-{n}-" + "s" * 30)


def thinking_round(n: int, output: str) -> list[Message]:
    use = ToolUse(f"toolu_t{n}", "read_file", {"path": f"src/m{n}.py"})
    return [
        Message("assistant", (thought(n), use)),
        Message("user", (ToolResult(use.id, output),)),
    ]


def test_first_change() -> None:
    a, b, c = Message.user("a"), Message.assistant("b"), Message.user("c")
    assert first_change([a, b], [a, b, c]) is None  # appending is what a conversation does
    assert first_change([a, b, c], [a, Message.assistant("B"), c]) == 1
    assert first_change([a, b, c], [a, b]) == 2
    assert first_change([a, b], [Message.user("record"), b]) == 0


def test_strip_keeps_everything_before_and_removes_whole_turns_of_thinking_after() -> None:
    reasoning = ReasoningBlock("rs_1", "enc", ("summary",))
    history = [
        Message.user("go"),
        Message("assistant", (thought(1), TextBlock("one"))),
        Message.user("more"),
        Message("assistant", (thought(2), RedactedThinkingBlock("r"), TextBlock("two"))),
        Message("assistant", (reasoning,)),  # only reasoning: nothing is left of it
    ]
    out = strip_thinking(history, 2)
    assert out[:2] == history[:2]  # byte for byte, same ids
    assert out[3].content == (TextBlock("two"),) and out[3].id != history[3].id
    assert len(out) == 4 and all(not m.thoughts for m in out[2:])
    unchanged = [*history, Message.user("next")]
    assert settle_thinking(history, unchanged) == unchanged


def test_l1_clear_strips_the_thinking_after_the_first_cleared_result_only(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    history = [user("read the modules")]
    for i in range(9):
        history += thinking_round(i, f"# module {i}\n" + filler(4_400, f"m{i}"))
    history.append(Message("assistant", (thought(99), TextBlock("read them"))))
    prepared = engine.prepare(history, FRAME)
    assert [e.layer for e in prepared.events if hasattr(e, "layer")] == ["clear"]
    messages = prepared.messages
    changed = first_change(history, messages)
    assert changed is not None and changed > 0
    assert messages[:changed] == history[:changed]  # thinking before the change: untouched
    assert all(not m.thoughts for m in messages[changed:])  # after it: none at all
    assert any(m.thoughts for m in messages[:changed])
    assert summarizer.requests == []


def test_l2_record_leaves_no_thinking_in_the_tail_nor_a_broken_summary_request(tmp_path: Path) -> None:
    engine, _, summarizer = make_engine(tmp_path)
    history = [user("start")]
    for i in range(14):  # long answers, short tool output: L1 cannot get there alone, L2 must
        history += thinking_round(i, filler(200, f"o{i}"))
        answer = TextBlock(f"step {i}: " + filler(4_000, "a"))
        history += [Message("assistant", (thought(100 + i), answer)), user(f"next {i}")]
    prepared = engine.prepare(history, FRAME)
    assert any(getattr(e, "layer", "") == "summarize" for e in prepared.events)
    assert not any(m.thoughts for m in prepared.messages)  # the record replaced the start: all goes
    for request in summarizer.requests:  # each summary request sends the span as it was sent before
        sent = [m for m in request.messages if m.thoughts]
        assert all(m in history for m in sent)


def test_resume_drops_thinking_after_a_repaired_or_redacted_message(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "Q" * 40
    log = SessionLog.create(tmp_path, redactor=Redactor([secret]), meta={"model": "claude-sonnet-5-5"})
    first = Message("assistant", (thought(1), TextBlock("hello")))
    pasted = Message.user(f"my key is {secret}")  # the model saw it; the log holds it redacted
    later = Message("assistant", (thought(2), TextBlock("noted")))
    for message in (Message.user("hi"), first, pasted, later):
        log.log_message(message)
    log.close()
    loaded = load_session(tmp_path, log.id).messages
    assert loaded[1].thoughts == first.thoughts  # before the redacted message: kept
    assert not loaded[3].thoughts and loaded[3].text == "noted"


def test_resume_under_another_frame_sends_no_thinking(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    settings = load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-5-5"), cwd=tmp_path)
    session = open_session(settings, env=env, make_provider=lambda p: ScriptedProvider([], model="m"))
    session.close()
    log_path = session.log_dir / SESSION_FILE
    reply = Message("assistant", (thought(1), TextBlock("hi")))
    with log_path.open("a") as out:  # as if a reply with thinking had been logged
        out.write(json.dumps({"rid": "r", "ts": "t", "kind": "message", "message": reply.to_json()}) + "\n")
    same = open_session(settings, env=env, resume=LATEST, make_provider=lambda p: ScriptedProvider([]))
    assert same.history[-1].thoughts  # same frame: the thinking still matches
    same.close()
    (tmp_path / "AGENTS.md").write_text("Always run the tests.\n")  # the system prompt changes
    other = open_session(settings, env=env, resume=LATEST, make_provider=lambda p: ScriptedProvider([]))
    assert not any(m.thoughts for m in other.history) and other.history[-1].text == "hi"
    other.close()

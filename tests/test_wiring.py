"""Building a session from settings: resume keeps the provider's count, /model retargets the engine."""

from __future__ import annotations

from pathlib import Path

from agent_cli.core.events import UsageEvent
from agent_cli.core.messages import Message, Usage
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.wiring import CliArgs, build, switch_model

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test-wiring-0000", "HOME": "/nonexistent-home"}


def test_a_resumed_session_counts_from_the_last_report(tmp_path: Path) -> None:
    env = {**ENV, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    log = SessionLog.create(tmp_path, redactor=Redactor(), meta={"model": "claude-sonnet-4-5"})
    asked = Message.user("what is in a.py? " + "context " * 2_000)
    answered = Message.assistant("a.py defines add().")
    log.log_message(asked)
    log.log_message(answered)
    reported = Usage(input_tokens=50_000, output_tokens=9)
    log.log_event(
        UsageEvent(model="claude-sonnet-4-5", usage=reported, context_tokens=50_000, context_window=200_000)
    )
    log.close()
    built = build(CliArgs(model="claude-sonnet-4-5", continue_session=True), env=env, cwd=tmp_path)
    history = built.loop.history
    assert [m.id for m in history] == [asked.id, answered.id]
    counted = built.engine.tokens(history, built.loop.frame)
    tail = built.engine.counter.count_message(answered)
    assert counted == 50_000 + tail, "the report for the prefix, plus a local count of the reply only"


def test_switching_model_retargets_window_output_and_counter(tmp_path: Path) -> None:
    env = {**ENV, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "OPENAI_API_KEY": "sk-test-wiring-0000"}
    built = build(CliArgs(model="claude-sonnet-4-5"), env=env, cwd=tmp_path)
    assert built.window == 200_000
    old_counter = built.engine.counter
    warning = switch_model(built, "claude-haiku-3-5-unknown-xyz")
    assert warning is not None and built.window == 32_000 and built.engine.window == 32_000
    assert built.engine.max_output <= 32_000 // 4 and built.engine.counter is not old_counter
    assert built.loop.provider.model == "claude-haiku-3-5-unknown-xyz"

"""The user's hooks at each point of the loop and the engine: real hook scripts, a scripted provider,
real tools in a temp dir, the real context engine over a small window."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from test_context_fakes import FRAME, FakeSummarizer, assistant, filler, make_engine, user

from agent_cli.agent.approvals import APPROVE_PROJECT_HOOKS, AutoApprover
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.side_events import HookEvent
from agent_cli.core.events import CompactEvent, ErrorEvent, Event, HookOutput, ResultEvent, WarningEvent
from agent_cli.core.messages import Message, TextBlock
from agent_cli.hooks_user.config import HookSpec
from agent_cli.hooks_user.trust import hooks_to_run
from agent_cli.hooks_user.user_hooks import UserHooks
from agent_cli.providers.retry import RetryPolicy
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, call, say
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools
from tests.hook_scripts import Place, Recorder

COMMON = {"event", "hook_event_name", "session_id", "cwd", "transcript_path"}


def user_hooks(tmp_path: Path, specs: list[HookSpec]) -> UserHooks:
    hooks = UserHooks(specs, root=tmp_path, env={"PATH": "/usr/bin:/bin"})
    hooks.follow(Place("s-1", tmp_path / ".transcripts" / "s-1" / "session.jsonl"))
    return hooks


def make_loop(
    tmp_path: Path, script: list[Any], hooks: UserHooks, **kw: Any
) -> tuple[AgentLoop, ScriptedProvider]:
    provider = ScriptedProvider(script)
    loop = AgentLoop(
        provider=provider,
        tools=default_tools(),
        context=kw.pop("context", PassThroughContext()),
        system="You are a test agent.",
        log=MemorySession(),
        approver=AutoApprover(),
        tool_context=ToolContext(root=tmp_path, bash_timeout=30.0),
        hooks=hooks,
        retry=RetryPolicy(max_retries=0, base_delay=0.0, max_delay=0.0),
        sleep=lambda s: None,
        side=hooks.side,
    )
    return loop, provider


def test_every_point_of_a_turn_fires_its_hook_with_the_documented_json(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    hooks = user_hooks(tmp_path, [rec.spec(e) for e in events])  # type: ignore[arg-type]
    (tmp_path / "a.txt").write_text("alpha\n")
    loop, _ = make_loop(tmp_path, [call("read_file", path="a.txt"), say("it says alpha")], hooks)
    list(loop.begin())
    list(loop.run("read a.txt"))
    list(loop.end())
    seen = rec.seen()
    assert [s["event"] for s in seen] == events
    for s in seen:
        assert set(s) >= COMMON and s["hook_event_name"] == s["event"]
        assert s["session_id"] == "s-1" and s["cwd"] == str(tmp_path)
        assert s["transcript_path"].endswith("s-1/session.jsonl")
    start, prompt, pre, post, stop, end = seen
    assert start["source"] == "startup" and prompt["prompt"] == "read a.txt"
    assert pre["tool_name"] == "read_file" and pre["tool_input"] == {"path": "a.txt"}
    assert post["tool_name"] == "read_file" and "alpha" in post["tool_response"]["content"]
    assert post["tool_response"]["is_error"] is False
    assert stop["reply"] == "it says alpha" and end["reason"] == "exit"


def test_session_start_and_prompt_output_reach_the_model_after_the_prompt_byte_for_byte(
    tmp_path: Path,
) -> None:
    rec = Recorder(tmp_path)
    prompt = "fix  the tests\t\n"
    hooks = user_hooks(
        tmp_path, [rec.spec("SessionStart", "branch: main\n"), rec.spec("UserPromptSubmit", "ticket: T-1")]
    )
    loop, provider = make_loop(tmp_path, [say("ok"), say("again")], hooks)
    list(loop.begin())
    list(loop.run(prompt))
    first = provider.requests[0].messages[0]
    assert first.content == (TextBlock(prompt), TextBlock("branch: main\n\nticket: T-1"))
    list(loop.run("next"))
    second = provider.requests[1].messages[-1]
    assert second.content == (TextBlock("next"), TextBlock("ticket: T-1"))  # SessionStart's only once


def test_a_prompt_hook_that_exits_2_drops_the_prompt_and_says_why(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(tmp_path, [rec.spec("UserPromptSubmit", stderr="no secrets in prompts", code=2)])
    loop, provider = make_loop(tmp_path, [], hooks)
    events = list(loop.run("my password is hunter2"))
    assert provider.requests == [] and loop.history == []
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and "no secrets in prompts" in errors[0].message and errors[0].kind == "hook"
    assert isinstance(events[-1], ResultEvent) and events[-1].stop == "blocked"


def test_a_pretooluse_block_is_a_tool_error_the_model_reads_and_the_tool_does_not_run(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    block = rec.spec("PreToolUse", stderr="not on main\n", code=2, matcher="bash|write_file")
    hooks = user_hooks(tmp_path, [block])
    script = [call("bash", command="touch made"), call("read_file", path="x"), say("understood")]
    (tmp_path / "x").write_text("x\n")
    loop, provider = make_loop(tmp_path, script, hooks)
    list(loop.run("go"))
    assert not (tmp_path / "made").exists()
    refused = provider.requests[1].messages[-1].tool_results[0]
    assert refused.is_error and refused.content == "Error: not on main"
    allowed = provider.requests[2].messages[-1].tool_results[0]
    assert not allowed.is_error  # read_file does not match the matcher
    assert [s["tool_name"] for s in rec.seen()] == ["bash"]


def test_a_json_block_from_pretooluse_is_the_same_decision(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(
        tmp_path, [rec.spec("PreToolUse", '{"decision": "block", "reason": "use the linter"}')]
    )
    loop, provider = make_loop(tmp_path, [call("bash", command="touch made"), say("ok")], hooks)
    list(loop.run("go"))
    assert not (tmp_path / "made").exists()
    assert provider.requests[1].messages[-1].tool_results[0].content == "Error: use the linter"


def test_a_failing_or_chatty_hook_is_a_line_and_the_turn_goes_on(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(
        tmp_path,
        [
            rec.spec("PreToolUse", stderr="crashed", code=7),
            rec.spec("PostToolUse", "\x1b]52;c;aGk=\x07 linted"),
        ],
    )
    loop, _ = make_loop(tmp_path, [call("bash", command="echo hi"), say("done")], hooks)
    events = list(loop.run("go"))
    warnings = [e.message for e in events if isinstance(e, WarningEvent)]
    assert len(warnings) == 1 and "exited with 7: crashed" in warnings[0]
    shown = [e for e in events if isinstance(e, HookOutput)]
    assert [(e.hook, e.text) for e in shown] == [("PostToolUse", "\x1b]52;c;aGk=\x07 linted")]
    assert isinstance(events[-1], ResultEvent) and events[-1].stop == "end_turn"
    from rich.console import Console

    from agent_cli.ui.render import Renderer

    out = io.StringIO()
    Renderer(Console(file=out, force_terminal=True, width=100)).handle(shown[0])
    assert "\x1b]52" not in out.getvalue() and "\\x1b]52" in out.getvalue()  # shown, not obeyed


def test_a_posttooluse_block_follows_the_result_for_the_model(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(tmp_path, [rec.spec("PostToolUse", stderr="the build broke", code=2)])
    loop, provider = make_loop(tmp_path, [call("bash", command="echo built"), say("fixing")], hooks)
    list(loop.run("go"))
    result = provider.requests[1].messages[-1].tool_results[0]
    assert result.content.startswith("built") and result.content.endswith(
        "[PostToolUse hook] the build broke"
    )


# -- compaction --------------------------------------------------------------------------


def chat(turns: int, size: int = 4_000) -> list[Message]:
    out: list[Message] = []
    for i in range(turns):
        out += [user(f"request {i}"), assistant(f"answer {i}: " + filler(size, f"p{i}"))]
    return out


def compacts(events: list[Any]) -> list[CompactEvent]:
    return [e for e in events if isinstance(e, CompactEvent)]


def test_precompact_additional_context_ends_the_summary_instruction(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(tmp_path, [rec.spec("PreCompact", '{"additionalContext": "Keep the TODO list."}')])
    engine, _, summarizer = make_engine(tmp_path, gate=hooks.on_pre_compact)
    prepared = engine.prepare([*chat(14), user("go on")], FRAME)
    assert [e.layer for e in compacts(prepared.events)] == ["summarize"]
    (request,) = summarizer.requests
    last = request.messages[-1].content[-1]
    assert isinstance(last, TextBlock) and last.text.endswith("\n\nKeep the TODO list.")
    (seen,) = rec.seen()
    assert (seen["trigger"], seen["layer"], seen["focus"]) == ("auto", "summarize", None)


def test_a_precompact_block_skips_an_automatic_compaction_but_not_the_emergency_layer(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(tmp_path, [rec.spec("PreCompact", stderr="not now", code=2)])
    engine, _, summarizer = make_engine(tmp_path, gate=hooks.on_pre_compact)
    past_trigger = [*chat(14), user("go on")]
    th = engine.thresholds
    assert th.trigger_at <= engine.tokens(past_trigger, FRAME) < th.emergency_at
    prepared = engine.prepare(past_trigger, FRAME)
    assert compacts(prepared.events) == [] and summarizer.requests == []
    said = [note.event for note in hooks.side.take() if isinstance(note, HookEvent)]
    assert [(e.hook, e.text) for e in said if isinstance(e, HookOutput)] == [
        ("PreCompact", "compaction skipped this turn: not now")
    ]
    past_emergency = [*chat(17), user("go on")]
    assert engine.tokens(past_emergency, FRAME) >= th.emergency_at
    prepared = engine.prepare(past_emergency, FRAME)
    assert [e.layer for e in compacts(prepared.events)] == ["emergency"] and summarizer.requests == []
    assert engine.tokens(prepared.messages, FRAME) < th.emergency_at  # no request overflows for a hook


def test_a_requested_compaction_is_not_skipped_and_postcompact_gets_the_record(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    hooks = user_hooks(tmp_path, [rec.spec("PreCompact", stderr="no", code=2), rec.spec("PostCompact")])
    engine, _, summarizer = make_engine(
        tmp_path, FakeSummarizer(["## Goal\nthe  record ✓"]), gate=hooks.on_pre_compact
    )
    loop, _ = make_loop(tmp_path, [], hooks, context=engine)
    loop.history = chat(3)
    events: list[Event] = list(loop.compact("the parser"))
    (event,) = compacts(events)
    assert event.layer == "manual" and len(summarizer.requests) == 1
    assert any(isinstance(e, WarningEvent) and "requested compaction" in e.message for e in events)
    pre, post = rec.seen()
    assert (pre["trigger"], pre["layer"], pre["focus"]) == ("manual", "manual", "the parser")
    summary = loop.history[0].summary
    assert summary is not None and post["record"] == summary.text == event.summary
    assert "## Goal\nthe  record ✓" in post["record"]
    assert Path(post["archived"]).is_file() and post["archived"].startswith(str(tmp_path))
    assert (post["tokens_before"], post["tokens_after"]) == (event.tokens_before, event.tokens_after)


# -- approval of a project's hooks ----------------------------------------------------------


def test_project_hooks_are_asked_for_once_and_the_users_own_never(tmp_path: Path) -> None:
    approvals = ProjectApprovals(tmp_path / "state" / "approvals.json", tmp_path)
    mine = HookSpec("Stop", "notify-send done")
    theirs = HookSpec("PreToolUse", "./hooks/check.sh\x1b[2K", project=True, where="/p/.agent/config.toml:3")
    asked: list[tuple[str, dict[str, Any]]] = []

    def ask(name: str, args: Any, always: str | None) -> Any:
        asked.append((name, dict(args)))
        return "yes"

    run, notes = hooks_to_run([mine, theirs], approvals, ask=ask, yes=False)
    assert run == (mine, theirs) and notes == []
    ((name, args),) = asked
    assert name == APPROVE_PROJECT_HOOKS
    assert "./hooks/check.sh\\x1b[2K" in args["question"] and "\x1b" not in args["question"]
    again, _ = hooks_to_run([mine, theirs], approvals, ask=ask, yes=False)
    assert again == (mine, theirs) and len(asked) == 1  # approved once for this project
    headless, notes = hooks_to_run([mine, theirs], approvals, ask=None, yes=False)
    assert headless == (mine, theirs) and notes == []


def test_the_hooks_question_says_a_project_file_a_hook_runs_is_not_pinned(tmp_path: Path) -> None:
    """Issue 35: a hook approved as `./hooks/check.sh` runs the script as it is each time."""
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "check.sh").write_text("#!/bin/sh\n")
    (tmp_path / "lint.py").write_text("")
    approvals = ProjectApprovals(tmp_path / "state" / "approvals.json", tmp_path)
    specs = [
        HookSpec("PreToolUse", "./hooks/check.sh --strict", project=True),
        HookSpec("Stop", "python3 lint.py --config=hooks/check.sh 'unbalanced", project=True),
        HookSpec("Stop", "notify-send done", project=True),
    ]
    asked: list[str] = []
    hooks_to_run(
        specs, approvals, ask=lambda name, args, always: asked.append(args["question"]) or "no", yes=False
    )
    lines = asked[0].splitlines()
    assert lines[2] == (
        "    It runs ./hooks/check.sh, a file in this project: the approval covers the command, not the "
        "file, which runs as it is each time the hook runs."
    )
    assert lines[4].startswith("    It runs lint.py, hooks/check.sh, files in this project:")
    assert lines[5].startswith("  Stop: notify-send done") and len(lines) == 7


def test_unapproved_project_hooks_are_skipped_headless_with_one_line_unless_yes(tmp_path: Path) -> None:
    approvals = ProjectApprovals(tmp_path / "state" / "approvals.json", tmp_path)
    mine = HookSpec("Stop", "notify-send done")
    theirs = [HookSpec("PreToolUse", f"./check{i}.sh", project=True) for i in range(2)]
    run, notes = hooks_to_run([mine, *theirs], approvals, ask=None, yes=False)
    assert run == (mine,) and len(notes) == 1 and "2 project hooks" in notes[0] and "--yes" in notes[0]
    run, notes = hooks_to_run([mine, *theirs], approvals, ask=None, yes=True)
    assert run == (mine, *theirs) and notes == []
    refused, notes = hooks_to_run([mine, *theirs], approvals, ask=lambda *a: "no", yes=False)
    assert refused == (mine,) and "not approved" in notes[0]


def test_a_record_made_ahead_asks_the_hook_once_and_carries_its_context(tmp_path: Path) -> None:
    from concurrent.futures import Future

    def now(work: Any) -> Future[Any]:  # the record is made at once, before the next request
        future: Future[Any] = Future()
        future.set_result(work())
        return future

    rec = Recorder(tmp_path)
    hooks = user_hooks(tmp_path, [rec.spec("PreCompact", '{"additionalContext": "Mind the cache."}')])
    engine, _, summarizer = make_engine(tmp_path, submit=now, window=80_000, gate=hooks.on_pre_compact)
    history: list[Message] = [user("Refactor the parser.")]
    for n in range(200):
        history += [
            user(f"step {n}\n" + filler(1_200, f"u{n}")),
            assistant(f"done {n}\n" + filler(800, f"a{n}")),
        ]
        prepared = engine.prepare(history, FRAME)
        if compacts(prepared.events):
            break
        history = prepared.messages
    (event,) = compacts(prepared.events)
    assert event.layer == "summarize" and event.ahead
    (request,) = summarizer.requests
    last = request.messages[-1].content[-1]
    assert isinstance(last, TextBlock) and last.text.endswith("\n\nMind the cache.")
    assert [s["event"] for s in rec.seen()] == ["PreCompact"]

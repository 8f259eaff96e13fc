"""Recall end to end: the phrase a stub or a record suggests finds the original output.

Through `ContextEngine` with a real `Archive` over a session directory that the real
`SessionLog` writes (records `{"rid", "ts", "kind": "message", "message": {...}}`), as in a
session: messages are logged as they happen, then L0 and L1 act on the history.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_context_fakes import FRAME, assistant, filler, make_engine, user

from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.store.archive import Archive
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.testing.scripted import ScriptedProvider, say
from agent_cli.testing.scripted import call as scripted_call


def call(use_id: str, name: str, args: dict[str, object], output: str) -> list[Message]:
    use = ToolUse(use_id, name, args)
    return [Message("assistant", (use,)), Message("user", (ToolResult(use_id, output),))]


def test_every_stub_phrase_recalls_exactly_the_output_it_replaced(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, redactor=Redactor([]), meta={"model": "test"})
    # Room for one output in a recall answer.
    engine, _, _ = make_engine(tmp_path, archive=Archive(log.dir), recall_max_chars=8_000)
    history = [user("read the modules")]
    originals: dict[str, str] = {}
    # Ids where one is a prefix of another, and one file read twice with different content.
    originals["toolu_12"] = "F\nE   KeyError: 'id'\n" + filler(6_500, "pt") + "\n[exit code 1]"
    history += call("toolu_12", "bash", {"command": "pytest -q"}, originals["toolu_12"])
    for n, path in [
        (1, "src/m0.py"),
        (2, "src/m1.py"),
        (3, "src/m2.py"),
        (4, "src/m4.py"),
        (11, "src/m3.py"),
    ]:
        originals[f"toolu_{n}"] = f"# {path} version 1\n" + filler(6_500, f"w{n}")
        history += call(f"toolu_{n}", "read_file", {"path": path}, originals[f"toolu_{n}"])
    history += call(
        "toolu_21", "read_file", {"path": "src/m0.py"}, "# src/m0.py version 2\n" + filler(6_500, "v2")
    )
    history.append(assistant("read them"))
    for message in history:
        log.log_message(message)

    prepared = engine.prepare(history, FRAME)
    assert [getattr(e, "layer", None) for e in prepared.events] == ["clear"]
    stubs = {
        r.tool_use_id: r.content
        for m in prepared.messages
        for r in m.tool_results
        if r.content.startswith("[cleared")
    }
    assert {"toolu_12", "toolu_1", "toolu_2", "toolu_3"} <= set(stubs) <= set(originals)
    for use_id, stub in stubs.items():
        match = re.search(r"recall\((\"[^\"]*\")\)", stub)
        assert match is not None, stub
        found = engine.recall(json.loads(match.group(1)))
        assert originals[use_id] in found, f"{use_id}: the stub's phrase does not bring the output back"
        others = [o for k, o in originals.items() if k != use_id]
        assert not any(o in found for o in others)
    # A phrase from inside a cleared output finds it too; the newer read does not hide the old one.
    assert "KeyError: 'id'" in engine.recall("KeyError")
    assert "version 1" in engine.recall("src/m0.py version 1")


def test_recall_of_a_capped_output_by_id_returns_the_full_text(tmp_path: Path) -> None:
    log = SessionLog.create(tmp_path, redactor=Redactor([]), meta={"model": "test"})
    engine, _, _ = make_engine(tmp_path, archive=Archive(log.dir), recall_max_chars=50_000)
    use = ToolUse("call_7", "bash", {"command": "make"})
    output = "".join(f"step {i} ok\n" for i in range(2_000)) + "[exit code 0]"
    capped, event = engine.ingest(use, ToolResult(use.id, output))
    assert event is not None and "step 1000 ok" not in capped.content
    log.log_message(Message("assistant", (use,)))
    log.log_message(Message("user", (capped,)))  # the session log holds the capped result
    found = engine.recall("call_7")
    assert output in found and "cut here to save context" not in found  # the full text, once


def test_recall_does_not_find_its_own_calls(tmp_path: Path) -> None:
    store = Archive(tmp_path, searcher="recall")
    use = ToolUse("toolu_r1", "recall", {"query": "NOPE-NOTHING"})
    result = ToolResult("toolu_r1", "earlier passages mentioning NOPE-NOTHING")
    store.write_span([Message("assistant", (use,)), Message("user", (result,))], "x")
    found = store.search("NOPE-NOTHING", 4_000)
    assert found.startswith("Nothing is saved") and "earlier passages" not in found


def _first_passage(answer: str) -> str:
    return answer.split("\n\n[")[0]


def test_a_question_in_the_users_words_is_answered_by_what_left_the_context_not_by_itself(
    tmp_path: Path,
) -> None:
    """The user asks in their own words; the model passes those words to recall. The question was
    logged just before, in the request the model is answering: it matches its own words best, so
    recall answered with the question before the passage that holds the answer. What the request
    still holds as it was is left out; the output L1 cleared is found, first."""
    log = SessionLog.create(tmp_path, redactor=Redactor([]), meta={"model": "test"})
    engine, _, _ = make_engine(tmp_path, archive=Archive(log.dir, searcher="recall"), recall_max_chars=8_000)
    config = "[server]\nhost = '0.0.0.0'\nport = 8431\nworkers = 4\n" + filler(6_000, "opt")
    history = [user("Get the service ready for the release.")]
    history += call("toolu_1", "read_file", {"path": "deploy/service.toml"}, config)
    for n in range(2, 8):
        history += call(f"toolu_{n}", "read_file", {"path": f"src/m{n}.py"}, filler(6_500, f"w{n}"))
    history.append(assistant("Read them."))
    for message in history:
        log.log_message(message)
    prepared = engine.prepare(history, FRAME)
    assert [str(getattr(e, "layer", None)) for e in prepared.events] == ["clear"]
    assert all(config not in r.content for m in prepared.messages for r in m.tool_results)

    question = "which port does the server listen on when the service is deployed?"
    asked = user(question)
    log.log_message(asked)
    request = engine.prepare([*prepared.messages, asked], FRAME).messages
    assert request[-1] is asked
    engine.observe(FRAME, request, Usage(input_tokens=3_000))
    use = ToolUse("toolu_r", "recall", {"query": question})
    log.log_message(Message("assistant", (use,)))

    found = engine.recall(question)
    assert question not in found, "the question the model is reading came back as the answer"
    assert "port = 8431" in _first_passage(found)
    # What is still in the request is left out, the question's neighbours too; the cleared
    # output is found all the same, and by its call's id as ever.
    assert "Get the service ready" not in engine.recall("get the service ready for the release")
    assert "port = 8431" in engine.recall("toolu_1")


def test_recall_leaves_out_only_the_messages_given_as_visible(tmp_path: Path) -> None:
    store = Archive(tmp_path, searcher="recall")
    seen = Message.user("where is the retry limit for the uploader set?")
    kept = call("toolu_9", "read_file", {"path": "uploader.cfg"}, "retry_limit = 7\nbackoff = 2s\n")
    store.write_span([seen, *kept], "x")
    assert "where is the retry" in store.search("retry limit uploader", 4_000)
    found = store.search("retry limit uploader", 4_000, visible={seen.id})
    assert "where is the retry" not in found and "retry_limit = 7" in _first_passage(found)
    everything = {seen.id, *(m.id for m in kept)}
    assert store.search("retry limit uploader", 4_000, visible=everything).startswith("Everything saved")
    assert "retry_limit = 7" in store.search("toolu_9", 4_000, visible=everything)  # by id, still


def test_in_a_session_recall_called_with_the_users_words_does_not_answer_with_them(tmp_path: Path) -> None:
    """The wiring, through the real loop, log, engine and archive: the request the provider saw
    is what recall leaves out. After /clear the file read before is out of the context, so it is
    found; the question the user just asked is in it, so it is not."""
    (tmp_path / "service.toml").write_text("[server]\nport = 8431\nworkers = 4\n")
    question = "which port does the server listen on?"
    script = [
        scripted_call("read_file", path="service.toml"),
        say("Read it."),
        scripted_call("recall", query=question),
        say("8431."),
    ]
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-recall-0000", "HOME": "/nonexistent-home"}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state")}
    settings = load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-4-6"), cwd=tmp_path)
    providers: list[ScriptedProvider] = []

    def make(p: object) -> ScriptedProvider:
        providers.append(ScriptedProvider(script, model=getattr(p, "model", "") or ""))
        return providers[-1]

    session = open_session(settings, env=env, make_provider=make)
    try:
        list(session.run("read service.toml"))
        session.clear()
        list(session.run(question))
    finally:
        session.close()
    answer = providers[-1].requests[-1].messages[-1].tool_results[0].content
    assert "port = 8431" in answer
    assert question not in answer, "recall answered with the question the model was reading"

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

from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.store.archive import Archive
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog


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

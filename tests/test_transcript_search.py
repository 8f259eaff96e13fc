"""One search over `.transcripts/`: recall and `agent transcripts search` read the same records.

`agent transcripts search` lists the records holding the query as typed, newest first; recall
ranks passages by the query's words, those holding it as typed first.

A session written by the real `SessionLog` and `Archive` holds what the search must find (messages
in the log and in a span, a tool result, a saved output) and what it must leave out: recall's own
call and result, thinking, a history checkpoint, copies in tool and answer events, the meta record,
a file nobody of agent-cli wrote. Recall runs through the tool (`Recall.run` -> the engine -> the
archive); the command through `cli.transcripts_command`, its printed lines read back.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_context_fakes import make_engine

from agent_cli.cli import transcripts_command
from agent_cli.core.events import AssistantText, CompactEvent, ToolCallEvent, ToolResultEvent, WarningEvent
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.core.thought_blocks import ThinkingBlock
from agent_cli.store.archive import Archive
from agent_cli.store.layout import SESSION_FILE
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.session_search import search_session
from agent_cli.tools.base import ToolContext
from agent_cli.tools.context_tools import Recall

HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_HEADER = re.compile(r"^\[(\S+) · (\S+)\]$", re.MULTILINE)


def _session(root: Path) -> tuple[SessionLog, dict[str, tuple[str, str]]]:
    """A session holding ZORBLAX in every place; the records the search must find, by name."""
    log = SessionLog.create(root, redactor=Redactor([]), meta={"model": "m", "cwd": "/p/zorblax"})
    archive = Archive(log.dir)
    ask = Message.user("please find the ZORBLAX bug 検索する")
    grep = ToolUse("toolu_g", "bash", {"command": "grep -rn zorblax src"})
    call = Message(
        "assistant", (ThinkingBlock("thinking of zorblax", "sig"), TextBlock("Looking for zorblax."), grep)
    )
    result = Message("user", (ToolResult("toolu_g", "src/z.py:3: ZORBLAX = 1\nsrc/y.py:9: other"),))
    recall = ToolUse("toolu_r", "recall", {"query": "zorblax"})
    recalled = Message("user", (ToolResult("toolu_r", "[session.jsonl · x]\nZORBLAX = 1"),))
    older = Message.user("an older talk of Zorblax, kept only in the span")
    archive.write_span([ask, older], "summarize")  # `ask` is in the log too: one record
    output = archive.write_output(
        "toolu_g", "line 1\nline 2\nsrc/z.py:3: ZORBLAX = 1", header="[full output of bash · id toolu_g]"
    )
    for message in (ask, call, result):
        log.log_message(message)
    log.log_event(ToolCallEvent(id="toolu_g", name="bash", input={"command": "grep -rn zorblax src"}))
    log.log_event(
        ToolResultEvent(id="toolu_g", name="bash", content="ZORBLAX = 1", is_error=False, duration=0)
    )
    log.log_message(Message("assistant", (recall,)))
    log.log_message(recalled)
    log.log_history([Message.user("[cleared: recall('zorblax')]")], "compaction")
    log.log_event(WarningEvent(message="zorblax warned"))
    log.log_event(
        CompactEvent(
            layer="summarize",
            trigger="auto",
            messages_before=5,
            messages_after=1,
            tokens_before=9,
            tokens_after=1,
            summary="talked about ZORBLAX",
        )
    )
    answer = Message.assistant("ZORBLAX is defined in src/z.py")
    log.log_message(answer)
    log.log_event(AssistantText(text="ZORBLAX is defined in src/z.py"))
    log.close()
    (log.dir / "notes.txt").write_text("zorblax in a file agent-cli did not write")
    # As in a session: the span and the output were written before the log's last line.
    for second, path in enumerate([log.dir / "span-001-summarize.jsonl", output, log.path], 1):
        os.utime(path, ns=(second * 10**9, second * 10**9))
    records = {
        "ask": (SESSION_FILE, ask.id),
        "call": (SESSION_FILE, call.id),
        "result": (SESSION_FILE, result.id),
        "answer": (SESSION_FILE, answer.id),
        "older": ("span-001-summarize.jsonl", older.id),
        "output": (output.name, ""),
    }
    return log, records


def _recalled(root: Path, log: SessionLog, query: str) -> list[tuple[str, str]]:
    """The records recall's answer quotes, in its order (a saved output by its file)."""
    engine, _, _ = make_engine(root, archive=Archive(log.dir, searcher="recall"), recall_max_chars=100_000)
    out = Recall().run({"query": query}, ToolContext(root, recall=engine.recall))
    assert not out.is_error, out.content
    found: list[tuple[str, str]] = []
    for file, ref in _HEADER.findall(out.content):
        where = (file, "" if file.startswith("output-") else ref)
        if where not in found:
            found.append(where)
    return found


def _listed(root: Path, query: str, capsys: pytest.CaptureFixture[str]) -> tuple[list[tuple[str, str]], str]:
    """The records `agent transcripts search` prints, in its order, without the log's events."""
    code = transcripts_command("search", query, cwd=root)
    shown = capsys.readouterr()
    assert code == (0 if shown.out else 1), shown
    found: list[tuple[str, str]] = []
    for line in shown.out.splitlines():
        if line.startswith("    "):
            continue
        _, kind, rid, *file = line.split()
        name = file[0].strip("()") if file else SESSION_FILE
        if not kind.startswith("event/"):
            found.append((name, "" if kind == "output" else rid))
    return found, shown.out


@pytest.mark.parametrize(
    "query", ["zorblax", "ZORBLAX = 1", "grep -rn", "toolu_g", "検索する", "src/y.py", "nowhere-at-all"]
)
def test_recall_returns_first_what_transcripts_search_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    log, records = _session(tmp_path)
    listed, _ = _listed(tmp_path, query, capsys)
    # Recall returns one copy of a call's result (the fullest), titled by the call: the saved
    # output, the result as sent and the call are one.
    one = {records["output"]: records["result"], records["call"]: records["result"]}
    folded = list(dict.fromkeys(one.get(r, r) for r in listed))
    recalled = list(dict.fromkeys(one.get(r, r) for r in _recalled(tmp_path, log, query)))
    assert sorted(recalled[: len(folded)]) == sorted(folded)


def test_what_the_search_finds_and_leaves_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log, records = _session(tmp_path)
    newest_first = ["answer", "result", "call", "ask", "output", "older"]
    recalled = _recalled(tmp_path, log, "zorblax")  # one copy of the grep's result: the longer
    assert sorted(recalled) == sorted(records[name] for name in newest_first if name != "output")
    listed, out = _listed(tmp_path, "zorblax", capsys)
    assert listed == [records[name] for name in newest_first]
    # The person sees the compaction and the warning too; nothing of the recall call, the
    # checkpoint, thinking, the copies in events, the meta record, or notes.txt.
    kinds = [line.split()[1] for line in out.splitlines() if not line.startswith("    ")]
    assert kinds.count("event/compact") == 1 and kinds.count("event/warning") == 1 and len(kinds) == 8
    assert "notes.txt" not in out and "cleared" not in out and "thinking" not in out
    # A call's id finds its results and nothing else, the full saved output first.
    assert _recalled(tmp_path, log, "toolu_g") == [records["output"]]
    found = search_session(log.dir, "TOOLU_G")
    assert [(m.doc.kind, m.by_id) for m in found.matches] == [("output", True)]


def test_transcripts_search_sends_no_control_character_to_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = SessionLog.create(tmp_path, redactor=Redactor([]), meta={"model": "m"})
    archive = Archive(log.dir)
    use = ToolUse("toolu_1", "bash", {"command": f"echo '{HOSTILE}' MARKER"})
    log.log_message(Message.user(f"MARKER {HOSTILE}"))
    log.log_message(Message("assistant", (use,)))
    log.log_message(Message("user", (ToolResult("toolu_1", f"{HOSTILE}\nMARKER\r{HOSTILE}"),)))
    log.log_event(WarningEvent(message=f"MARKER {HOSTILE}"))
    log.close()
    archive.write_output("toolu_1", f"MARKER {HOSTILE}", header=f"[full output of {HOSTILE}]")
    # A file planted in the folder whose name is an escape sequence: its name is printed too.
    (log.dir / f"span-009-{HOSTILE}.jsonl").write_text(json.dumps(Message.user("MARKER").to_json()))
    planted = log.dir / f"output-010-{HOSTILE}.txt"
    planted.write_text(f"[title {HOSTILE}]\nMARKER {HOSTILE}")
    assert transcripts_command("search", "MARKER", cwd=tmp_path) == 0
    shown = capsys.readouterr()
    assert "\\x1b]52;c;" in shown.out and shown.out.count("MARKER") >= 5
    assert RAW.findall(shown.out) == [] and RAW.findall(shown.err) == []
    # The query itself is the person's, but an unmatched one is echoed back safe as well.
    assert transcripts_command("search", f"nothing {HOSTILE}", cwd=tmp_path) == 1
    shown = capsys.readouterr()
    assert shown.out == "" and "no match" in shown.err and RAW.findall(shown.err) == []


def test_a_file_linked_into_a_session_folder_is_not_read_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, records = _session(tmp_path / "project")
    outside = tmp_path / "id_rsa"
    outside.write_text("[title]\nZORBLAX private key")
    (log.dir / "output-050-key.txt").symlink_to(outside)
    assert "output-050-key.txt" not in {file for file, _ in _recalled(tmp_path, log, "private key")}
    recalled = _recalled(tmp_path, log, "zorblax")
    assert sorted(recalled) == sorted(r for name, r in records.items() if name != "output")
    assert _listed(tmp_path / "project", "private key", capsys)[0] == []

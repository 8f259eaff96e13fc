"""The user in charge of the context, in the REPL through a pseudo-terminal, against the fake server:
a `# ` line and /pin put an instruction in every request (and /unpin takes it out), /record edit
with an editor that rewrites a line puts that text in the next request byte for byte, and
/uncompact right after /compact sends the conversation as it was before it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_env
from tests.e2e import user_texts as texts
from tests.reliability.procs import expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e

RECORD = "## Goal\nsay hello twice\n## Decisions\nTHE LINE TO CHANGE\n## Next\nwait"
EDITED_LINE = "the line the user wrote  ✓"


def answer(request: RecordedRequest) -> Reply:
    if is_summary_request(request.body):
        return Reply(RECORD)
    return Reply("Hello from the model.")


FAKE_SERVER = {"responder": answer}


def start(tmp_path: Path, server: FakeModelServer, **extra: str) -> Any:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = agent_env(tmp_path / "home", server)
    env.update(TERM="xterm-256color", **extra)
    child = spawn_repl(project, env)
    expect(child, "auto-compact at ")
    return child


def say(child: Any, line: str, reply: str = "Hello from the model") -> None:
    child.send(line + "\r")
    expect(child, reply)


def turns(server: FakeModelServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.api != "models" and not is_summary_request(r.body)]


def system(request: RecordedRequest) -> str:
    value = request.body["system"]
    return value if isinstance(value, str) else "".join(b["text"] for b in value)


def test_a_hash_line_pins_and_unpin_takes_it_out(tmp_path: Path, fake_server: FakeModelServer) -> None:
    child = start(tmp_path, fake_server)
    try:
        child.send("# never use tabs, ever\r")
        expect(child, "pinned as 1")
        say(child, "hi")
        child.send("/pin --project keep replies short\r")
        expect(child, "saved to")
        child.send("/pins\r")
        expect(child, "2. keep replies short")
        child.send("/clear\r")
        expect(child, "pins stay")
        say(child, "again")
        child.send("/unpin 1\r")
        expect(child, "unpinned: never use tabs, ever")
        say(child, "third")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    first, second, third = turns(fake_server)
    assert "never use tabs, ever" in system(first) and "keep replies short" not in system(first)
    assert texts(first) == ["hi"], "a pin is not a message"
    assert "never use tabs, ever" in system(second) and "keep replies short" in system(second)
    assert "never use tabs, ever" not in system(third) and "keep replies short" in system(third)
    assert (tmp_path / "project/.agent/pins.md").read_text().splitlines()[-1] == "- keep replies short"


def test_record_edit_puts_the_edited_record_in_the_next_request_byte_for_byte(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    editor = tmp_path / "edit.py"
    editor.write_text(
        "import sys\n"
        "path = sys.argv[-1]\n"
        "text = open(path, encoding='utf-8', newline='').read()\n"
        f"text = text.replace('THE LINE TO CHANGE', {EDITED_LINE!r})\n"
        "open(path, 'w', encoding='utf-8', newline='').write(text)\n"
    )
    child = start(tmp_path, fake_server, EDITOR=f"{sys.executable} {editor}", VISUAL="")
    try:
        say(child, "first")
        say(child, "second")
        child.send("/compact\r")
        expect(child, "/uncompact undoes it")
        child.send("/record\r")
        expect(child, "the summary model")
        child.send("/record edit\r")
        expect(child, "the edited record is in the context")
        say(child, "third")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    last = turns(fake_server)[-1]
    records = [t for t in texts(last) if t.startswith("Condensed record")]
    assert len(records) == 1 and RECORD.replace("THE LINE TO CHANGE", EDITED_LINE) in records[0]
    original = next(e for e in _log_events(tmp_path) if e.get("type") == "compact")["summary"]
    assert records[0] == original.replace("THE LINE TO CHANGE", EDITED_LINE), "byte for byte"


def test_uncompact_right_after_compact_sends_the_conversation_as_it_was(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    child = start(tmp_path, fake_server)
    try:
        say(child, "first")
        say(child, "second")
        child.send("/compact\r")
        expect(child, "/uncompact undoes it")
        child.send("/uncompact\r")
        expect(child, "compaction undone: 4 messages are back")
        say(child, "third")
        child.send("/uncompact\r")
        expect(child, "nothing to undo")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    before, after = turns(fake_server)[1], turns(fake_server)[2]
    sent = after.body["messages"]
    # The same messages in the same order (where the prompt-cache breakpoint sits aside).
    assert uncached(sent[:3]) == uncached(before.body["messages"])
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert texts(after) == ["first", "second", "third"]


def uncached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [uncached(v) for v in value]
    return value


def _log_events(tmp_path: Path) -> list[dict[str, Any]]:
    logs = list((tmp_path / "project/.transcripts").glob("*/session.jsonl"))
    assert len(logs) == 1
    lines = [json.loads(line) for line in logs[0].read_text().splitlines()]
    return [line["event"] for line in lines if line.get("kind") == "event"]

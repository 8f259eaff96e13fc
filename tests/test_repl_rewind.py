"""/rewind through a pseudo-terminal, as a user drives it: `agent --yes` against the fake model server.

Three prompts write, edit and (through bash) delete files. Esc Esc at the empty prompt lists the
three prompts with what each changed, to choose from (Esc leaves it, nothing changed); choosing
prompt 2 and "the conversation and the files" puts every file back as it was before prompt 2
and brings prompt 2's text back into the input line; the user edits it and sends it, and that
request holds only the conversation before prompt 2. `/rewind 99` is one line, no traceback.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from tests.e2e import agent_env
from tests.reliability.procs import ANSI, expect

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e


CALLS = {
    "first": [ToolCallSpec("write_file", {"path": "notes.txt", "content": "v1\n"})],
    "second": [
        ToolCallSpec("edit_file", {"path": "notes.txt", "old_string": "v1", "new_string": "v2"}),
        ToolCallSpec("write_file", {"path": "extra.txt", "content": "extra\n"}),
    ],
    "third": [ToolCallSpec("bash", {"command": "rm notes.txt app.py"})],
}


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [str(b.get("text")) for b in content or [] if b.get("type") == "text"]


def respond(request: RecordedRequest) -> Reply:
    messages = request.body.get("messages") or []
    prompt = next((t[0] for m in reversed(messages) if m.get("role") == "user" and (t := _texts(m))), "")
    last = messages[-1].get("content") if messages else None
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return Reply(f"Done with the {prompt.split(':')[0]} prompt.")
    word = prompt.split(":")[0]
    if word in CALLS and "again" not in prompt:
        return Reply("", tool_calls=CALLS[word])
    return Reply("A plain answer.")


FAKE_SERVER = {"responder": respond}
UP, ESC = "\x1b[A", "\x1b"


def test_rewinding_to_prompt_2_restores_the_files_and_the_conversation_before_it(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from agent_cli.cli import main; main()", "--yes"],
        cwd=str(project),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=90,
    )
    try:
        expect(child, "auto-compact at ")
        child.send("first: write the notes\r")
        expect(child, "Done with the first prompt")
        child.send("second: edit the notes\r")
        expect(child, "Done with the second prompt")
        child.send("third: remove them\r")
        expect(child, "Done with the third prompt")
        assert not (project / "notes.txt").exists() and not (project / "app.py").exists()
        assert (project / "extra.txt").read_text() == "extra\n"

        child.send("\x1b\x1b")  # Esc Esc at the empty prompt: the list to choose from
        listing = expect(
            child, r"3  third: remove them  · changed app\.py, notes\.txt; ran rm notes\.txt app\.py"
        )
        assert re.search(r"1  first: write the notes  · changed notes\.txt", listing)
        assert re.search(r"2  second: edit the notes  · changed extra\.txt, notes\.txt", listing)
        child.send(ESC)
        expect(child, "nothing rewound")
        assert (project / "extra.txt").exists()

        child.send("/rewind 99\r")
        expect(child, "no prompt 99: this session has 3 prompts")
        child.send("\x1b\x1b")
        expect(child, "3  third: remove them")
        child.send(UP + "\r")  # prompt 2 (the newest, 3, is marked first)
        expect(child, "the files only")
        child.send("\r")  # the conversation and the files
        expect(child, "conversation rewound to before prompt 2")
        expect(child, "second: edit the notes")  # back in the input line
        assert (project / "notes.txt").read_text() == "v1\n"
        assert (project / "app.py").read_text() == "print('hi')\n"
        assert not (project / "extra.txt").exists()

        child.send(", again\r")  # the user edits the prompt that came back, and sends it
        expect(child, "A plain answer")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert "Traceback" not in ANSI.sub("", child.before or "")
    sent = fake_server.requests[-1].body["messages"]
    texts = [t for m in sent for t in _texts(m)]
    assert texts[0] == "first: write the notes" and texts[-1] == "second: edit the notes, again"
    assert "second: edit the notes" not in texts[:-1] and not any(t.startswith("third") for t in texts)
    calls = [b["name"] for m in sent for b in m["content"] if isinstance(b, dict) and b["type"] == "tool_use"]
    assert calls == ["write_file"]  # only prompt 1's turn is in the conversation

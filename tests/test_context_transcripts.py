"""The transcript store: private files on disk, and recall over them and the session log."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from test_context_fakes import assistant, tool_round, user

from agent_cli.core.messages import Message
from agent_cli.store.archive import Archive


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_write_span_is_private_jsonl_of_messages(tmp_path: Path) -> None:
    store = Archive(tmp_path / ".transcripts" / "abc")
    span = [user("hello"), *tool_round("read_file", {"path": "a.py"}, "print(1)")]
    path = store.write_span(span, "Summarize!")
    assert path.parent == store.session_dir and path.name == "span-001-summarize.jsonl"
    assert _mode(store.session_dir) == 0o700 and _mode(path) == 0o600
    back = [Message.from_json(json.loads(line)) for line in path.read_text().splitlines()]
    assert back == span
    second = store.write_span([user("x")], "clear")
    assert second.name == "span-002-clear.jsonl"
    out = store.write_output("toolu_1", "full text")
    assert out.name == "output-003-toolu-1.txt" and _mode(out) == 0o600
    (store.session_dir / "session.jsonl").write_text("")
    (store.session_dir / "notes.txt").write_text("not ours")
    assert store.files() == [store.session_dir / "session.jsonl", path, second, out]


def test_nothing_is_written_until_asked(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    assert not (tmp_path / "s").exists()
    assert store.files() == []
    assert "Nothing is saved" in store.search("anything", 1_000)


def _session_log(store: Archive, messages: list[Message]) -> None:
    """The session log's format: one record per line, messages under "message"."""
    store.session_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"rid": f"r{i}", "ts": 1.0, "kind": "message", "message": m.to_json()})
        for i, m in enumerate(messages)
    ]
    lines.insert(1, json.dumps({"rid": "e1", "ts": 1.0, "kind": "event", "event": {"type": "usage"}}))
    (store.session_dir / "session.jsonl").write_text("\n".join(lines) + "\n")


def test_recall_returns_verbatim_passages_with_their_record_ids(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    body = (
        "\n".join(f"line {i}" for i in range(100))
        + "\nNEEDLE in a haystack\n"
        + "\n".join(f"after {i}" for i in range(100))
    )
    conv = [user("find it"), *tool_round("bash", {"command": "cat big.log"}, body), assistant("found")]
    _session_log(store, conv)
    out = store.search("needle IN a", 10_000)
    assert "NEEDLE in a haystack" in out and "[session.jsonl · r2]" in out
    assert "line 99" in out and "after 4" in out  # a window of lines around the hit
    assert "line 10\n" not in out and "after 50" not in out
    assert "[result of bash" in out  # titled with the call that produced it


def test_recall_on_a_call_returns_its_whole_result(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    content = "\n".join(f"def f{i}(): pass" for i in range(40))
    store.write_span([user("read"), *tool_round("read_file", {"path": "src/a.py"}, content)], "clear")
    out = store.search("src/a.py", 10_000)
    assert "def f0(): pass" in out and "def f39(): pass" in out


def test_recall_newest_first_dedupes_and_caps(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    old = [user(f"token-{i} old mention") for i in range(3)]
    store.write_span(old, "summarize")
    new = [user("token-x newest mention")]
    _session_log(store, old + new)  # the same messages in the log and the span file
    later = store.session_dir / "session.jsonl"
    os.utime(later, ns=(later.stat().st_mtime_ns + 10**9, later.stat().st_mtime_ns + 10**9))
    out = store.search("mention", 10_000)
    assert out.index("newest") < out.index("token-2") < out.index("token-0")
    assert out.count("token-1 old mention") == 1  # the span file's copy is the same message
    capped = store.search("mention", 90)
    assert "more passages for 'mention' not shown" in capped and len(capped) < 300


def test_recall_finds_the_cut_part_of_a_capped_output(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    store.write_output("toolu_9", "head\n" + "x\n" * 500 + "the MIDDLE secret\n" + "y\n" * 500)
    out = store.search("middle secret", 2_000)
    assert "the MIDDLE secret" in out and "toolu_9" in out


def test_recall_needs_a_phrase(tmp_path: Path) -> None:
    assert "needs a phrase" in Archive(tmp_path).search("   ", 100)


def test_secrets_are_redacted_before_reaching_disk(tmp_path: Path) -> None:
    from agent_cli.store.redact import Redactor

    key = "sk-ant-api03-STORECANARY0123456789abcdefghij"
    store = Archive(tmp_path / "s", redactor=Redactor([key]))
    out = store.write_output("toolu_1", f"ANTHROPIC_API_KEY={key}\nother line\n")
    span = store.write_span([Message.user(f"my key is {key}")], "auto")
    for path in (out, span):
        text = path.read_text()
        assert key not in text and "[REDACTED]" in text
    assert "other line" in out.read_text()


def test_a_key_block_without_its_end_line_does_not_swallow_the_span(tmp_path: Path) -> None:
    store = Archive(tmp_path / "s")
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef"
    path = store.write_span([Message.user(pem), Message.user("the second message survives")], "auto")
    lines = path.read_text().splitlines()
    back = [Message.from_json(json.loads(line)) for line in lines]
    assert len(back) == 2 and back[1].text == "the second message survives"
    assert "MIIEowIBAAKCAQEA" not in path.read_text()
    assert "second message survives" in store.search("second message", 4_000)

"""Odd bytes and odd places, end to end: a project directory, a file name, a prompt and stdin that
are not UTF-8; transcripts the user cannot read; flags with values that cannot work. Each ends in a
finished task or one clear line, never a traceback or an "internal error"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.core.text import clean, decode
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools
from tests.e2e import agent_cmd, agent_env, tool_results, without_read_rights

ODD_DIR = b"caf\xe9"  # Latin-1 bytes: not UTF-8
ODD_FILE = b"n\xffme.txt"


def test_clean_replaces_each_undecodable_byte_and_keeps_valid_text() -> None:
    assert clean("plain — «ok» 日本") == "plain — «ok» 日本"
    assert clean(os.fsdecode(b"caf\xe9/x")) == "caf\ufffd/x"
    assert clean("a\ud800b") == "a\ufffd\ufffd\ufffdb" or clean("a\ud800b").count("\ufffd") >= 1
    assert "\ufffd" in clean(os.fsdecode(b"\xff\xfe")) and clean(os.fsdecode(b"\xff\xfe")).isprintable()
    assert decode(b"fix \xff\xfe") == "fix \ufffd\ufffd"


def _odd_project(tmp_path: Path) -> bytes:
    project = os.fsencode(tmp_path) + b"/" + ODD_DIR
    os.makedirs(project)
    with open(project + b"/" + ODD_FILE, "wb") as f:
        f.write(b"hello from the odd file\n")
    with open(project + b"/ok.txt", "wb") as f:
        f.write(b"hello from ok\n")
    return project


def _run(
    project: bytes, args: list[bytes], replies: list[Reply], tmp_path: Path, stdin: bytes = b""
) -> tuple[subprocess.CompletedProcess[bytes], FakeModelServer]:
    with FakeModelServer() as server:
        server.queue(*replies)
        env = agent_env(tmp_path / "home", server)
        env["LC_ALL"] = "C.UTF-8"
        cmd = [os.fsencode(a) for a in agent_cmd()] + args
        proc = subprocess.run(cmd, cwd=project, env=env, input=stdin, capture_output=True, timeout=60)
    return proc, server


@pytest.mark.parametrize(
    ("name", "args", "call", "stdin"),
    [
        ("directory", [b"-p", b"say hi"], None, b""),
        ("glob", [b"-p", b"list", b"--yes"], ToolCallSpec("glob", {"pattern": "*"}), b""),
        ("grep", [b"-p", b"find", b"--yes"], ToolCallSpec("grep", {"pattern": "hello"}), b""),
        ("argv", [b"-p", b"fix \xff\xfe please"], None, b""),
        ("stdin", [], None, b"fix \xff\xfe please\n"),
    ],
)
def test_bytes_that_are_not_utf8_end_in_a_finished_task(
    tmp_path: Path, name: str, args: list[bytes], call: ToolCallSpec | None, stdin: bytes
) -> None:
    project = _odd_project(tmp_path)
    replies = [Reply("", tool_calls=[call]), Reply("done")] if call else [Reply("done")]
    proc, server = _run(project, args, replies, tmp_path, stdin)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stdout == b"done\n" and proc.stderr == b""
    system = server.requests[0].body["system"][0]["text"]
    assert "caf\ufffd" in system  # the root as the model reads it
    if call is not None:
        (result,) = [text for text, _ in tool_results(server.requests).values()]
        assert "n\ufffdme.txt" in result and "ok.txt" in result  # the odd name shown, the rest still found
    if name in ("argv", "stdin"):
        sent = server.requests[0].body["messages"][0]["content"]
        text = sent if isinstance(sent, str) else sent[0]["text"]
        assert text == "fix \ufffd\ufffd please"
    logs = list(Path(os.fsdecode(project), ".transcripts").glob("*/session.jsonl"))
    assert len(logs) == 1 and "done" in logs[0].read_text(encoding="utf-8")


def test_grep_and_glob_tools_show_an_odd_name_and_go_on(tmp_path: Path) -> None:
    with open(os.fsencode(tmp_path) + b"/" + ODD_FILE, "wb") as f:
        f.write(b"needle\n")
    (tmp_path / "plain.txt").write_text("needle too\n")
    tools, ctx = default_tools(), ToolContext(root=tmp_path)
    grep = tools.run("grep", {"pattern": "needle"}, ctx)
    assert not grep.is_error and "n\ufffdme.txt:1:needle" in grep.content and "plain.txt:1:" in grep.content
    glob = tools.run("glob", {"pattern": "*.txt"}, ctx)
    assert not glob.is_error and "n\ufffdme.txt" in glob.content and "plain.txt" in glob.content


# -- transcripts the user cannot read ---------------------------------------------------------


@pytest.fixture
def session_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    with FakeModelServer() as server:
        server.queue(Reply("hello back"))
        proc = subprocess.run(
            agent_cmd("-p", "say hello"), cwd=project, env=agent_env(tmp_path / "home", server),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return project


@pytest.mark.parametrize("what", ["log", "folder"])
def test_transcripts_that_cannot_be_read_get_one_line(
    session_project: Path, tmp_path: Path, what: str
) -> None:
    prefix = without_read_rights()
    if prefix is None:
        pytest.skip("running as root without setpriv: file modes cannot deny anything")
    base = session_project / ".transcripts"
    (session,) = [p for p in base.iterdir() if p.is_dir()]  # beside it: .gitignore
    target = session / "session.jsonl" if what == "log" else base
    target.chmod(0)
    try:
        env = agent_env(tmp_path / "home")
        outs = {}
        for args in (["list"], ["show", session.name[:8]], ["search", "hello"]):
            proc = subprocess.run(
                [*prefix, *agent_cmd("transcripts", *args)], cwd=session_project, env=env,
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
            outs[args[0]] = proc
    finally:
        target.chmod(0o700 if what == "folder" else 0o600)
    if what == "log":
        assert (
            outs["list"].returncode == 0 and "(cannot read its log: Permission denied)" in outs["list"].stdout
        )
        assert outs["show"].returncode == 1
        assert (
            outs["show"].stderr.strip()
            == f"agent: cannot read {session / 'session.jsonl'}: Permission denied"
        )
        assert "warning: skipped what cannot be read" in outs["search"].stderr
        assert outs["search"].stderr.strip().endswith("agent: no match for 'hello'")
    else:
        for proc in outs.values():
            assert proc.returncode == 1
            assert proc.stderr.strip() == f"agent: cannot read {base}: Permission denied"


# -- flags that cannot work -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-p", "hi", "--resume", ""], "--resume needs a session id"),
        (["-p", "hi", "--frobnicate"], "agent: no such option: --frobnicate (agent -h lists the flags)"),
        (["-p", "hi", "--context-window", "lots"], "agent: invalid value for '--context-window'"),
        (["-p"], "agent: option '-p' requires an argument"),
        (["-p", "hi", "--resume", "  "], "--resume needs a session id"),
        (
            ["-p", "hi", "--context-window", "100"],
            "context.context_window must be a whole number of tokens, at least 4,096",
        ),
    ],
)
def test_flags_that_cannot_work_are_usage_errors(tmp_path: Path, args: list[str], said: str) -> None:
    with FakeModelServer() as server:
        proc = subprocess.run(
            agent_cmd(*args), cwd=tmp_path, env=agent_env(tmp_path / "home", server),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert server.requests == []  # nothing was sent
    assert proc.returncode == 2
    assert said in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_frame_larger_than_the_window_is_named_as_the_cause(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always follow the house rules carefully. " * 700)
    with FakeModelServer(context_window=5_000) as server:
        server.queue(Reply("hi"))
        proc = subprocess.run(
            # (the project holds the test's home: no sandbox could confine it, a line would say so)
            agent_cmd("-p", "hi", "--context-window", "5000", "--sandbox", "off"), cwd=tmp_path,
            env=agent_env(tmp_path / "home", server), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert "The system prompt and the tool definitions alone take about" in line
    assert "largest message" not in line


def test_a_huge_write_file_call_is_cut_after_it_ran_not_sent_again(tmp_path: Path) -> None:
    import json

    content = "line of generated data 0123456789 abcdefghij\n" * 45_000  # 2 MB
    # 64 KiB stream chunks: the point is the size of the call, not 170,000 SSE events of it.
    with FakeModelServer(context_window=200_000, chunk_chars=65_536) as server:
        call = ToolCallSpec("write_file", {"path": "big.txt", "content": content})
        server.queue(Reply("", tool_calls=[call]), Reply("done"))
        proc = subprocess.run(
            agent_cmd("-p", "write it", "--yes", "--output-format", "stream-json"), cwd=tmp_path,
            env=agent_env(tmp_path / "home", server), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        sizes = [q.input_tokens for q in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "big.txt").read_text() == content  # the call ran in full
    assert len(sizes) == 2 and sizes[1] < 200_000 * 0.5  # the next request did not carry the 2 MB
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (cap,) = [e for e in events if e["type"] == "compact"]
    assert (cap["layer"], cap["trigger"]) == ("cap", "input") and cap["tokens_before"] > 200_000
    saved = Path(cap["transcript"]).read_text()
    assert json.dumps(content)[1:-1] in saved and "write_file" in saved  # the whole call is on disk


def test_a_prompt_four_times_the_window_is_one_line_and_not_sent(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.default = Reply("never")
        proc = subprocess.run(
            # (the project holds the test's home: no sandbox could confine it, a line would say so)
            agent_cmd("--context-window", "100000", "--sandbox", "off"), cwd=tmp_path,
            env=agent_env(tmp_path / "home", server),
            input=b"word " * 400_000, capture_output=True, timeout=60,
        )  # fmt: skip
        assert server.requests == []
    assert proc.returncode == 1
    said = proc.stderr.decode().strip().splitlines()
    assert len(said) == 1 and "its largest message alone is about" in said[0]

"""One writer per session, and a resume that writes only what changed.

Two agents appending to one log at once would interleave their histories; the second one now gets
one line naming the first. A `--continue` of an unchanged session used to add a full-history
checkpoint every time (754 KB grew to 1,366 KB over 20 resumes); now it adds its own messages only.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_cli.core.errors import SessionBusyError
from agent_cli.core.messages import Message
from agent_cli.store.layout import LOCK_FILE
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.testing.fakeserver import (
    FakeModelServer,
    RecordedRequest,
    Reply,
    ScriptItem,
    ToolCallSpec,
)
from tests.e2e import agent_cmd, agent_env, run_agent

META = {"provider": "anthropic", "model": "claude-test", "cwd": "/p", "version": "0.1.0"}


def _new(tmp_path: Path) -> SessionLog:
    return SessionLog.create(tmp_path, redactor=Redactor(), meta=META)


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    log = _new(tmp_path)
    with pytest.raises(
        SessionBusyError, match=rf"session {log.id} is open in another agent \(pid {os.getpid()}\)"
    ):
        SessionLog.open(tmp_path, log.id, redactor=Redactor())
    assert stat.S_IMODE((log.dir / LOCK_FILE).stat().st_mode) == 0o600
    log.close()
    with SessionLog.open(tmp_path, log.id, redactor=Redactor()) as again:  # let go on close
        again.log_message(Message.user("second writer, after the first"))


def test_a_command_the_agent_started_does_not_keep_the_session_busy(tmp_path: Path) -> None:
    log = _new(tmp_path)
    child = subprocess.Popen(["sleep", "30"], close_fds=False)  # inherits what is not close-on-exec
    try:
        log.close()
        SessionLog.open(tmp_path, log.id, redactor=Redactor()).close()
    finally:
        child.kill()
        child.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    log = _new(tmp_path)
    log.close()
    code = (
        "import sys, time; from agent_cli.store.session_log import SessionLog;"
        "from agent_cli.store.redact import Redactor;"
        f"SessionLog.open(sys.argv[1], {log.id!r}, redactor=Redactor());"
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(SessionBusyError, match=f"pid {holder.pid}"):
        SessionLog.open(tmp_path, log.id, redactor=Redactor())
    holder.kill()  # SIGKILL: no clean-up runs, the kernel lets go
    holder.wait()
    SessionLog.open(tmp_path, log.id, redactor=Redactor()).close()


def _records(project: Path) -> list[dict[str, object]]:
    (path,) = (project / ".transcripts").glob("*/session.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_two_continues_at_once_the_second_gets_one_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeModelServer() as server:
        server.queue(Reply("First answer."))
        env = agent_env(tmp_path / "home", server)
        assert run_agent(["-p", "start"], project, env).returncode == 0
        # The first --continue is held by a reply that waits until the second has been refused, however
        # long the second takes to start on a busy machine (a fixed stall could end first).
        released = threading.Event()

        def held(request: RecordedRequest) -> ScriptItem:
            released.wait(300)
            return Reply("Slow answer.")

        server.responder = held
        (project / ".agent").mkdir()
        (project / ".agent" / "config.toml").write_text("[provider]\nstall_timeout = 300.0\n")
        first = subprocess.Popen(
            agent_cmd("-p", "slow one", "--continue"),
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 300
            while len(server.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            second = run_agent(["-p", "meanwhile", "--continue"], project, env)
        finally:
            released.set()
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert second.returncode == 1
    assert second.stderr.count("\n") == 1 and "is open in another agent (pid" in second.stderr
    texts = [r["message"]["content"] for r in _records(project) if r["kind"] == "message"]
    assert "meanwhile" not in json.dumps(texts)  # the refused run wrote nothing
    assert "Slow answer." in out


def test_continue_adds_no_checkpoint_when_nothing_changed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "big.txt").write_text("x" * 60_000)
    with FakeModelServer() as server:
        server.queue(
            Reply("Reading it.", tool_calls=[ToolCallSpec("read_file", {"path": "big.txt"})]), Reply("Read.")
        )
        env = agent_env(tmp_path / "home", server)
        assert run_agent(["-p", "read big.txt", "--yes"], project, env).returncode == 0
        sizes = []
        for n in range(4):
            server.queue(Reply(f"Answer {n}."))
            assert run_agent(["-p", f"question {n}", "--continue"], project, env).returncode == 0
            (path,) = (project / ".transcripts").glob("*/session.jsonl")
            sizes.append(path.stat().st_size)
        assert "x" * 1000 in json.dumps(server.requests[-1].body)  # the history still goes out whole
    kinds = [r["kind"] for r in _records(project)]
    assert kinds.count("history") == 0 and kinds.count("meta") == 1
    growth = [b - a for a, b in itertools.pairwise(sizes)]
    assert max(growth) < 6_000, growth  # a question, an answer and their events; not 60 KB again

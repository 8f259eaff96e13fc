"""/ps and /stop through a pseudo-terminal: the model starts a command in the background, the user
lists it, stops it, and nothing of it is left after the REPL ends."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.reliability.procs import expect
from tests.test_background_commands import _alive_with, _held, _until
from tests.test_repl_everyday import finish, start

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.e2e


def test_ps_lists_a_background_command_and_stop_ends_it(tmp_path: Path) -> None:
    token = secrets.token_hex(6)
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": _held(token), "run_in_background": True})]),
            Reply("The watcher is running."),
            Reply(
                tool_calls=[
                    ToolCallSpec("bash", {"command": f"exec {_held(token + 'b')}", "run_in_background": True})
                ]
            ),
            Reply("Another one."),
        )
        child = start(tmp_path, server, "--yes")
        try:
            child.send("/ps\r")
            expect(child, "no background commands in this session")
            child.send("start the watcher\r")
            expect(child, "The watcher is running.")
            expect(child, "auto-compact at ")
            _until(lambda: len(_alive_with(token)) >= 1)
            child.send("/ps\r")
            expect(child, r"bg1\s+running")
            child.send("/stop bg1\r")
            expect(child, "bg1 stopped")
            _until(lambda: _alive_with(token) == [])
            child.send("/ps\r")
            expect(child, r"bg1\s+stopped")
            child.send("/stop bg9\r")
            expect(child, "no background command 'bg9' \\(known: bg1\\)")
            child.send("and another\r")
            expect(child, "Another one.")
            expect(child, "auto-compact at ")
            _until(
                lambda: len(_alive_with(token + "b")) >= 1
            )  # (and bwrap, whose argv holds it, in the sandbox)
            finish(child)
        finally:
            child.close(force=True)
    _until(lambda: _alive_with(token + "b") == [])  # the second ended with the REPL

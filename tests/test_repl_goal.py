"""`/goal` in the REPL (tmux on a private socket, against the fake model server): `/goal TEXT --check
CMD` starts at once, goes on by itself while the check fails and stops when it passes; `/goal` shows
the goal, its last check (the output's escape sequence written out), rounds and spend; bad syntax is
one line; `/goal clear` ends an active goal and a REPL opened with `--continue` still has it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, Reply, Stall
from tests.e2e import agent_cmd, agent_env
from tests.screen import Screen, have_tmux, python_path_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not have_tmux(), reason="tmux drives the terminal"),
]

# Counts its runs, prints a line that tries to erase itself and turn red, passes from the second run.
CHECK = (
    "n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; "
    'printf "run %s \\033[2K\\033[31mred\\n" $n; [ $n -ge 2 ]'
)


@contextmanager
def repl(tmp_path: Path, server: FakeModelServer, *args: str) -> Iterator[Screen]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = python_path_env(agent_env(tmp_path / "home", server))
    with Screen(agent_cmd("--yes", *args), cwd=project, env=env, width=160, height=40) as screen:
        assert screen.wait_for("compact"), screen.text()  # the toolbar: the prompt is up
        yield screen
        screen.send("/exit", "Enter")
        screen.wait_exit()


def test_goal_runs_until_its_check_passes_and_shows_its_progress(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("First pass."), Reply("Second pass."), Reply("Later."))
    with repl(tmp_path, fake_server) as screen:
        screen.send("/goal", "Enter")
        assert screen.wait_for("no goal:"), screen.text()
        screen.send("/goal fix it --budget lots", "Enter")
        assert screen.wait_for("/goal: --budget takes an amount in USD"), screen.text()
        screen.send(f"/goal make the counter pass --check '{CHECK}' --budget 5", "Enter")
        assert screen.wait_for("goal met after 2 rounds"), screen.text()
        assert "goal not met yet (the check exited 1; round 1" in screen.text()
        assert "Second pass." in screen.text()
        screen.send("/goal", "Enter")
        assert screen.wait_for("rounds: 2"), screen.text()
        rows = [row.rstrip() for row in screen.raw_rows()]
        assert "goal (met): make the counter pass" in rows
        assert "last check: exit 0" in rows
        assert any(row.startswith("  run 2 \\x1b[2K\\x1b[31mred") for row in rows), rows
        assert any(row.startswith("rounds: 2 · spent: $0.") and row.endswith(" of $5.00") for row in rows), (
            rows
        )
        screen.send("/goal clear", "Enter")
        assert screen.wait_for("no active goal to clear"), screen.text()
        # A check that never passes and a budget one reply spends: one round, then one line.
        fake_server.queue(Reply("Trying.", usage={"output_tokens": 20_000}))
        screen.send("/goal keep going --check false --budget 0.01", "Enter")
        assert screen.wait_for("goal budget spent"), screen.text()
    assert (tmp_path / "project" / "runs").read_text().strip() == "2"
    requests = fake_server.requests
    assert any("make the counter pass" in str(r.body) for r in requests)


def test_esc_stops_the_run_the_goal_stays_and_continue_brings_it_back(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.queue(Reply("Looking."), Stall(seconds=60))
    with repl(tmp_path, fake_server) as screen:
        screen.send("/goal write the changelog --check false", "Enter")
        assert screen.wait_for("goal not met yet (the check exited 1; round 1"), screen.text()
        deadline = time.monotonic() + 60  # the second round's request is under way (and stalled)
        while len(fake_server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        screen.send("Escape")
        assert screen.wait_for("interrupted"), screen.text()
        screen.send("/goal", "Enter")
        assert screen.wait_for("rounds: 1"), screen.text()
        assert "goal (active): write the changelog" in screen.text()
        assert screen.wait_for("· ◎ goal"), screen.text()  # the toolbar, while the goal is active
    assert len(fake_server.requests) == 2
    with repl(tmp_path, fake_server, "--continue") as screen:
        screen.send("/goal", "Enter")
        assert screen.wait_for("goal (active): write the changelog"), screen.text()
        assert screen.wait_for("· ◎ goal"), screen.text()
        screen.send("/goal clear", "Enter")
        assert screen.wait_for("goal cleared"), screen.text()
        screen.send("/goal", "Enter")
        assert screen.wait_for("goal (cleared): write the changelog"), screen.text()
        assert "· ◎ goal" not in "\n".join(screen.raw_rows()[-3:])

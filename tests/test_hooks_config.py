"""The hooks' config, how one hook command runs, and what its run means: real files and commands."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent_cli.config.load import Flags, load_settings
from agent_cli.core.errors import ConfigError
from agent_cli.hooks_user.config import DEFAULT_TIMEOUT, HookSpec, load_hooks
from agent_cli.hooks_user.outcome import HookOutcome, interpret
from agent_cli.hooks_user.process import OUTPUT_CAP, HookRun, run_hook

# -- config ---------------------------------------------------------------------------


def hooks_from(tmp_path: Path, text: str) -> tuple[HookSpec, ...]:
    config = tmp_path / "hooks.toml"
    config.write_text(text)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    settings = load_settings(config_path=str(config), env=env, flags=Flags(), cwd=tmp_path)
    return load_hooks(settings.tables)


def test_hooks_are_read_in_order_with_their_defaults(tmp_path: Path) -> None:
    specs = hooks_from(
        tmp_path,
        '[[hooks.PreToolUse]]\nmatcher = "bash|write_file"\ncommand = "./check.sh"\ntimeout = 30\n\n'
        '[[hooks.PreToolUse]]\ncommand = "./all.sh"\n\n[[hooks.Stop]]\ncommand = "notify-send done"\n',
    )
    assert [(s.event, s.command, s.matcher, s.timeout) for s in specs] == [
        ("PreToolUse", "./check.sh", "bash|write_file", 30.0),
        ("PreToolUse", "./all.sh", "", DEFAULT_TIMEOUT),
        ("Stop", "notify-send done", "", DEFAULT_TIMEOUT),
    ]
    assert DEFAULT_TIMEOUT == 60
    first, every, _ = specs
    assert first.matches("bash") and first.matches("write_file")
    assert not first.matches("bash_extra") and not first.matches("read_file")  # the whole name
    assert every.matches("anything") and not first.project


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('[[hooks.PreToolUs]]\ncommand = "x"\n', "did you mean PreToolUse?"),
        ('[[hooks.PreToolUse]]\nmatcher = "bash("\ncommand = "x"\n', "not a valid regex"),
        ("[[hooks.PreToolUse]]\nmatcher = 'bash'\n", "needs a command"),
        ('[[hooks.PreToolUse]]\ncommand = "  "\n', "needs a command"),
        ('[[hooks.Stop]]\ncommand = "x"\ntimeout = 0\n', "timeout must be a number"),
        ('[[hooks.Stop]]\ncommand = "x"\ntimeout = "10"\n', "timeout must be a number"),
        ('[[hooks.Stop]]\ncommand = "x"\ntimeout = true\n', "timeout must be a number"),
        ('[[hooks.Stop]]\ncommand = "x"\ntimeout = -5\n', "timeout must be a number"),
        ('[[hooks.Stop]]\ncomand = "x"\n', "did you mean command?"),
        ('Stop = "x"\n', "must be a [[hooks.Stop]] table"),
        ('[[hooks.Stop]]\ncommand = "x"\nsandbox = "yes"\n', "sandbox must be true or false"),
    ],
)
def test_a_bad_hook_is_one_config_error_naming_its_file_and_line(
    tmp_path: Path, body: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        hooks_from(tmp_path, ("[hooks]\n" if body.startswith("Stop") else "# hooks\n") + body)
    message = str(caught.value)
    assert says in message and "\n" not in message
    assert f"{tmp_path / 'hooks.toml'}:2" in message


def test_sandbox_true_confines_the_users_own_hook_and_a_projects_is_confined_anyway(tmp_path: Path) -> None:
    boxed, plain = hooks_from(
        tmp_path, '[[hooks.Stop]]\ncommand = "a"\nsandbox = true\n\n[[hooks.Stop]]\ncommand = "b"\n'
    )
    assert boxed.confined and not plain.confined and not boxed.project
    assert HookSpec("Stop", "c", project=True, sandbox=False).confined  # `false` cannot take it out


def test_the_second_entry_of_an_event_is_blamed_at_its_own_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"hooks.toml:4: .*timeout"):
        hooks_from(tmp_path, '[[hooks.Stop]]\ncommand = "a"\n\n[[hooks.Stop]]\ncommand = "b"\ntimeout = 0\n')


def test_the_definition_covers_everything_that_decides_what_runs() -> None:
    spec = HookSpec("PreToolUse", "./a.sh", "bash", 30.0, project=True, where="x:1")
    assert spec.definition() == {
        "event": "PreToolUse",
        "matcher": "bash",
        "command": "./a.sh",
        "timeout": 30.0,
    }


# -- one run ---------------------------------------------------------------------------


def test_a_run_gets_its_json_on_stdin_and_its_streams_apart(tmp_path: Path) -> None:
    command = 'cat > in.json; echo "out $AGENT_PROJECT_DIR $CLAUDE_PROJECT_DIR"; echo err >&2; exit 3'
    payload = json.dumps({"event": "Stop", "text": "é ✓"}, ensure_ascii=False).encode()
    run = run_hook(command, payload, tmp_path, 10)
    assert run.exit_code == 3 and not run.timed_out
    assert run.stdout == f"out {tmp_path} {tmp_path}\n" and run.stderr == "err\n"
    assert (tmp_path / "in.json").read_bytes() == payload


def test_a_run_keeps_a_capped_share_of_a_flood_and_a_hook_that_reads_nothing_does_not_stall(
    tmp_path: Path,
) -> None:
    run = run_hook("head -c 5000000 /dev/zero | tr '\\0' x", b"{}" * 500_000, tmp_path, 30)
    assert run.exit_code == 0
    assert run.stdout.startswith("x" * OUTPUT_CAP) and "more bytes not kept" in run.stdout
    assert len(run.stdout) < OUTPUT_CAP + 100


def test_a_run_that_hangs_is_killed_at_its_timeout_with_its_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    # A timeout of 2 s: time for the shell to start its child and write its pid on a busy machine.
    run = run_hook(f"sleep 600 & echo $! > {pids}; exec sleep 600", b"{}", tmp_path, 2)
    assert run.timed_out and run.exit_code is None
    assert time.monotonic() - started < 120  # cut at its timeout, not run for its 600 s
    child = int(pids.read_text())
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_command_that_cannot_start_is_said(tmp_path: Path) -> None:
    run = run_hook("true", b"{}", tmp_path / "missing", 5)
    assert run.failed and run.exit_code is None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


# -- what it means ---------------------------------------------------------------------

PRE = HookSpec("PreToolUse", "./check.sh")
START = HookSpec("SessionStart", "./context.sh")


@pytest.mark.parametrize(
    ("spec", "run", "expected"),
    [
        (PRE, HookRun(0, "looks fine\n", ""), HookOutcome("go", shown="looks fine")),
        (START, HookRun(0, "branch: main\n", ""), HookOutcome("go", context="branch: main")),
        (PRE, HookRun(2, "ignored", "no rm here\n"), HookOutcome("block", "no rm here")),
        (PRE, HookRun(0, '{"decision": "block", "reason": "why"}', ""), HookOutcome("block", "why")),
        (PRE, HookRun(0, '{"additionalContext": "more"}', ""), HookOutcome("go", context="more")),
        (
            PRE,
            HookRun(0, '{"hookSpecificOutput": {"additionalContext": "inner"}}', ""),
            HookOutcome("go", context="inner"),
        ),
        (PRE, HookRun(0, "{not json", ""), HookOutcome("go", shown="{not json")),
        (
            PRE,
            HookRun(1, "", "boom\nmore"),
            HookOutcome("warn", "PreToolUse hook `./check.sh` exited with 1: boom"),
        ),
        (
            PRE,
            HookRun(None, "", "", timed_out=True),
            HookOutcome("warn", "PreToolUse hook `./check.sh` timed out after 60 s and was stopped"),
        ),
        (
            PRE,
            HookRun(None, "", "", failed="cannot start: x"),
            HookOutcome("warn", "PreToolUse hook `./check.sh` cannot start: x"),
        ),
    ],
)
def test_what_a_run_means(spec: HookSpec, run: HookRun, expected: HookOutcome) -> None:
    assert interpret(spec, run) == expected


def test_the_environment_of_the_agent_reaches_the_hook(tmp_path: Path) -> None:
    env = {**os.environ, "HOOK_PROBE": "seen"}
    run = run_hook('printf %s "$HOOK_PROBE"', b"{}", tmp_path, 5, env)
    assert run.stdout == "seen"


def test_ctrl_c_while_a_hook_runs_kills_its_group_and_goes_on_up(tmp_path: Path) -> None:
    import signal

    pids = tmp_path / "pids"
    pressed: list[bool] = []

    def interrupt(signum: int, frame: object) -> None:
        if not pressed and pids.exists() and pids.read_text().strip():  # once the hook's child runs
            pressed.append(True)
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3, 0.1)  # then every 0.1 s until the child has started
    try:
        with pytest.raises(KeyboardInterrupt):
            run_hook(f"sleep 600 & echo $! > {pids}; sleep 600", b"{}", tmp_path, 300)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    child = int(pids.read_text())
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)

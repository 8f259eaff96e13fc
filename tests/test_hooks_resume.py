"""`/resume` in the REPL starts the other session as `--resume` does: its SessionStart hooks run
with source "resume" (through the real command, session and hooks; a scripted provider)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.core.events import Event
from agent_cli.session import AgentSession
from agent_cli.testing.scripted import ScriptedProvider, say
from agent_cli.ui.command_kit import CommandKit
from agent_cli.ui.commands import custom_command_files, parse, run_command
from agent_cli.ui.render import Renderer
from tests.hook_scripts import Recorder


def kit(session: AgentSession, root: Path, driven: list[int]) -> CommandKit:
    """What a slash command is handed, its turns rendered and counted in `driven`."""
    renderer = Renderer(Console(file=io.StringIO(), width=100))

    def drive(events: Iterator[Event]) -> None:
        for event in events:
            renderer.render(event)
        driven.append(1)

    return CommandKit(
        session=session,
        make_renderer=lambda: renderer,
        commands=custom_command_files(root, {}),
        drive=drive,
        refresh_context=lambda: None,
        prefill=lambda text: None,
    )


def test_resume_fires_session_start_with_source_resume(tmp_path: Path) -> None:
    rec = Recorder(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(f"[[hooks.SessionStart]]\ncommand = '''{rec.command()}'''\n")
    project = tmp_path / "proj"
    project.mkdir()
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PATH": "/usr/bin:/bin",
    }
    settings = load_settings(config_path=config, env=env, flags=Flags(model="claude-sonnet-4-6"), cwd=project)

    def make(p):  # type: ignore[no-untyped-def]
        return ScriptedProvider([say("noted")], model=p.model or "")

    first = open_session(settings, env=env, make_provider=make)
    list(first.begin())
    list(first.run("remember the parser"))
    earlier = first.id
    first.close()
    second = open_session(settings, env=env, make_provider=make)
    list(second.begin())
    driven: list[int] = []
    command = parse(f"/resume {earlier}")
    assert command is not None
    run_command(kit(second, project, driven), command)
    second.close()
    seen = rec.seen()
    assert [s["source"] for s in seen] == ["startup", "startup", "resume"]
    assert seen[-1]["session_id"] == earlier and len(driven) == 1

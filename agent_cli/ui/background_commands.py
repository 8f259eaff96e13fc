"""`/ps` and `/stop ID`: the session's background commands (bash with run_in_background) and its
background tasks (the task tool with background true)."""

from __future__ import annotations

import time

from agent_cli.core.text import visible
from agent_cli.ui.command_kit import CommandKit

__all__ = ["ps", "stop"]


def _age(started: float, now: float) -> str:
    seconds = max(0, int(now - started))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def ps(kit: CommandKit, arg: str) -> None:
    states = kit.session.background.states()
    tasks = [t for t in kit.session.tasks.records if t.background]
    for task in tasks:
        shown = " ".join(visible(task.description).split())[:60]
        kit.renderer.line(f"{task.id:<5} {'task ' + task.status:<22} {task.tokens:>7,} tokens  {shown}")
    if not states and tasks:
        return
    if not states:
        kit.renderer.info("no background commands in this session (bash with run_in_background starts one)")
        return
    now = time.time()
    for state in states:
        command = " ".join(visible(state.command).split())
        shown = command if len(command) <= 60 else command[:59] + "…"
        kit.renderer.line(f"{state.shell_id:<5} {state.status():<22} {_age(state.started, now):>7}  {shown}")
    kit.renderer.info("/stop ID stops one; all of them end with the session")


def stop(kit: CommandKit, arg: str) -> None:
    shell_id = arg.strip()
    if not shell_id:
        kit.renderer.warn("/stop needs a background command's id: /ps lists them")
        return
    task = kit.session.tasks.stop(shell_id)
    if task is not None:
        running = task.status == "running"
        said = "stopping: its report says so when it ends" if running else "had already ended"
        kit.renderer.info(f"{task.id} {said}" if task.background else f"{task.id} is not a background task")
        return
    shells = kit.session.background
    shell = shells.get(shell_id)
    if shell is None:
        known = ", ".join(shells.ids()) or "none"
        kit.renderer.warn(f"no background command {visible(shell_id)!r} (known: {known})")
        return
    if not shell.state().running:
        kit.renderer.info(f"{shell.shell_id} had already ended ({shell.state().status()})")
        return
    state = shells.stop(shell.shell_id)
    kit.renderer.info(f"{shell.shell_id} stopped" + (f" ({state.status()})" if state else ""))

"""bash_output and kill_shell: reading and stopping what `bash` started with `run_in_background`.

Both only steer the session's own commands (approval "never"): reading what a command printed
reaches nothing new, and stopping one ends what the user already let run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.core.requests import ToolSpec
from agent_cli.tools.args import require_str
from agent_cli.tools.background import BackgroundShells, ShellState
from agent_cli.tools.base import Approval, CallView, ToolContext, ToolError, ToolOutput

__all__ = ["BASH_OUTPUT", "KILL_SHELL", "BashOutput", "KillShell", "started_line"]

BASH_OUTPUT = "bash_output"
KILL_SHELL = "kill_shell"
_SCHEMA = {
    "type": "object",
    "properties": {"shell_id": {"type": "string", "description": "The id bash returned (bg1, bg2, ...)."}},
    "required": ["shell_id"],
    "additionalProperties": False,
}


def started_line(shell_id: str) -> str:
    return (
        f"[started in the background as {shell_id}: read what it prints with bash_output "
        f'{{"shell_id": "{shell_id}"}}, stop it with kill_shell; it ends with the session]'
    )


def _unknown(shells: BackgroundShells, shell_id: str) -> ToolError:
    known = ", ".join(shells.ids()) or "none started yet"
    return ToolError(f"no background command {shell_id!r} (known: {known})")


def _status(state: ShellState, archived: str | None) -> str:
    line = f"[{state.shell_id} {state.status()}; {state.printed:,} bytes printed in all"
    if archived is not None:
        line += f"; its whole output is saved in {archived}, which recall searches"
    return line + "]"


class BashOutput:
    spec = ToolSpec(
        name=BASH_OUTPUT,
        description=(
            "Read what a background command (bash with run_in_background) printed since the last "
            "read, and whether it still runs. Output over 32 KiB keeps the first and last 16 KiB; "
            "the whole output is saved when the command ends."
        ),
        input_schema=_SCHEMA,
    )
    approval: Approval = "never"
    view = CallView(main="shell_id")

    def __init__(self, shells: BackgroundShells) -> None:
        self.shells = shells

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        shell_id = require_str(args, "shell_id")
        found = self.shells.read(shell_id)
        if found is None:
            raise _unknown(self.shells, shell_id)
        text, state = found
        shell = self.shells.get(shell_id)
        body = text if text else "(nothing new)"
        if not body.endswith("\n"):
            body += "\n"
        failed = not state.running and not state.stopped and state.exit_code != 0
        return ToolOutput(body + _status(state, shell.archived if shell else None), is_error=failed)


class KillShell:
    spec = ToolSpec(
        name=KILL_SHELL,
        description="Stop a background command (bash with run_in_background) and everything it started.",
        input_schema=_SCHEMA,
    )
    approval: Approval = "never"
    view = CallView(main="shell_id")

    def __init__(self, shells: BackgroundShells) -> None:
        self.shells = shells

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        shell_id = require_str(args, "shell_id")
        shell = self.shells.get(shell_id)
        if shell is None:
            raise _unknown(self.shells, shell_id)
        was_running = shell.state().running
        state = self.shells.stop(shell_id)
        assert state is not None
        said = "stopped" if was_running else f"had already ended ({state.status()})"
        return ToolOutput(f"[{shell_id} {said}]\n" + _status(state, shell.archived))

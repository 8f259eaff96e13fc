"""What a slash command works with: one frozen value, built with the REPL and handed to each command.

A command acts on the running `AgentSession` through its methods and shows what it did through the
renderer; the few things it needs of the REPL come as callables (drive a turn's events, recount the
context for the toolbar, put text in the next input line) and values (the Markdown command files, a
list to choose from on the terminal, or None where there is none). The REPL itself is never handed
over: a command cannot reach its state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_cli.core.events import Event
from agent_cli.prompt.command_files import CommandFiles
from agent_cli.session import AgentSession
from agent_cli.ui.picker import Chooser

if TYPE_CHECKING:
    from agent_cli.ui.render import Renderer

__all__ = ["CommandKit"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandKit:
    """What a slash command may use."""

    session: AgentSession
    # The renderer is made on first use (rich loads after the prompt is drawn): a function here.
    make_renderer: Callable[[], Renderer]
    commands: CommandFiles  # the Markdown command files of this session
    drive: Callable[[Iterator[Event]], None]  # render a stream of events as a turn (Ctrl-C cancels it)
    refresh_context: Callable[[], None]  # recount the context for the toolbar
    prefill: Callable[[str], None]  # put text in the next prompt's input line, to edit and send
    # A list on the terminal to choose from (`picker.pick`); None where there is none, and the
    # commands that offer one print their list instead.
    chooser: Chooser | None = None

    @property
    def renderer(self) -> Renderer:
        return self.make_renderer()

"""The slash commands: their one table, parsing a typed line, and what each does to the session.

`COMMANDS` is the table: a row per command with its name, arguments, help line, what Tab completes
for its argument, its aliases and the function that runs it; the help, the completer and `parse`
read it, so adding a command is one row and one function here. A command acts on the running
`AgentSession` through its methods and shows the result through the renderer; it is handed a
`CommandKit` (`command_kit.py`, built with the REPL): the session, the renderer, the Markdown command
files, a way to drive a turn's events and to recount the context. What a command shows is computed
in `reports.py`.

A name no row has may be a Markdown command (`custom_commands.py`); a row's name or alias always
wins over a file of that name (`custom_command_files` passes them as reserved).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from agent_cli.core.errors import AgentError
from agent_cli.core.text import one_line
from agent_cli.prompt.command_files import CommandFiles, command_dirs
from agent_cli.ui import (
    background_commands,
    context_commands,
    everyday_commands,
    goal_commands,
    session_commands,
    todo_view,
)
from agent_cli.ui.command_kit import CommandKit
from agent_cli.ui.custom_commands import custom_help_rows
from agent_cli.ui.reports import (
    context_report,
    cost_rows,
    task_cost_rows,
)

__all__ = [
    "COMMANDS",
    "KEY_HELP",
    "Command",
    "SlashCommand",
    "closest",
    "custom_command_files",
    "help_rows",
    "parse",
    "run_command",
]


KEY_HELP = (
    "Enter sends · Alt+Enter, Esc Enter or \\ Enter adds a line · Tab completes /commands and paths "
    "(@src/…) · !cmd runs a command · Shift+Tab: ask / accept edits / plan / auto · Ctrl+O shows the last "
    "tool's output · Esc Esc lists the prompts to rewind to · Esc or Ctrl-C cancels a turn · Ctrl-D exits"
)
_NAME_AND_REST = re.compile(r"(\S*)\s*(.*)", re.DOTALL)
# Parts /context lists even when empty; the others only when they hold something.
_ALWAYS_SHOWN = ("system prompt", "tool specs", "messages")


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A typed `/name arg`. `known` is False for a name no command has."""

    name: str
    arg: str = ""
    known: bool = True


def parse(line: str) -> SlashCommand | None:
    """The command on `line`, or None when the line is a message for the model.

    A line starting with a path (`/etc/hosts: what is this?`) is a message: its
    first word has a second `/` in it. The name ends at the first space or line end.
    """
    text = line.strip()
    if not text.startswith("/") or text == "/":
        return None
    match = _NAME_AND_REST.fullmatch(text[1:])
    head, arg = match.groups() if match else ("", "")
    if "/" in head or not head:
        return None
    name = _ALIASES.get(head.lower(), head.lower())
    return SlashCommand(name, arg.strip(), name in _BY_NAME)


def closest(name: str, custom: Iterable[str] = ()) -> str | None:
    """The command the user most likely meant by an unknown `name` (`custom`: the Markdown ones)."""
    names = [*_BY_NAME, *custom]
    prefixed = [n for n in names if n.startswith(name.lower())]
    if prefixed:
        return prefixed[0]
    matches = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.5)
    return matches[0] if matches else None


def run_command(kit: CommandKit, command: SlashCommand) -> str:
    """Run one known command; "exit" when the REPL should end, else "continue"."""
    try:
        return _BY_NAME[command.name].run(kit, command.arg) or "continue"
    except AgentError as exc:
        kit.renderer.error(str(exc))
        return "continue"
    except Exception as exc:  # a bug in a command must not end the session
        from agent_cli.store.crash_log import internal_error

        kit.renderer.error(internal_error(exc))
        return "continue"


def help_rows() -> list[tuple[str, str]]:
    """`/name args` and the help line of every command, in the table's order."""
    return [(f"/{c.name}" + (f" {c.args}" if c.args else ""), c.help) for c in COMMANDS]


def custom_command_files(root: Path, env: Mapping[str, str] | None) -> CommandFiles:
    """The Markdown command files for a session in `root`: the project's folders and, given the
    environment, the user's; the built-in names and aliases reserved."""
    dirs = command_dirs(root, env or {})
    if env is None:
        dirs = tuple(d for d in dirs if d.scope == "project")
    return CommandFiles(root, dirs, [*_BY_NAME, *_ALIASES])


def _help(kit: CommandKit, arg: str) -> None:
    from agent_cli.ui.widgets import help_table

    kit.renderer.show(help_table(help_rows()))
    catalog = kit.commands.catalog()
    if catalog.commands:
        kit.renderer.line("")
        kit.renderer.line("Markdown commands", "bold")
        kit.renderer.show(help_table(custom_help_rows(catalog)))
    for notice in catalog.notices:
        kit.renderer.warn(notice.text)
    kit.renderer.info(KEY_HELP)


def _compact(kit: CommandKit, arg: str) -> None:
    kit.drive(kit.session.compact(arg or None))


def _context(kit: CommandKit, arg: str) -> None:
    from agent_cli.ui.widgets import context_table

    session = kit.session
    bd = session.breakdown()
    parts = [(label, tokens) for label, tokens, _ in bd.rows() if label != "free"]
    report = context_report(
        session.model,
        [(label, tokens) for label, tokens in parts if tokens or label in _ALWAYS_SHOWN],
        window=bd.window,
        trigger_at=bd.trigger_at,
        trigger_ratio=session.settings.context.trigger_ratio,
        reserve=bd.window - bd.budget,
        used=bd.total,
        auto_compact=bd.auto_compact,
    )
    kit.renderer.show(context_table(report))
    kit.renderer.info(report.note)


def _clear(kit: CommandKit, arg: str) -> None:
    kit.session.clear()
    kit.refresh_context()
    kept = len(kit.session.pins)
    pinned = f"; the {kept} pin{'s' if kept != 1 else ''} stay (/pins)" if kept else ""
    kit.renderer.info(f"context cleared; everything said so far stays in {kit.session.log_dir}{pinned}")


def _cost(kit: CommandKit, arg: str) -> None:
    from agent_cli.ui.widgets import cost_table

    rows = cost_rows(kit.session.usage_log)
    if not rows:
        kit.renderer.info("no requests yet in this session")
        return
    records = kit.session.tasks.records
    tasks = task_cost_rows((f"{t.id} {one_line(t.description)[:30]}", t.usage_log) for t in records)
    kit.renderer.show(cost_table(rows, tasks))
    if any(r.dollars is None for r in rows):
        kit.renderer.info("? = the model's prices are not in the model table")


def _mcp(kit: CommandKit, arg: str) -> None:
    for line in kit.session.extension_report():  # (server texts already made visible)
        kit.renderer.line(line)


def _hooks(kit: CommandKit, arg: str) -> None:
    lines = kit.session.hook_lines
    if not lines:
        kit.renderer.info(
            "no hooks in force ([[hooks.EVENT]] in the config, hooks in ~/.claude/settings.json "
            "or .claude/settings.json)"
        )
    for line in lines:  # (the renderer writes control characters out)
        kit.renderer.line(line)


def _permissions(kit: CommandKit, arg: str) -> None:
    for line in kit.session.permission_lines or ("mode: default",):
        kit.renderer.line(line)


def _last(kit: CommandKit, arg: str) -> None:
    from agent_cli.ui.live_output import last_output_lines

    last = kit.renderer.live_output.last
    if last is None:
        kit.renderer.info("no tool has run yet in this session")
        return
    for text, style in last_output_lines(last):
        kit.renderer.line(text, style)


def _exit(kit: CommandKit, arg: str) -> str:
    return "exit"


Completes: TypeAlias = Literal["", "model", "session"]  # what Tab offers for the argument


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    args: str
    help: str
    run: Callable[[CommandKit, str], str | None]
    completes: Completes = ""
    aliases: tuple[str, ...] = ()


COMMANDS: tuple[Command, ...] = (
    Command("help", "", "show this help", _help, aliases=("?", "h")),
    Command("compact", "[focus]", "summarize the conversation now, steered by an optional focus", _compact),
    Command("context", "", "what fills the context window, and where auto-compaction fires", _context),
    Command("clear", "", "start over with an empty context (the transcript keeps everything)", _clear),
    Command(
        "pin",
        "[--project] text",
        "pin an instruction every request carries word for word",
        context_commands.pin,
    ),
    Command("pins", "", "the pinned instructions, numbered", context_commands.pins),
    Command("unpin", "n", "remove pin n", context_commands.unpin),
    Command("todos", "", "the model's todo list, which every request carries", todo_view.todos),
    Command(
        "goal",
        "[text [--check cmd] [--budget usd] | clear]",
        "work toward a goal until its check passes (or the budget is spent); its progress; clear it",
        goal_commands.goal,
    ),
    Command(
        "record",
        "[edit]",
        "the condensed record and where each part came from; edit it",
        context_commands.record,
    ),
    Command(
        "uncompact", "", "undo the last compaction, when what it removed fits", context_commands.uncompact
    ),
    Command(
        "model",
        "[name]",
        "choose a model from a list, or switch to this one",
        session_commands.model,
        "model",
    ),
    Command("cost", "", "tokens and dollars per model in this session", _cost),
    Command("transcripts", "", "this project's sessions", session_commands.transcripts),
    Command(
        "resume",
        "[id]",
        "choose a session from a list, or switch to the one with this id (or prefix)",
        session_commands.resume,
        "session",
    ),
    Command("mcp", "", "the MCP servers: their state (connected, failed, awaiting approval) and tools", _mcp),
    Command(
        "rewind",
        "[N] [--chat|--code]",
        "choose a prompt to go back to, or go back to before prompt N",
        session_commands.rewind,
    ),
    Command("hooks", "", "the hooks in force and the file each comes from", _hooks),
    Command(
        "permissions",
        "",
        "the approval mode and the allow, ask and deny rules in force, with their files",
        _permissions,
    ),
    Command("last", "", "the last tool's whole output (Ctrl+O at the prompt)", _last),
    Command(
        "ps",
        "",
        "the background commands (bash with run_in_background) and their state",
        background_commands.ps,
    ),
    Command("stop", "id", "stop a background command", background_commands.stop),
    Command("diff", "", "the files this session changed, as diffs; then git diff", everyday_commands.diff),
    Command("copy", "", "the last answer to the clipboard (and to a file)", everyday_commands.copy),
    Command("export", "[file]", "the conversation as Markdown, in a file", everyday_commands.export),
    Command(
        "init",
        "[notes]",
        "the model reads the project and writes AGENTS.md (asked first)",
        everyday_commands.init,
    ),
    Command(
        "memory",
        "[n]",
        "the instruction files (AGENTS.md, CLAUDE.md, pins): open one in $EDITOR",
        everyday_commands.memory,
    ),
    Command(
        "status",
        "",
        "model, provider, sandbox, approvals, MCP servers, hooks and the context",
        everyday_commands.status,
    ),
    Command("exit", "", "leave (Ctrl-D works too)", _exit, aliases=("quit", "q")),
)
_BY_NAME = {c.name: c for c in COMMANDS}
_ALIASES = {alias: c.name for c in COMMANDS for alias in c.aliases}

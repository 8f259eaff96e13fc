"""The slash commands, run against the live REPL session.

`slash.py` parses and computes (pure); this module acts on the running
session (`Repl.built`: loop, engine, session log) and shows the result
through the REPL's `Renderer`. One function per command, dispatched by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_cli.core.errors import AgentError
from agent_cli.providers.models import lookup
from agent_cli.ui.slash import (
    COMMANDS,
    SlashCommand,
    context_report,
    cost_rows,
    format_tokens,
    known_models,
    session_rows,
)

if TYPE_CHECKING:
    from agent_cli.ui.repl import Repl

__all__ = ["KEY_HELP", "run_command"]

KEY_HELP = (
    "Enter sends · Alt+Enter or Esc Enter adds a line · Tab completes /commands and paths (@src/…) · "
    "Ctrl-C cancels a turn · Ctrl-D exits"
)
# Parts /context lists even when empty; the others only when they hold something.
_ALWAYS_SHOWN = ("system prompt", "tool specs", "messages")


def run_command(repl: Repl, command: SlashCommand) -> str:
    """Run one known command; "exit" when the REPL should end, else "continue"."""
    handler = _HANDLERS[command.name]
    try:
        return handler(repl, command.arg) or "continue"
    except AgentError as exc:
        repl.renderer.error(str(exc))
        return "continue"
    except Exception as exc:  # a bug in a command must not end the session
        from agent_cli.store.crash_log import internal_error

        repl.renderer.error(internal_error(exc))
        return "continue"


def _help(repl: Repl, arg: str) -> None:
    from agent_cli.ui.render import help_table

    repl.renderer.show(help_table(COMMANDS))
    repl.renderer.info(KEY_HELP)


def _compact(repl: Repl, arg: str) -> None:
    repl.drive(repl.built.loop.compact(arg or None))


def _context(repl: Repl, arg: str) -> None:
    from agent_cli.ui.render import context_table

    built = repl.built
    loop = built.loop
    bd = built.engine.breakdown(loop.history, loop.frame)
    parts = [(label, tokens) for label, tokens, _ in bd.rows() if label != "free"]
    report = context_report(
        built.model,
        [(label, tokens) for label, tokens in parts if tokens or label in _ALWAYS_SHOWN],
        window=bd.window,
        trigger_at=bd.trigger_at,
        trigger_ratio=built.settings.context.trigger_ratio,
        reserve=bd.window - bd.budget,
        used=bd.total,
        auto_compact=bd.auto_compact,
    )
    repl.renderer.show(context_table(report))
    repl.renderer.info(report.note)


def _clear(repl: Repl, arg: str) -> None:
    repl.built.loop.clear()
    repl.refresh_context()
    repl.renderer.info(f"context cleared; everything said so far stays in {repl.built.session.dir}")


def _model(repl: Repl, arg: str) -> None:
    built = repl.built
    if not arg:
        repl.renderer.line(f"model: {built.model} ({format_tokens(built.window)} window)", "bold")
        names = known_models(built.settings.provider.name)
        repl.renderer.info(f"known {built.settings.provider.name} models: " + ", ".join(names))
        repl.renderer.info("/model NAME switches; any name the provider serves works")
        return
    from agent_cli.wiring import switch_model

    before = built.window
    warning = switch_model(built, arg)
    repl.renderer.line(f"model: {arg} ({format_tokens(built.window)} window)", "bold")
    if warning is not None:
        repl.renderer.warn(f"{warning.message}; its prices are unknown to /cost")
    if built.settings.context.context_window:
        repl.renderer.info(f"the context keeps compacting for {format_tokens(built.window)}, "
                           "as --context-window / context.context_window say")
    elif built.window != before:
        th = built.engine.thresholds
        repl.renderer.info(f"the context now compacts for {format_tokens(built.window)}: "
                           f"auto-compaction at {format_tokens(th.trigger_at)} tokens")
    info = lookup(arg)
    if info is not None and info.provider != built.settings.provider.name:
        repl.renderer.warn(f"{arg} is an {info.provider} model, and this session talks to the "
                           f"{built.settings.provider.name} API (start with --provider {info.provider})")
    repl.refresh_context()


def _cost(repl: Repl, arg: str) -> None:
    from agent_cli.ui.render import cost_table

    rows = cost_rows(repl.built.loop.usage_by_model)
    if not rows:
        repl.renderer.info("no requests yet in this session")
        return
    repl.renderer.show(cost_table(rows))
    if any(r.dollars is None for r in rows):
        repl.renderer.info("? = the model's prices are not in the model table")


def _transcripts(repl: Repl, arg: str) -> None:
    from agent_cli.store.session_log import list_sessions

    root = repl.built.settings.project_root
    sessions = list_sessions(root)
    if not sessions:
        repl.renderer.info(f"no sessions yet in {root / '.transcripts'}")
        return
    for row in session_rows(sessions, repl.built.session.id, width=repl.renderer.console.width):
        repl.renderer.line(row)
    repl.renderer.info("/resume ID switches to one · `agent transcripts show ID` prints one")


def _resume(repl: Repl, arg: str) -> None:
    if not arg:
        _transcripts(repl, arg)
        return
    from agent_cli.store.session_log import resolve_session_id
    from agent_cli.wiring import resume_into

    built = repl.built
    session_id = resolve_session_id(built.settings.project_root, arg)
    if session_id == built.session.id:
        repl.renderer.info(f"already in session {session_id}")
        return
    resume_into(built, session_id)
    repl.refresh_context()
    repl.renderer.line(f"resumed session {session_id}: {len(built.loop.history)} messages in context", "bold")


def _exit(repl: Repl, arg: str) -> str:
    return "exit"


_HANDLERS: dict[str, Callable[[Repl, str], str | None]] = {
    "help": _help,
    "compact": _compact,
    "context": _context,
    "clear": _clear,
    "model": _model,
    "cost": _cost,
    "transcripts": _transcripts,
    "resume": _resume,
    "exit": _exit,
}

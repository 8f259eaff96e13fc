"""The commands that switch what the session works on: `/model`, `/resume` (and `/transcripts`), `/rewind`.

Each takes its argument as typed, or with none opens a list to choose from when the REPL has one
(`CommandHost.chooser`, the terminal's `picker.pick`); where there is none (a REPL fed lines by a
test or a pipe), the list is printed with how to name a choice. What a list shows is computed in
`reports.py` and `rewind_view.py`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from agent_cli.core.events import Event
from agent_cli.providers.models import lookup
from agent_cli.session import AgentSession
from agent_cli.ui.picker import Chooser
from agent_cli.ui.reports import (
    format_tokens,
    known_models,
    listed_sessions,
    model_choices,
    model_rows,
    session_rows,
)

if TYPE_CHECKING:
    from agent_cli.ui.render import Renderer

__all__ = ["CommandHost", "model", "resume", "rewind", "transcripts"]

PICK_LIMIT = 200  # sessions /resume offers to choose from, newest first


class CommandHost(Protocol):
    """What these commands use of the REPL (commands.CommandHost has it all)."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def renderer(self) -> Renderer: ...

    @property
    def chooser(self) -> Chooser | None: ...

    def drive(self, events: Iterator[Event]) -> None: ...

    def refresh_context(self) -> None: ...

    def prefill(self, text: str) -> None: ...


def model(repl: CommandHost, arg: str) -> None:
    session = repl.session
    provider = session.provider_name
    if not arg:
        arg = _chosen_model(repl)
        if not arg:
            return
    info = lookup(arg)
    if info is not None and info.provider != provider:
        # The session's provider, key and wire stay; another provider's model name would only fail there.
        repl.renderer.error(
            f"{arg} is an {info.provider} model and this session talks to the {provider} "
            f"API; to use it, restart with: agent --provider {info.provider} --model {arg}"
        )
        return
    before = session.window
    warning = session.switch_model(arg)
    window = format_tokens(session.window)
    repl.renderer.line(f"model: {arg} ({window} window)", "bold")
    if session.summary_model != session.model:
        repl.renderer.info(f"summaries are still written by {session.summary_model} (context.summary_model)")
    hint = difflib.get_close_matches(arg, known_models(provider), n=1) if info is None else []
    guess = f"; did you mean {hint[0]}?" if hint else ""
    if warning is not None:
        repl.renderer.warn(f"{warning.message}; its prices are unknown to /cost{guess}")
    elif info is None:
        # Not in the model table: the window came from the provider's Models API or the name's family.
        repl.renderer.warn(
            f"{arg} is not in the model table: its {window} window is what the provider or "
            f"the name's family says, and /cost cannot price it{guess}"
        )
    if session.settings.context.context_window:
        repl.renderer.info(
            f"the context keeps compacting for {window}, as --context-window / context.context_window say"
        )
    elif session.window != before:
        trigger = format_tokens(session.thresholds.trigger_at)
        repl.renderer.info(f"the context now compacts for {window}: auto-compaction at {trigger} tokens")
    repl.refresh_context()


def _chosen_model(repl: CommandHost) -> str:
    """The model the user picks from the model table's list ("" to stay); without a list on the
    terminal, the current model and the known ones are printed."""
    session = repl.session
    names = model_choices(session.provider_name, session.model)
    here = f"model: {session.model} ({format_tokens(session.window)} window)"
    if repl.chooser is None or not names:
        repl.renderer.line(here, "bold")
        if session.summary_model != session.model:
            repl.renderer.info(f"summaries are written by {session.summary_model} (context.summary_model)")
        repl.renderer.info(
            f"known {session.provider_name} models: " + ", ".join(known_models(session.provider_name))
        )
        repl.renderer.info("/model NAME switches; any name the provider serves works")
        return ""
    marked = names.index(session.model) if session.model in names else 0
    chosen = repl.chooser(
        f"{here} · switch to (/model NAME takes any other)", model_rows(names, session.model), marked
    )
    if chosen is None or names[chosen] == session.model:
        repl.renderer.info(f"model unchanged: {session.model}")
        return ""
    return names[chosen]


def transcripts(repl: CommandHost, arg: str) -> None:
    from agent_cli.store.sessions import list_sessions

    root = repl.session.project_root
    sessions = list_sessions(root)
    if not sessions:
        repl.renderer.info(f"no sessions yet in {root / '.transcripts'}")
        return
    for row in session_rows(sessions, repl.session.id, width=repl.renderer.console.width):
        repl.renderer.line(row)
    repl.renderer.info("/resume ID switches to one · `agent transcripts show ID` prints one")


def _chosen_session(repl: CommandHost) -> str:
    """The session the user picks to resume ("" to stay); without a list on the terminal, the
    sessions are printed."""
    from agent_cli.store.sessions import list_sessions

    if repl.chooser is None:
        transcripts(repl, "")
        return ""
    session = repl.session
    sessions = listed_sessions(list_sessions(session.project_root), session.id, PICK_LIMIT)
    if not [s for s in sessions if s.id != session.id]:
        repl.renderer.info("no other session in this project to resume")
        return ""
    width = repl.renderer.console.width - 2  # the marker before each row
    rows = session_rows(sessions, session.id, PICK_LIMIT, width)
    title = "resume which session? (* this one; date, messages, model, first prompt)"
    chosen = repl.chooser(title, rows, 0)
    if chosen is None:
        repl.renderer.info(f"still in session {session.id}")
        return ""
    return str(sessions[chosen].id)


def resume(repl: CommandHost, arg: str) -> None:
    if not arg:
        arg = _chosen_session(repl)
        if not arg:
            return
    session = repl.session
    before = session.id
    session_id = session.resume(arg)
    if session_id == before:
        repl.renderer.info(f"already in session {session_id}")
        return
    repl.refresh_context()
    repl.renderer.line(f"resumed session {session_id}: {len(session.history)} messages in context", "bold")
    for warning in session.warnings:  # what a newer version wrote that this one could not read
        repl.renderer.warn(warning.message)
    repl.drive(session.begin("resume"))  # the SessionStart hooks, as at a start with --resume


def rewind(repl: CommandHost, arg: str) -> None:
    from agent_cli.ui.rewind_view import REWIND_HINT, parse_rewind, point_lines, rewound_lines

    wanted = parse_rewind(arg)
    number, chat, code = wanted.number, wanted.chat, wanted.code
    if number is None and repl.chooser is not None:
        chosen = _chosen_rewind(repl, repl.chooser)
        if chosen is None:
            return
        number, chat, code = chosen
    if number is None:
        found = repl.session.rewind_points()
        for line in point_lines(found, repl.renderer.console.width) or ["no prompts yet in this session"]:
            repl.renderer.line(line)
        repl.renderer.info(REWIND_HINT)
        return
    rewound = repl.session.rewind(number, chat=chat, code=code)
    for text, style in rewound_lines(rewound):
        repl.renderer.line(text, style)
    if rewound.chat:
        repl.prefill(rewound.point.text)
    repl.refresh_context()


def _chosen_rewind(repl: CommandHost, choose: Chooser) -> tuple[int, bool, bool] | None:
    """The prompt to go back to before and what goes back (chat, code), picked from two lists with
    the newest prompt marked first; None when there is no prompt or the user leaves either list."""
    from agent_cli.ui.rewind_view import REWIND_CHOICES, point_row

    found = repl.session.rewind_points()
    if not found:
        repl.renderer.info("no prompts yet in this session")
        return None
    width = repl.renderer.console.width - 2  # the marker before each row
    rows = [point_row(point, width) for point in found]
    chosen = choose("rewind to before which prompt? (and what its turn changed)", rows, len(rows) - 1)
    number = found[chosen].number if chosen is not None else 0
    what = (
        None
        if chosen is None
        else choose(f"before prompt {number}: what goes back?", [c[0] for c in REWIND_CHOICES], 0)
    )
    if what is None:
        repl.renderer.info("nothing rewound")
        return None
    _, chat, code = REWIND_CHOICES[what]
    return number, chat, code

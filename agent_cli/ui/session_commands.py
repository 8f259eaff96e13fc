"""The commands that switch what the session works on: `/model`, `/resume` (and `/transcripts`), `/rewind`.

Each takes its argument as typed, or with none opens a list to choose from when the REPL has one
(`CommandKit.chooser`, the terminal's `picker.pick`); where there is none (a REPL fed lines by a
test or a pipe), the list is printed with how to name a choice. What a list shows is computed in
`reports.py` and `rewind_view.py`.
"""

from __future__ import annotations

import difflib

from agent_cli.providers.models import lookup
from agent_cli.ui.command_kit import CommandKit
from agent_cli.ui.picker import Chooser
from agent_cli.ui.reports import (
    format_tokens,
    known_models,
    listed_sessions,
    model_choices,
    model_rows,
    session_rows,
)

__all__ = ["model", "resume", "rewind", "transcripts"]

PICK_LIMIT = 200  # sessions /resume offers to choose from, newest first


def model(kit: CommandKit, arg: str) -> None:
    session = kit.session
    provider = session.provider_name
    if not arg:
        arg = _chosen_model(kit)
        if not arg:
            return
    info = lookup(arg)
    if info is not None and info.provider != provider:
        # The session's provider, key and wire stay; another provider's model name would only fail there.
        kit.renderer.error(
            f"{arg} is an {info.provider} model and this session talks to the {provider} "
            f"API; to use it, restart with: agent --provider {info.provider} --model {arg}"
        )
        return
    before = session.window
    warning = session.switch_model(arg)
    window = format_tokens(session.window)
    kit.renderer.line(f"model: {arg} ({window} window)", "bold")
    if session.summary_model != session.model:
        kit.renderer.info(f"summaries are still written by {session.summary_model} (context.summary_model)")
    hint = difflib.get_close_matches(arg, known_models(provider), n=1) if info is None else []
    guess = f"; did you mean {hint[0]}?" if hint else ""
    if warning is not None:
        kit.renderer.warn(f"{warning.message}; its prices are unknown to /cost{guess}")
    elif info is None:
        # Not in the model table: the window came from the provider's Models API or the name's family.
        kit.renderer.warn(
            f"{arg} is not in the model table: its {window} window is what the provider or "
            f"the name's family says, and /cost cannot price it{guess}"
        )
    if session.settings.context.context_window:
        kit.renderer.info(
            f"the context keeps compacting for {window}, as --context-window / context.context_window say"
        )
    elif session.window != before:
        trigger = format_tokens(session.thresholds.trigger_at)
        kit.renderer.info(f"the context now compacts for {window}: auto-compaction at {trigger} tokens")
    kit.refresh_context()


def _chosen_model(kit: CommandKit) -> str:
    """The model the user picks from the model table's list ("" to stay); without a list on the
    terminal, the current model and the known ones are printed."""
    session = kit.session
    names = model_choices(session.provider_name, session.model)
    here = f"model: {session.model} ({format_tokens(session.window)} window)"
    if kit.chooser is None or not names:
        kit.renderer.line(here, "bold")
        if session.summary_model != session.model:
            kit.renderer.info(f"summaries are written by {session.summary_model} (context.summary_model)")
        kit.renderer.info(
            f"known {session.provider_name} models: " + ", ".join(known_models(session.provider_name))
        )
        kit.renderer.info("/model NAME switches; any name the provider serves works")
        return ""
    marked = names.index(session.model) if session.model in names else 0
    chosen = kit.chooser(
        f"{here} · switch to (/model NAME takes any other)", model_rows(names, session.model), marked
    )
    if chosen is None or names[chosen] == session.model:
        kit.renderer.info(f"model unchanged: {session.model}")
        return ""
    return names[chosen]


def transcripts(kit: CommandKit, arg: str) -> None:
    from agent_cli.store.sessions import list_sessions

    root = kit.session.project_root
    sessions = list_sessions(root)
    if not sessions:
        kit.renderer.info(f"no sessions yet in {root / '.transcripts'}")
        return
    for row in session_rows(sessions, kit.session.id, width=kit.renderer.console.width):
        kit.renderer.line(row)
    kit.renderer.info("/resume ID switches to one · `agent transcripts show ID` prints one")


def _chosen_session(kit: CommandKit) -> str:
    """The session the user picks to resume ("" to stay); without a list on the terminal, the
    sessions are printed."""
    from agent_cli.store.sessions import list_sessions

    if kit.chooser is None:
        transcripts(kit, "")
        return ""
    session = kit.session
    sessions = listed_sessions(list_sessions(session.project_root), session.id, PICK_LIMIT)
    if not [s for s in sessions if s.id != session.id]:
        kit.renderer.info("no other session in this project to resume")
        return ""
    width = kit.renderer.console.width - 2  # the marker before each row
    rows = session_rows(sessions, session.id, PICK_LIMIT, width)
    title = "resume which session? (* this one; date, messages, model, first prompt)"
    chosen = kit.chooser(title, rows, 0)
    if chosen is None:
        kit.renderer.info(f"still in session {session.id}")
        return ""
    return str(sessions[chosen].id)


def resume(kit: CommandKit, arg: str) -> None:
    if not arg:
        arg = _chosen_session(kit)
        if not arg:
            return
    session = kit.session
    before = session.id
    session_id = session.resume(arg)
    if session_id == before:
        kit.renderer.info(f"already in session {session_id}")
        return
    kit.refresh_context()
    kit.renderer.line(f"resumed session {session_id}: {len(session.history)} messages in context", "bold")
    for warning in session.warnings:  # what a newer version wrote that this one could not read
        kit.renderer.warn(warning.message)
    kit.drive(session.begin("resume"))  # the SessionStart hooks, as at a start with --resume


def rewind(kit: CommandKit, arg: str) -> None:
    from agent_cli.ui.rewind_view import REWIND_HINT, parse_rewind, point_lines, rewound_lines

    wanted = parse_rewind(arg)
    number, chat, code = wanted.number, wanted.chat, wanted.code
    if number is None and kit.chooser is not None:
        chosen = _chosen_rewind(kit, kit.chooser)
        if chosen is None:
            return
        number, chat, code = chosen
    if number is None:
        found = kit.session.rewind_points()
        for line in point_lines(found, kit.renderer.console.width) or ["no prompts yet in this session"]:
            kit.renderer.line(line)
        kit.renderer.info(REWIND_HINT)
        return
    rewound = kit.session.rewind(number, chat=chat, code=code)
    for text, style in rewound_lines(rewound):
        kit.renderer.line(text, style)
    if rewound.chat:
        kit.prefill(rewound.point.text)
    kit.refresh_context()


def _chosen_rewind(kit: CommandKit, choose: Chooser) -> tuple[int, bool, bool] | None:
    """The prompt to go back to before and what goes back (chat, code), picked from two lists with
    the newest prompt marked first; None when there is no prompt or the user leaves either list."""
    from agent_cli.ui.rewind_view import REWIND_CHOICES, point_row

    found = kit.session.rewind_points()
    if not found:
        kit.renderer.info("no prompts yet in this session")
        return None
    width = kit.renderer.console.width - 2  # the marker before each row
    rows = [point_row(point, width) for point in found]
    chosen = choose("rewind to before which prompt? (and what its turn changed)", rows, len(rows) - 1)
    number = found[chosen].number if chosen is not None else 0
    what = (
        None
        if chosen is None
        else choose(f"before prompt {number}: what goes back?", [c[0] for c in REWIND_CHOICES], 0)
    )
    if what is None:
        kit.renderer.info("nothing rewound")
        return None
    _, chat, code = REWIND_CHOICES[what]
    return number, chat, code

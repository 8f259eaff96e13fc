"""What the approval question shows: the exact call, with every invisible character written out.

`approval_text` builds the question's text for the renderer: the tool and what it will do (a shell
command exactly as it will run, every line of a multi-line one under a margin no line of the
command can draw; the exact main argument of any other tool, such as a file tool's path, with the
size of the arguments its view shows by size; else the call described), then what "always" would
approve; when a rule would have run the call but the approver asks all the same, its reason
(`WHY_ASKED`) on a line of its own. The session's own questions (`SESSION_QUESTIONS`, e.g.
resuming a session someone else wrote) show their question instead. Nothing here reaches the
terminal raw: written-out characters stand out (reversed) on a colour terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from agent_cli.agent.approvals import EDIT_OFFERED, OUTSIDE_OFFERED, SESSION_QUESTIONS, WHY_ASKED
from agent_cli.core.text import visible, visible_exact, visible_parts
from agent_cli.tools.base import Approval, CallView
from agent_cli.ui.reports import describe_call

__all__ = ["approval_text"]


def approval_text(
    name: str,
    args: Mapping[str, Any],
    always: str,
    *,
    view: CallView,
    approval: Approval,
    fancy: bool,
    width: int,
) -> Text:
    text = Text()
    text.append("? ", style="bold yellow")
    why = args.get(WHY_ASKED)
    args = {k: v for k, v in args.items() if k not in (WHY_ASKED, OUTSIDE_OFFERED, EDIT_OFFERED)}
    if name in SESSION_QUESTIONS:  # the session's own question, not a tool call
        text.append(visible(str(args.get("question") or name)))
    else:
        text.append(f"{visible_exact(name)} ", style="bold")
        _append_call(text, args, view, approval, fancy, width)
    command = str(args.get("command") or "").strip() if approval == "command" else ""
    if "\n" in command:  # the rule quotes the command: say which, rather than draw its lines again
        always = always.replace(command, f"the {command.count(chr(10)) + 1} lines above")
    if isinstance(why, str):  # the approver's reason for asking although a rule covers the call
        text.append(f"\n  ! {visible(why)}", style="yellow")
    rule = visible_exact(always).replace("\n", "\\n")  # one line, whatever the rule quotes
    text.append(f"\n  always = {rule}", style="dim")
    return text


def _append_call(
    text: Text, args: Mapping[str, Any], view: CallView, approval: Approval, fancy: bool, width: int
) -> None:
    main = args.get(view.main) if view.main else None
    if approval == "command":
        # The exact command, every line of it, each under a margin no line of the command can draw.
        lines = str(args.get("command") or "").split("\n")
        if len(lines) == 1:
            _append_exact(text, lines[0], fancy)
        else:
            text.append(f"({len(lines)} lines)", style="dim")
            for line in lines:
                text.append("\n  │ ", style="dim")
                _append_exact(text, line, fancy)
    elif view.sized and isinstance(main, str):
        # The exact path (describe_call flattens spaces and cuts to the width); one line, so a
        # newline in it is written out too.
        _append_exact(text, main.replace("\n", "\\x0a"), fancy)
    else:
        _append_exact(text, describe_call(view, args, width=width), fancy)
    if view.sized:
        size = len(str(next((args[k] for k in view.sized if args.get(k)), "")))
        text.append(f"  ({size:,} chars)", style="dim")


def _append_exact(text: Text, value: str, fancy: bool) -> None:
    """`value` with its invisible characters written out, set apart (reversed) on a colour terminal."""
    for part, written_out in visible_parts(value):
        text.append(part, style="reverse" if written_out and fancy else "")

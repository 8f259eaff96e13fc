"""What one event or report looks like: rich renderables, built from plain values.

A tool call's one line, a thinking block's one line, a compaction's panel,
and the tables of `/context`, `/cost` and `/help` (their figures are computed
in `reports.py`, which stays free of rich). `render.Renderer` decides when
each is printed. Every piece of text that came from the model or a tool
(an error line, a thought, a summary, a name) goes through `visible` here:
rich passes escape sequences through to the terminal as they are.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agent_cli.core.events import CompactEvent, ToolCallEvent, ToolResultEvent
from agent_cli.core.text import visible
from agent_cli.tools.base import CallView
from agent_cli.ui.reports import ContextReport, CostRow, describe_call

__all__ = [
    "clear_line",
    "compact_panel",
    "context_table",
    "cost_table",
    "help_table",
    "thought_line",
    "tool_line",
]


def tool_line(
    call: ToolCallEvent | None,
    result: ToolResultEvent,
    view: CallView,
    width: int = 100,
    *,
    error_line: bool = True,
) -> Text:
    """`✓ read_file src/app.py · 0.02s`, and the error's first line (dim red, cut to the line) on failure
    (not with `error_line=False`: a command's first lines are shown under it)."""
    text = Text()
    text.append("✗ " if result.is_error else "✓ ", style="bold red" if result.is_error else "green")
    text.append(visible(result.name), style="bold")
    room = max(20, width - len(result.name) - 20)
    args = describe_call(view, call.input if call else {}, width=room)
    if args:
        text.append(f" {args}")
    if result.duration or not result.is_error:
        # A declined or interrupted call reports no time of its own: "0.00s" would be wrong.
        text.append(f" · {result.duration:.2f}s", style="dim")
    if result.is_error and error_line:
        # Split on newlines only: str.splitlines also breaks at \x0b, \x0c, \x1c-\x1e, shown instead.
        first = next((ln.strip() for ln in visible(result.content).split("\n") if ln.strip()), "error")
        room = max(20, width - 4)
        text.append(f"\n  {first if len(first) <= room else first[: room - 1] + '…'}", style="dim red")
    return text


def thought_line(text: str, width: int = 100) -> Text:
    """One dim line for a finished thinking block: its first line, cut to the width."""
    shown_text = visible(text).strip()
    first = " ".join(shown_text.split("\n")[0].split()) if shown_text else ""
    room = max(10, width - 3)
    shown = first if len(first) <= room else first[: room - 1] + "…"
    return Text(f"∴ {shown}", style="dim italic")


def clear_line(event: CompactEvent) -> str:
    """L0 / L1 in one line: what was cut or cleared, what it freed, how to get it back."""
    freed = max(event.tokens_before - event.tokens_after, 0)
    what = event.layer.verb
    detail = f" {visible(event.detail)}" if event.detail else ""
    return f"⟳ {what}{detail} · {freed:,} tokens freed · recall brings the full text back"


def compact_panel(event: CompactEvent) -> Panel:
    """One compaction as a Panel of three lines at most, as short as Claude Code's notice: the layer
    and trigger (its title), the tokens before and after, where the originals went, and what to type
    next (`/record` reads the record; the record itself is not printed: it can run to pages)."""
    saved = event.tokens_before - event.tokens_after
    share = f" (−{saved * 100 // event.tokens_before}%)" if event.tokens_before and saved > 0 else ""
    figures = f"tokens {event.tokens_before:,} → {event.tokens_after:,}{share}"
    figures += f" · messages {event.messages_before:,} → {event.messages_after:,}"
    if event.duration >= 0.01:
        figures += f" · {event.duration:.1f}s" if event.duration >= 1 else f" · {event.duration:.2f}s"
    lines = [Text(figures)]
    if event.transcript:
        where = Text("saved to ", style="dim")
        where.append(visible(_from_here(event.transcript)), style="cyan")
        lines.append(where)
    if event.stand_in and event.degraded:
        note = "a digest stands in while the model writes the record"
    elif event.stand_in:
        note = "the model's record took the digest's place"
    elif event.degraded:
        note = "degraded: the summary fell back to a digest"
    else:
        note = ""
    if event.layer.condenses:
        # With a note, the line keeps the one command a reader needs first.
        follow = "/record reads it" if note else "/record reads the record · /uncompact undoes it"
    elif event.layer.removes:
        follow = "/uncompact brings the dropped messages back if they fit"
    else:
        follow = ""
    if note or follow:
        lines.append(
            Text(" · ".join(filter(None, (note, follow))), style="yellow" if event.degraded else "dim")
        )
    title = f"context compacted · layer {event.layer} · trigger {event.trigger}"
    return Panel(
        # The joined text folds: a path has no spaces to wrap at.
        Text("\n", overflow="fold").join(lines),
        title=title,
        title_align="left",
        border_style="magenta",
        expand=False,
    )


def _from_here(path: str) -> str:
    """`path` relative to the working directory when it lies under it (the REPL runs in the project:
    `.transcripts/<session>/span-001-auto.jsonl`, which fits a line), else as given."""
    try:
        return Path(path).relative_to(Path.cwd()).as_posix() if os.path.isabs(path) else path
    except (ValueError, OSError):
        return path


def context_table(report: ContextReport) -> Table:
    """The /context table: one row per part of the request, tokens and share of the window."""
    table = Table(title=f"context · {report.model}", title_justify="left", box=None, padding=(0, 2))
    table.add_column("part")
    table.add_column("tokens", justify="right")
    table.add_column("%", justify="right")
    for row in report.rows:
        style = "dim" if row.name == "free" else ""
        table.add_row(row.name, f"{row.tokens:,}", f"{row.percent:.1f}%", style=style)
    table.add_section()
    table.add_row("used", f"{report.used:,}", f"{report.used_percent:.1f}%", style="bold")
    table.add_row("window", f"{report.window:,}", "100%", style="dim")
    return table


def cost_table(rows: Sequence[CostRow], tasks: Sequence[CostRow] = ()) -> Table:
    """The /cost table: tokens per model (thinking is part of output; cache reads and writes apart);
    then each sub-agent's share of them (`tasks`), one row each."""
    table = Table(box=None, padding=(0, 2))
    for name, justify in (
        ("model", "left"),
        ("input", "right"),
        ("output", "right"),
        ("thinking", "right"),
        ("cache read", "right"),
        ("cache write", "right"),
        ("cost", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]  # literal strings above
    for row in rows:
        table.add_row(*_cost_cells(row), style="bold" if row.model == "total" else "")
    if tasks:
        table.add_section()
        table.add_row(Text("of which, sub-agents:"), style="dim")
    for row in tasks:
        table.add_row(*_cost_cells(row), style="dim")
    return table


def _cost_cells(row: CostRow) -> tuple[Text | str, ...]:
    """One /cost row's cells: the model (its name made safe), its tokens, its dollars."""
    usage = row.usage
    return (
        Text(visible(row.model)),
        f"{usage.input_tokens:,}",
        f"{usage.output_tokens:,}",
        f"{usage.reasoning_tokens:,}",
        f"{usage.cache_read_tokens:,}",
        f"{usage.cache_write_tokens:,}",
        "?" if row.dollars is None else f"${row.dollars:.4f}",
    )


def help_table(rows: Sequence[tuple[str, str]]) -> Table:
    """`/name args` and its help line, one row per command."""
    table = Table.grid(padding=(0, 3))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for usage, help_line in rows:
        # Text, not markup: "[focus]" is an argument, not a rich style.
        table.add_row(Text(usage), Text(help_line))
    return table

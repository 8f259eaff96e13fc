"""What one event or report looks like: rich renderables, built from plain values.

A tool call's one line, a thinking block's one line, a compaction's panel,
and the tables of `/context`, `/cost` and `/help` (their figures are computed
in `reports.py`, which stays free of rich). `render.Renderer` decides when
each is printed. Every piece of text that came from the model or a tool
(an error line, a thought, a summary, a name) goes through `visible` here:
rich passes escape sequences through to the terminal as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agent_cli.core.events import CompactEvent, ToolCallEvent, ToolResultEvent
from agent_cli.core.text import visible
from agent_cli.tools.base import CallView
from agent_cli.ui.reports import ContextReport, CostRow, describe_call, summary_preview

__all__ = [
    "clear_line",
    "compact_panel",
    "context_table",
    "cost_table",
    "help_table",
    "thought_line",
    "tool_line",
]

SUMMARY_PREVIEW_LINES = 4


def tool_line(call: ToolCallEvent | None, result: ToolResultEvent, view: CallView, width: int = 100) -> Text:
    """`✓ read_file src/app.py · 0.02s`, and the error's first line (dim red, cut to the line) on failure."""
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
    if result.is_error:
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
    what = "cut" if event.layer == "cap" else "cleared"
    detail = f" {visible(event.detail)}" if event.detail else ""
    return f"⟳ {what}{detail} · {freed:,} tokens freed · recall brings the full text back"


def compact_panel(event: CompactEvent, *, full: bool = False) -> Panel:
    """One compaction as a Panel: what shrank, by how much, and where the originals went; the
    record's first lines, or all of it (`full`, for /compact)."""
    rows = Table.grid(padding=(0, 2))
    rows.add_column(style="dim", no_wrap=True)
    rows.add_column()
    rows.add_row("messages", f"{event.messages_before:,} → {event.messages_after:,}")
    saved = event.tokens_before - event.tokens_after
    share = f" (−{saved * 100 // event.tokens_before}%)" if event.tokens_before and saved > 0 else ""
    rows.add_row("tokens", f"{event.tokens_before:,} → {event.tokens_after:,}{share}")
    if event.transcript:
        rows.add_row("transcript", Text(visible(event.transcript), style="cyan", overflow="fold"))
    if event.duration >= 0.01:
        rows.add_row("took", f"{event.duration:.1f}s" if event.duration >= 1 else f"{event.duration:.2f}s")
    if event.stand_in and event.degraded:
        rows.add_row("note", Text("a digest stands in while the model writes the record", style="dim"))
    elif event.stand_in:
        rows.add_row("note", Text("the model's record took the digest's place", style="dim"))
    elif event.degraded:
        rows.add_row("note", Text("degraded: the summary fell back to a digest", style="yellow"))
    if event.summary:
        summary = visible(event.summary)  # the model wrote it
        shown = summary.strip() if full else summary_preview(summary, SUMMARY_PREVIEW_LINES)
        text = Text(shown, style="" if full else "dim", overflow="fold")
        rows.add_row("record" if full else "summary", text)
    if event.layer in ("summarize", "manual"):
        rows.add_row(
            "next", Text("/record shows it · /record edit changes it · /uncompact undoes it", style="dim")
        )
    elif event.layer == "emergency":
        rows.add_row("next", Text("/uncompact brings the dropped messages back if they fit", style="dim"))
    title = f"context compacted · layer {event.layer} · trigger {event.trigger}"
    return Panel(rows, title=title, title_align="left", border_style="magenta", expand=False)


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


def cost_table(rows: Sequence[CostRow]) -> Table:
    """The /cost table: tokens per model (thinking is part of output; cache reads and writes apart)."""
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
        usage = row.usage
        table.add_row(
            Text(visible(row.model)),
            f"{usage.input_tokens:,}",
            f"{usage.output_tokens:,}",
            f"{usage.reasoning_tokens:,}",
            f"{usage.cache_read_tokens:,}",
            f"{usage.cache_write_tokens:,}",
            "?" if row.dollars is None else f"${row.dollars:.4f}",
            style="bold" if row.model == "total" else "",
        )
    return table


def help_table(rows: Sequence[tuple[str, str]]) -> Table:
    """`/name args` and its help line, one row per command."""
    table = Table.grid(padding=(0, 3))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for usage, help_line in rows:
        # Text, not markup: "[focus]" is an argument, not a rich style.
        table.add_row(Text(usage), Text(help_line))
    return table

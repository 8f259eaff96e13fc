"""A running tool's output on the REPL's screen, and the last tool's output kept for `/last`.

`LiveOutputView` follows one turn's `ToolProgress` events. While a call runs, `tail()` is its last
lines (dim, each made `visible` and cut to the terminal's width, never wrapped), drawn by the
renderer in its one Live under the spinner, and `elapsed(id)` the figure the spinner shows. When
the call's result comes, `finish(result, call)` gives the one line said under it
(`exit 0 · 2.3s · 14.2 KB`; `cancelled · 1.2s · 40 B` for a call Ctrl-C cut short) and keeps the
output as `last`: the whole text the tool returned (the model may have seen it cut by L0; then
`archived` names the file holding it in full).

After a command, `head()` is its first lines (`HEAD_LINES`, as a terminal leaves them, made
`visible`) with a count of the rest, as Claude Code shows a command's output: the whole of it is
Ctrl+O (`/last`) away. `last_output_lines(last)` is what `/last` prints. Nothing here prints: the
renderer and the command do.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text

from agent_cli.core.events import CompactEvent, ToolProgress, ToolResultEvent
from agent_cli.core.text import visible
from agent_cli.tools.live import last_lines

__all__ = ["LastOutput", "LiveOutputView", "end_line", "format_size", "last_output_lines", "output_head"]

LINE_PREFIX = "  │ "
# A line is cut to this many characters before it is made visible: the screen shows one row of it.
MAX_LINE_CHARS = 1000
HEAD_LINES = 4  # a finished command's first lines shown under it; the rest is counted


def output_head(content: str, count: int = HEAD_LINES) -> tuple[tuple[str, ...], int]:
    """A finished command's first `count` lines as a terminal leaves them (raw: the caller makes them
    visible), and how many lines follow them. The tool's closing notes in brackets (`[exit code 0]`)
    are left out: the end line says how the command ended, and `/last` shows them. One more line
    than `count` is shown rather than counted ("+1 lines" would hide nothing)."""
    lines = list(last_lines(content, content.count("\n") + 1))
    for _ in range(2):  # the status, and the note on a background process that kept the output open
        if len(lines) > 1 and lines[-1].startswith("[") and lines[-1].endswith("]"):
            lines.pop()
    if len(lines) <= count + 1:
        return tuple(lines), 0
    return tuple(lines[:count]), len(lines) - count


def _row(line: str) -> Text:
    """One line of a command's output: dim, under a margin, its controls written out, one row."""
    return Text(LINE_PREFIX + visible(line[:MAX_LINE_CHARS]), style="dim", no_wrap=True, overflow="ellipsis")


def format_size(size: int) -> str:
    """`40 B`, `14.2 KB`, `3.1 MB` (1024 bytes a KB)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def end_line(status: str, elapsed: float, size: int) -> str:
    """The line said after a command: how it ended, how long it took, how much it printed."""
    return f"{status} · {elapsed:.1f}s · {format_size(size)}"


@dataclass(frozen=True, slots=True)
class LastOutput:
    """The last tool call's output as the tool returned it (redacted), for `/last`."""

    name: str
    call: str  # the call's one-line summary (raw: shown through `visible`)
    content: str
    is_error: bool
    summary: str | None = None  # the end line (`exit 0 · 2.3s · 14 B`), for a tool with a live view
    archived: str | None = None  # L0 cut it for the model: the file with the full text
    interrupted: bool = False  # cut short: `content` is the last lines seen, not the whole output


class LiveOutputView:
    """The progress of the calls of one turn, and the last call's output (kept across turns)."""

    def __init__(self) -> None:
        self._running: ToolProgress | None = None
        self._ended: ToolProgress | None = None
        self.last: LastOutput | None = None

    def progress(self, event: ToolProgress) -> None:
        if event.status is None:
            self._running = event
        else:
            self._running, self._ended = None, event

    def elapsed(self, call_id: str) -> str:
        """` · 1.2s` while the call `call_id` runs and has reported; else ""."""
        running = self._running
        return f" · {running.elapsed:.1f}s" if running is not None and running.id == call_id else ""

    def tail(self) -> RenderableType | None:
        """The running call's last lines, one row each; None when it has printed nothing yet."""
        running = self._running
        if running is None or not running.lines:
            return None
        return Group(*(_row(line) for line in running.lines))

    def head(self) -> RenderableType | None:
        """The first lines of the last command `finish` kept, and a count of the rest (asked right after
        `finish` said how it ended); None when that call had no live view or was cut short."""
        last = self.last
        if last is None or last.summary is None or last.interrupted:
            return None
        shown, more = output_head(last.content)
        rows = [_row(line) for line in shown]
        if more:
            rows.append(Text(f"{LINE_PREFIX}… +{more:,} lines (ctrl+o shows the last output)", style="dim"))
        return Group(*rows)

    def finish(self, result: ToolResultEvent, call: str) -> tuple[str, bool] | None:
        """The call's result came: the line to say under it and whether it tells of a failure
        (None for a call with no live view). The output is kept for `/last`."""
        ended = self._ended if self._ended is not None and self._ended.id == result.id else None
        running = self._running if self._running is not None and self._running.id == result.id else None
        self._running = self._ended = None
        said: tuple[str, bool] | None = None
        if ended is not None and ended.status is not None:
            failed = ended.status != "exit 0" and not ended.status.startswith("done ·")  # (a task's: done)
            said = (end_line(ended.status, result.duration, ended.size), failed)
        elif running is not None:  # no end of its own: Ctrl-C cut it short
            said = (end_line("cancelled", running.elapsed, running.size), True)
        if result.denied:
            return said  # it never ran: the last output stays the last that did
        interrupted = ended is None and running is not None
        content = "\n".join(running.lines) if running is not None and interrupted else result.content
        summary = said[0] if said is not None else None
        self.last = LastOutput(result.name, call, content, result.is_error, summary, None, interrupted)
        return said

    def capped(self, event: CompactEvent) -> None:
        """L0 cut the result that just came (its cap follows it): the full text is in the archive."""
        if (
            self.last is not None
            and event.layer.on_arrival
            and event.trigger == "ingest"
            and event.transcript
        ):
            last = self.last
            self.last = LastOutput(
                last.name, last.call, last.content, last.is_error, last.summary, event.transcript
            )

    def end_turn(self) -> None:
        self._running = self._ended = None


def last_output_lines(last: LastOutput) -> list[tuple[str, str]]:
    """What `/last` shows, as (text, style) lines: a heading, the whole output, and a note when
    the model saw it cut or the call was cut short. The texts are raw: the renderer shows them
    through `visible`."""
    heading = f"{last.name} {last.call}".rstrip() + (f" · {last.summary}" if last.summary else "")
    lines = [(heading, "bold")]
    lines.append((last.content.rstrip("\n") or "(no output)", ""))
    if last.interrupted:
        lines.append(("interrupted: these are the last lines it printed; the rest was not kept", "yellow"))
    if last.archived:
        lines.append((f"the model saw this cut to head and tail; the full text is in {last.archived}", "dim"))
    return lines

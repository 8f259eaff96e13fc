"""Rich rendering of the loop's events for the REPL: the one place that decides what the user sees.

`Renderer(console).handle(event)` turns each `events.Event` into output:

- assistant text streams as Markdown without flicker: every finished block
  (a paragraph, a list, a closed code fence; see `MarkdownStream`) is printed
  once, for good, as soon as it completes; only the unfinished last block
  lives in a `rich.live.Live`, cropped to the screen, so nothing taller than
  the terminal is ever redrawn. Plain text when the console is not a
  terminal or NO_COLOR is set.
- a tool call is one line with its status and duration (`✓ read_file app.py · 0.02s`);
  a failure adds the error's first line, dim red. While a command runs, the spinner counts
  its seconds and its last lines show under it; after it, its first lines and a count of the
  rest, then a line that says how it ended (`live_output.py`, which also keeps the last output
  for `/last`).
- every compaction is a Panel of three lines at most (layer and trigger in its
  title; tokens before -> after, the transcript, `/record` to read the record).
- the model's thinking streams in the spinner line, and each finished thinking
  block leaves one dim line (`∴ ...`), so progress shows between tool calls
  without flooding the screen (`thought_stream.py` says what and when);
- a spinner while waiting for the model or summarizing; warnings, errors and
  retries one line each.

Nothing from the model or a tool reaches the terminal with its control
characters: every string passes `core.text.visible` on its way out (rich
itself passes ESC through), Markdown shows a link's target as text rather
than as a terminal hyperlink, and the approval question shows the exact
command with every invisible character written out (`visible_exact`).

What each of those looks like is `widgets.py`. Only one Live exists at a time
(rich allows no more), so the spinner and the streaming tail share it (`live_area.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console, RenderableType
from rich.constrain import Constrain
from rich.padding import Padding
from rich.segment import Segments
from rich.spinner import Spinner
from rich.text import Text

from agent_cli.core.events import (
    AssistantText,
    AssistantTextDelta,
    CompactEvent,
    ErrorEvent,
    Event,
    GoalEvent,
    HookOutput,
    ResultEvent,
    RetryEvent,
    StatusEvent,
    ThinkingText,
    ThinkingTextDelta,
    ToolCallEvent,
    ToolProgress,
    ToolResultEvent,
    UsageEvent,
    WarningEvent,
    WebSearchEvent,
)
from agent_cli.core.text import one_line, visible
from agent_cli.tools.base import ToolRegistry
from agent_cli.tools.registry import known_tools
from agent_cli.ui.approval_view import approval_text
from agent_cli.ui.edit_diff import EditDiffs, diff_text
from agent_cli.ui.glyphs import ascii_only
from agent_cli.ui.live_area import LiveArea
from agent_cli.ui.live_output import LiveOutputView
from agent_cli.ui.markdown_blocks import MarkdownStream
from agent_cli.ui.markdown_lines import MarkdownTail, block_lines
from agent_cli.ui.reports import describe_call
from agent_cli.ui.thought_stream import ThoughtStream
from agent_cli.ui.widgets import clear_line, compact_panel, thought_line, tool_line

__all__ = ["Renderer"]

PANEL_MAX_WIDTH = 100
# Rich wraps about 0.3 MB a second here: past this many characters a line is left to the terminal.
WRAP_CHARS = 200_000
_SPINNER_TEXT = {"waiting for model": "thinking…", "summarizing": "summarizing the conversation…"}


DIFF_LINES = 40  # of an edit's diff, the lines shown before `v` shows all


class Renderer:
    """Renders events to `console`. Call `pause()` before prompting and `end_turn()` after a turn."""

    def __init__(
        self,
        console: Console,
        *,
        fancy: bool | None = None,
        refresh_per_second: float = 8,
        tools: Callable[[], ToolRegistry] = known_tools,
        root: Callable[[], Path] = Path.cwd,
    ) -> None:
        self.console = console
        self._edits = EditDiffs(root)  # an edit's diff, against the project's file as it is
        # The session's tools, asked how a call is shown (a function: the session opens after the
        # renderer is made, and may ask a question of its own before it has its tools).
        self._tools = tools
        # Markdown, spinners and Live only on a real terminal that accepts colour.
        self.fancy = (console.is_terminal and not console.no_color) if fancy is None else fancy
        # Braille dots on a UTF-8 terminal; an ASCII one gets - \ | /.
        self._spinner_name = "line" if ascii_only(console.file) else "dots"  # an ASCII terminal's spinner
        self._live = LiveArea(console, refresh_per_second)  # the spinner and the streaming tail
        self._stream = MarkdownStream()
        self._streamed = False  # deltas arrived for the current assistant message
        self._line_open = False  # plain output: the streamed text so far does not end with a newline
        self._shown = 0  # characters of it shown so far
        self._had_partial = False
        self._blocks_printed = 0
        self._calls: dict[str, ToolCallEvent] = {}
        self._spinner: str | None = None
        self._resume_spinner: str | None = None
        self._thoughts = ThoughtStream()  # the spinner's thinking line; when a thought line prints
        self.last_usage: UsageEvent | None = None
        self.live_output = LiveOutputView()  # a running command's last lines; the last output (/last)

    @property
    def live(self) -> bool:
        """A live area (a spinner, the streaming tail) is on the screen."""
        return self._live.shown

    @property
    def spinner(self) -> str | None:
        """What the spinner says now, if one is shown."""
        return self._spinner

    # ---- events ----------------------------------------------------------

    def handle(self, event: Event) -> None:
        if isinstance(event, AssistantTextDelta):
            early = self._thoughts.answer_begins()
            if early is not None:  # the thinking came first, so its line goes first
                self._print_thought(early)
            self._on_delta(event.text)
            return
        if isinstance(event, ThinkingTextDelta):
            # The model's thinking lives in the spinner line while it streams: progress, never a flood.
            self._thoughts.delta(event.text)
            if self.fancy and not self._streamed:
                self._set_spinner(self._thoughts.spinner_line())
            return
        if isinstance(event, ThinkingText):
            if self._thoughts.finished(event.text):
                self._print_thought(event.text)
            return
        if isinstance(event, StatusEvent):
            self._set_spinner(_SPINNER_TEXT.get(event.text, event.text + "…"))
            return
        if isinstance(event, ToolProgress):
            self._on_progress(event)
            return
        if isinstance(event, UsageEvent):
            self.last_usage = event
            return
        if isinstance(event, AssistantText):
            self._thoughts.settle()
            if self._streamed:
                if len(event.text) > self._shown:
                    self._on_delta(event.text[self._shown :])  # the stream fell short of the message
                self._finish_stream()
            else:
                self._print_markdown(event.text)
            return
        self._had_partial = self._streamed
        self._thoughts.settle()
        self._finish_stream()
        if isinstance(event, ToolCallEvent):
            self._calls[event.id] = event
            self._edits.called(event)
            self._set_spinner(self._call_spinner(event))
        elif isinstance(event, ToolResultEvent):
            self._clear_spinner()
            view = self._tools().view(event.name)
            call = self._calls.pop(event.id, None)
            said = self.live_output.finish(event, describe_call(view, call.input if call else {}, width=200))
            # A command's first lines, as Claude Code shows them (they hold its error's first line).
            head = self.live_output.head() if said is not None and not event.denied else None
            self.console.print(tool_line(call, event, view, self.console.width, error_line=head is None))
            if head is not None:
                self.console.print(head)
            if said is not None:  # how the command ended: `exit 0 · 2.3s · 14.2 KB`
                self.line(f"  {said[0]}", "red" if said[1] else "dim")
            diff = self._edits.done(event)
            if diff is not None:  # what the edit did, dim
                self.console.print(diff_text(diff, DIFF_LINES, dim=True, fancy=self.fancy), soft_wrap=True)
        elif isinstance(event, CompactEvent) and not event.layer.panel:
            # The free layers are one dim line each; panels are for the layers that rewrite history.
            self.live_output.capped(event)
            self.line(clear_line(event), "dim")
        elif isinstance(event, CompactEvent):
            self._clear_spinner()
            self.console.print(Constrain(compact_panel(event), PANEL_MAX_WIDTH))
        elif isinstance(event, RetryEvent):
            # A retried request starts its answer over; what streamed before was thrown away.
            note = " (the partial answer above is discarded)" if self._had_partial else ""
            self.line(f"… retry {event.attempt} in {event.delay:.1f}s: {event.reason}{note}", "yellow")
        elif isinstance(event, WarningEvent):
            self.warn(event.message)
        elif isinstance(event, WebSearchEvent):  # the provider's search: one line, never obeyed
            self.line(f"searched: {one_line(event.query)}", "dim")
        elif isinstance(event, HookOutput):  # a user's command: shown, dim, never obeyed by the terminal
            self.line(f"{event.hook} hook: {event.text}", "dim")
        elif isinstance(event, ErrorEvent):
            self.error(event.message)
        elif isinstance(event, GoalEvent):  # one line a round; the end of a run stands out
            self.line(f"◎ {event.message}", "dim" if event.status == "go_on" else "bold")
        elif isinstance(event, ResultEvent):
            self.end_turn()
            if event.stop == "max_iterations":
                self.line("the turn stopped at the iteration limit; send a message to go on", "yellow")

    # ---- one-line output ---------------------------------------------------

    def line(self, text: str, style: str = "") -> None:
        """One line of text (warnings and errors quote providers and tools: it is shown `visible`),
        wrapped at the spaces between words (a terminal's own wrap splits a word at the last column);
        a word wider than the screen, such as a long path, is folded. A text too long to wrap quickly
        (a whole output printed by /last) is left to the terminal's wrap."""
        self._clear_spinner()
        shown = Text(visible(text), style=style if self.fancy else "", overflow="fold")
        self.console.print(shown, soft_wrap=len(text) > WRAP_CHARS)

    def info(self, text: str) -> None:
        self.line(text, "dim")

    def warn(self, text: str) -> None:
        self.line(f"! {text}", "yellow")

    def error(self, text: str) -> None:
        self.line(f"✗ {text}", "red")

    def show(self, renderable: RenderableType) -> None:
        self._clear_spinner()
        self.console.print(renderable)

    def approval(self, name: str, args: Mapping[str, Any], always: str) -> bool:
        """Show what is about to run (an edit's diff too) and what "always" would approve; the REPL
        then reads the answer. True when the diff was cut (`full_diff` shows it whole).

        Call `resume()` once it is answered: the tool's spinner comes back while it runs.
        """
        self._resume_spinner = self._spinner
        self.pause()
        tools = self._tools()
        view, approval = tools.view(name), tools.approval(name)
        width = self.console.width
        text = approval_text(name, args, always, view=view, approval=approval, fancy=self.fancy, width=width)
        *question, rule = text.split("\n")
        # The command exactly as it runs (the terminal wraps it, adding nothing); the rule under it,
        # wrapped at its words under its indent.
        self.console.print(Text("\n").join(question), soft_wrap=True)
        self.console.print(Padding(rule[2:], (0, 0, 0, 2), expand=False))
        diff = self._edits.last if name in (c.name for c in self._calls.values()) else None
        if diff is not None:
            self.console.print(diff_text(diff, DIFF_LINES, fancy=self.fancy), soft_wrap=True)
        return diff is not None and len(diff.lines) > DIFF_LINES

    def full_diff(self) -> None:
        """The whole diff of the call being asked about (`v` at the question)."""
        if self._edits.last is not None:
            self.console.print(diff_text(self._edits.last, None, fancy=self.fancy), soft_wrap=True)

    # ---- turn life cycle ---------------------------------------------------

    def pause(self) -> None:
        """Stop the live display (spinner or tail) so a prompt can use the terminal."""
        self._finish_stream()
        self._clear_spinner()

    def resume(self) -> None:
        """After an approval prompt: show again the spinner it interrupted."""
        spinner, self._resume_spinner = self._resume_spinner, None
        if spinner is not None:
            self._set_spinner(spinner)

    def end_turn(self) -> None:
        self.pause()
        self._calls.clear()
        self.live_output.end_turn()

    # ---- internals ---------------------------------------------------------

    def _on_progress(self, event: ToolProgress) -> None:
        """A running call's progress: the spinner counts its seconds, its last lines show under it."""
        self.live_output.progress(event)
        call = self._calls.get(event.id)
        if call is not None and event.status is None and self.fancy:
            self._set_spinner(self._call_spinner(call) + self.live_output.elapsed(event.id))

    def _call_spinner(self, call: ToolCallEvent) -> str:
        described = describe_call(self._tools().view(call.name), call.input, width=60)
        return f"{visible(call.name)} {described}".rstrip()

    def _print_thought(self, text: str) -> None:
        self._clear_spinner()
        if self._streamed and not self.fancy and self._line_open:
            self.console.file.write("\n")  # plain output: never glue the line to the answer's last line
            self._line_open = False
        self.console.print(thought_line(text, self.console.width), soft_wrap=True)

    def _on_delta(self, text: str) -> None:
        self._shown += len(text)
        if not self.fancy:
            self._clear_spinner()
            self._streamed = True
            if text:
                self.console.file.write(visible(text))
                self.console.file.flush()
                self._line_open = not text.endswith("\n")
            return
        if not self._streamed:
            self._streamed = True
            self._spinner = None
        for block in self._stream.feed(text):
            self._print_markdown(block)
        self._update_live()

    def _finish_stream(self) -> None:
        if not self._streamed:
            return
        if self.fancy:
            rest = self._stream.finish()
            self._live.stop()
            if rest.strip():
                self._print_markdown(rest)
        else:
            self.console.file.write("\n")
            self._line_open = False
        self._stream = MarkdownStream()
        self._streamed = False
        self._shown = 0
        self._blocks_printed = 0

    def _print_markdown(self, block: str) -> None:
        if not block.strip():
            return
        if not self.fancy:
            self.console.print(visible(block.rstrip("\n")), markup=False, highlight=False, soft_wrap=True)
            return
        lines = block_lines(self.console, block)
        if self._blocks_printed:  # exactly one blank line between blocks, as a whole document would have
            self.console.print()
        self.console.print(Segments(seg for line in lines for seg in line))
        self._blocks_printed += 1

    def _set_spinner(self, text: str) -> None:
        if not self.fancy:
            return
        self._spinner = visible(text)
        self._update_live()

    def _clear_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner = None
            if not self._streamed:
                self._live.stop()
            else:
                self._update_live()

    def _update_live(self) -> None:
        parts: list[RenderableType] = []
        if self._streamed and self._stream.tail.strip():
            parts.append(MarkdownTail(self._stream.tail))
        if self._spinner is not None:
            parts.append(Spinner(self._spinner_name, text=Text(self._spinner, style="dim")))
            tail = self.live_output.tail()
            if tail is not None:
                parts.append(tail)
        self._live.show(parts)

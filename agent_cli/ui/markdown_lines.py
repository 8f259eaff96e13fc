"""Model text as terminal lines: rich Markdown made safe, printed blocks trimmed, the live tail cropped.

block_lines(console, block)   # a finished Markdown block's lines, ready to print once for good
MarkdownTail(text)            # the unfinished block, its last lines that fit the screen (for a Live)
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment

from agent_cli.core.text import visible

__all__ = ["MarkdownTail", "block_lines", "markdown"]


def markdown(text: str) -> RenderableType:
    """Model text as rich Markdown: controls written out first (rich would pass them through), and
    links shown with their target as text: a terminal hyperlink (OSC 8) hides where it goes."""
    from rich.markdown import Markdown

    return Markdown(visible(text), hyperlinks=False)


def block_lines(console: Console, block: str) -> list[list[Segment]]:
    """`block` rendered for `console`. Separately rendered blocks end differently (lists add a blank
    line, paragraphs none): plain blank lines at both ends are trimmed, so the caller puts exactly one
    between blocks; padding spaces at line ends (which would wrap into blank rows when the terminal
    narrows) are dropped."""
    lines = console.render_lines(markdown(block), console.options, pad=False, new_lines=True)
    while lines and _is_blank(lines[-1]):
        lines.pop()
    while lines and _is_blank(lines[0]):
        lines.pop(0)
    return [_rstrip(line) for line in lines]


class MarkdownTail:
    """The unfinished Markdown block, rendered and cropped to its last lines that fit the screen."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(markdown(self.text), options, pad=False)
        room = max(1, console.size.height - 3)
        for line in lines[-room:]:
            yield from line
            yield Segment.line()


def _is_blank(line: list[Segment]) -> bool:
    """A line with only spaces and no background (a code block's padding keeps its colour)."""
    for seg in line:
        if seg.text.strip("\n "):
            return False
        if seg.text.strip("\n") and seg.style is not None and seg.style.bgcolor is not None:
            return False
    return True


def _rstrip(line: list[Segment]) -> list[Segment]:
    """The line without trailing spaces that show nothing (no background, underline or reverse)."""
    line = list(line)
    end = [line.pop()] if line and line[-1].text == "\n" else []
    while line and not line[-1].control:
        seg, style = line[-1], line[-1].style
        if style is not None and (style.bgcolor is not None or style.underline or style.reverse):
            break
        kept = seg.text.rstrip(" ")
        line[-1:] = [Segment(kept, style)] if kept else []
        if kept:
            break
    return line + end

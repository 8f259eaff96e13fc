"""A list to choose from at the prompt: arrows move, Enter chooses, Esc leaves (as `/resume` and `/model`).

    pick(title, rows, selected=0) -> index | None        on the terminal (prompt_toolkit)
    ListView(count, selected, height).move(step) / .rows()   which rows show, and which is marked (pure)

The list is drawn under what is on the screen, not full screen, and erased when done: what the
command then prints says what was chosen. A long list scrolls in a window of `height` rows that
follows the marked one. Rows come from session logs and the model table, so each is made visible
(control characters written out) and kept to one line; a row wider than the terminal is clipped.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from agent_cli.core.text import visible
from agent_cli.ui.glyphs import fit

__all__ = ["PICK_KEYS", "Chooser", "ListView", "pick"]

# (title, rows, the row marked first) -> the row chosen, or None when the user left the list
Chooser: TypeAlias = Callable[[str, Sequence[str], int], int | None]

PICK_KEYS = "↑/↓ move · Enter chooses · Esc leaves"
HEIGHT = 10  # rows shown at once


@dataclass(slots=True)
class ListView:
    """The marked row of `count` and the window of `height` rows that shows it."""

    count: int
    selected: int = 0
    height: int = HEIGHT
    top: int = 0  # the first row shown

    def __post_init__(self) -> None:
        self.selected = min(max(self.selected, 0), max(self.count - 1, 0))
        self._follow()

    def move(self, step: int) -> None:
        """Mark the row `step` away, stopping at either end (a page is `height` rows)."""
        self.selected = min(max(self.selected + step, 0), max(self.count - 1, 0))
        self._follow()

    def rows(self) -> range:
        """The indexes shown, top to bottom."""
        return range(self.top, min(self.top + self.height, self.count))

    def _follow(self) -> None:
        if self.selected < self.top:
            self.top = self.selected
        elif self.selected >= self.top + self.height:
            self.top = self.selected - self.height + 1
        self.top = max(0, min(self.top, max(self.count - self.height, 0)))


def _one_line(text: str) -> str:
    return " ".join(visible(text).splitlines())  # (spaces inside a row stay: rows are aligned)


def pick(title: str, rows: Sequence[str], *, selected: int = 0, height: int = HEIGHT) -> int | None:
    """The index of the row the user chooses, or None when they leave (Esc, Ctrl-C, Ctrl-D)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    if not rows:
        return None
    shown = [_one_line(row) for row in rows]
    view = ListView(len(shown), selected, height)
    marker, blank = fit("› ", sys.stdout), "  "

    def text() -> StyleAndTextTuples:
        out: StyleAndTextTuples = [("bold", fit(_one_line(title), sys.stdout) + "\n")]
        for i in view.rows():
            here = i == view.selected
            out.append(("reverse" if here else "", (marker if here else blank) + shown[i]))
            out.append(("", "\n"))
        more = f"  ({view.selected + 1} of {view.count})" if view.count > view.height else ""
        out.append(("fg:ansibrightblack", fit(f"  {PICK_KEYS}{more}", sys.stdout)))
        return out

    bindings = KeyBindings()
    steps = {
        "up": -1,
        "down": 1,
        "pageup": -height,
        "pagedown": height,
        "home": -len(shown),
        "end": len(shown),
    }
    for key, step in steps.items():

        def move(event: KeyPressEvent, step: int = step) -> None:
            view.move(step)

        bindings.add(key)(move)

    @bindings.add("enter")
    def _choose(event: KeyPressEvent) -> None:
        event.app.exit(result=view.selected)

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d")
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    control = FormattedTextControl(text, focusable=True, show_cursor=False)
    app: Application[int | None] = Application(
        layout=Layout(Window(control, wrap_lines=False)),
        key_bindings=bindings,
        full_screen=False,
        erase_when_done=True,
    )
    return app.run()

"""The one live area at the foot of the screen: what is redrawn in place while a turn runs.

The renderer puts there what changes under the user's eyes (the spinner with its line, a running
command's last lines, the unfinished last block of a streaming answer) and prints everything else
for good above it. Rich allows one `Live` at a time, so they share this one: started when there is
something to show, updated after, gone (transient: it leaves nothing on the screen) when there is
nothing. It never takes stdout or stderr over: what the renderer prints goes above it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.live import Live

__all__ = ["LiveArea"]


class LiveArea:
    """The live area on `console`, redrawn `refresh_per_second` times a second while shown."""

    def __init__(self, console: Console, refresh_per_second: float) -> None:
        self.console = console
        self.refresh_per_second = refresh_per_second
        self._live: Live | None = None

    @property
    def shown(self) -> bool:
        return self._live is not None

    def show(self, parts: Sequence[RenderableType]) -> None:
        """Draw `parts`, one under another, in place of what the area showed; none: it goes."""
        if not parts:
            self.stop()
            return
        renderable = Group(*parts)
        if self._live is None:
            self._live = Live(
                renderable,
                console=self.console,
                refresh_per_second=self.refresh_per_second,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                vertical_overflow="visible",
            )
            self._live.start()
        else:
            self._live.update(renderable)

    def stop(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

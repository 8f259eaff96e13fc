"""Asking the user before a tool runs: the question on screen, and one key press for the answer.

`ApprovalPrompt.ask` is the `Asker` an interactive session is built with
(agent.approvals.InteractiveApprover calls it): it shows the call through the
renderer, reads the answer, and gives the screen back to the turn.
`answer_prompt` reads y / n / a from the terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from agent_cli.agent.approvals import Answer
from agent_cli.ui.glyphs import fit
from agent_cli.ui.turn import discard_typeahead

__all__ = ["ApprovalPrompt", "ApprovalView", "answer_prompt"]


class ApprovalView(Protocol):
    """What asking needs from the renderer (`render.Renderer` is one)."""

    def approval(self, name: str, args: Mapping[str, Any], always: str) -> None: ...

    def resume(self) -> None: ...


class ApprovalPrompt:
    def __init__(self, view: Callable[[], ApprovalView], answer: Callable[[], Answer] | None) -> None:
        self._view = view  # a function: the renderer is made on first use (rich loads late)
        self._answer = answer

    def ask(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        """Show the call and what "always" approves (None: a question the session asks itself, such
        as resuming a session someone else wrote, where "always" has nothing more to approve)."""
        view = self._view()
        view.approval(name, args, always or "the same as yes (this is a question, not a tool call)")
        if self._answer is None:
            return "no"
        answer = self._answer()
        view.resume()
        return answer


def answer_prompt() -> Answer:
    """Read y / n / a with one key press (Enter on typed text works too; Ctrl-D means no)."""
    from prompt_toolkit import prompt
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    discard_typeahead(sys.stdin.fileno())
    bindings = KeyBindings()
    for key, answer in (("y", "yes"), ("n", "no"), ("a", "always")):

        def pick(event: KeyPressEvent, answer: str = answer) -> None:
            event.current_buffer.text = answer  # stays on the screen as the answer given
            event.app.exit(result=answer)

        bindings.add(key)(pick)
    while True:
        try:
            question = fit("  allow? [y]es / [n]o / [a]lways › ", sys.stdout)
            text = prompt(question, key_bindings=bindings).strip().lower()
        except EOFError:
            return "no"
        for answer in ("yes", "no", "always"):
            if text and answer.startswith(text):
                return answer  # type: ignore[return-value]  # one of the Answer literals
        # anything else: ask again

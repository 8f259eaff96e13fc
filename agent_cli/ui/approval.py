"""Asking the user before a tool runs: the question on screen, and one key press for the answer.

`ApprovalPrompt.ask` is the `Asker` an interactive session is built with
(agent.approvals.InteractiveApprover calls it): it shows the call through the
renderer (an edit with its diff), reads the answer, and gives the screen back to the turn.

For a tool call the keys are y (yes), n (no: then what to do instead, typed, goes to the model as
the call's error; Enter alone stops the turn), c (no, and let the turn go on), a (always), o (this
one command outside the sandbox, when the approver offers it: `OUTSIDE_OFFERED`), e (a memory
the model proposed: rewrite its text, then it is saved as written; `EDIT_OFFERED`) and, when
the diff shown was cut, v (view all of it, then asked again). A question the session asks itself
(resume another's session, start a project's server) takes y or n, and anything but yes is no.
Esc at a question is Ctrl-C there: the turn is cancelled (after "no": the turn stops).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agent_cli.agent.approvals import EDIT_OFFERED, OUTSIDE_OFFERED, Answer, Edited, Instead
from agent_cli.ui.glyphs import fit
from agent_cli.ui.turn import discard_typeahead

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyPressEvent

__all__ = ["ApprovalPrompt", "ApprovalView", "Key", "answer_prompt", "edit_prompt", "instead_prompt"]

Key = Literal["yes", "no", "continue", "always", "outside", "edit", "view"]
Reader = Callable[[tuple[Key, ...]], Key]
CALL_KEYS: tuple[Key, ...] = ("yes", "no", "continue", "always")
QUESTION_KEYS: tuple[Key, ...] = ("yes", "no")
_LABELS = {
    "yes": "[y]es",
    "no": "[n]o",
    "continue": "[c] no, go on",
    "always": "[a]lways",
    "outside": "[o] approve outside the sandbox",
    "edit": "[e]dit",
    "view": "[v]iew diff",
}
_KEYS = {"yes": "y", "no": "n", "continue": "c", "always": "a", "outside": "o", "edit": "e", "view": "v"}


class ApprovalView(Protocol):
    """What asking needs from the renderer (`render.Renderer` is one)."""

    def approval(self, name: str, args: Mapping[str, Any], always: str) -> bool:
        """Show the call; True when there is more of its diff to view."""
        ...

    def full_diff(self) -> None: ...

    def resume(self) -> None: ...


class ApprovalPrompt:
    def __init__(
        self,
        view: Callable[[], ApprovalView],
        answer: Reader | None,
        instead: Callable[[], str] | None = None,
        pause: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
        edit: Callable[[str], str | None] | None = None,
    ) -> None:
        self._view = view  # a function: the renderer is made on first use (rich loads late)
        self._answer = answer
        self._instead = instead or (lambda: "")
        self._pause = pause  # what reads keys during a turn (Esc) stops while the question reads them
        self._edit = edit  # a memory's text rewritten (None: the user gave up editing)

    def ask(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        """Show the call and what "always" approves (None: a question the session asks itself, such
        as resuming a session someone else wrote, where "always" has nothing more to approve)."""
        view = self._view()
        more = view.approval(name, args, always or "the same as yes (this is a question, not a tool call)")
        if self._answer is None:
            return "no"
        outside: tuple[Key, ...] = ("outside",) if args.get(OUTSIDE_OFFERED) is True else ()
        edit: tuple[Key, ...] = ("edit",) if args.get(EDIT_OFFERED) is True and self._edit else ()
        extra = (*outside, *edit, *(("view",) if more else ()))
        keys = QUESTION_KEYS if always is None else (*CALL_KEYS, *extra)
        with self._pause():
            while (key := self._answer(keys)) == "view":
                view.full_diff()
            answer: Answer = "no"
            if key in ("yes", "always", "outside"):
                answer = "yes" if key == "yes" else "always" if key == "always" else "outside"
            elif key == "edit" and self._edit is not None:
                written = self._edit(str(args.get("text", "")))
                answer = Edited(written) if written is not None else "no"
            elif key == "no" and always is not None:
                said = self._instead().strip()
                answer = Instead(said) if said else "stop"
        view.resume()
        return answer


def answer_prompt(keys: tuple[Key, ...] = CALL_KEYS) -> Key:
    """Read one of `keys` with one key press (Enter on typed text works too; Ctrl-D means no)."""
    from prompt_toolkit import prompt
    from prompt_toolkit.key_binding import KeyBindings

    discard_typeahead(sys.stdin.fileno())
    bindings = KeyBindings()
    for key in keys:

        def pick(event: KeyPressEvent, key: Key = key) -> None:
            event.current_buffer.text = key  # stays on the screen as the answer given
            event.app.exit(result=key)

        bindings.add(_KEYS[key])(pick)
    bindings.add("escape", eager=True)(_escape)
    labels = " / ".join(_LABELS[k] for k in keys)
    while True:
        try:
            text = prompt(fit(f"  allow? {labels} › ", sys.stdout), key_bindings=bindings).strip().lower()
        except EOFError:
            return "no"
        for key in keys:
            if text and (key.startswith(text) or text == _KEYS[key]):
                return key
        # anything else: ask again


def instead_prompt() -> str:
    """After "no": what the model should do instead (Enter alone: stop the turn; Ctrl-D too)."""
    from prompt_toolkit import prompt
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()
    bindings.add("escape", eager=True)(_escape)
    try:
        return prompt(
            fit("  what should it do instead? (Enter: stop the turn) › ", sys.stdout), key_bindings=bindings
        )
    except (EOFError, KeyboardInterrupt):
        return ""


def edit_prompt(text: str) -> str | None:
    """After "edit": the memory's text on a line to rewrite (Enter saves it as written; Esc or
    Ctrl-D: nothing is saved)."""
    from prompt_toolkit import prompt
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()
    bindings.add("escape", eager=True)(_escape)
    try:
        return prompt(fit("  memory › ", sys.stdout), default=text, key_bindings=bindings)
    except (EOFError, KeyboardInterrupt):
        return None


def _escape(event: KeyPressEvent) -> None:
    """Esc at a question: as Ctrl-C there (the turn is cancelled; after "no", the turn stops)."""
    event.app.exit(exception=KeyboardInterrupt())

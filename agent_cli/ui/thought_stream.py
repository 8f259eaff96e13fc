"""The model's thinking as the screen follows it: what the spinner line says while it streams,
and when its one dim line (`∴ ...`) is printed; pure state, the renderer prints.

The thinking's tail lives in the spinner line while it streams (progress, never a flood). Its
line is printed once: when the finished block (`ThinkingText`) arrives, or, when the answer starts
streaming first, just before the answer, from the start of the thinking kept so far; the finished
block then prints nothing (it only arrives once the whole reply has streamed, under the answer).
"""

from __future__ import annotations

from agent_cli.core.text import visible

__all__ = ["THOUGHT_HEAD", "THOUGHT_TAIL", "ThoughtStream"]

THOUGHT_TAIL = 400  # characters of streaming thinking kept for the spinner line
THOUGHT_HEAD = 2000  # characters of it kept for the thought line printed before the answer


class ThoughtStream:
    def __init__(self) -> None:
        self._tail = ""  # the tail of the thinking streaming now
        self._head = ""  # the start of the thinking streamed since the last answer text
        self._early = 0  # thought lines printed as the answer began, before their ThinkingText

    def delta(self, text: str) -> None:
        """A piece of thinking streamed."""
        self._tail = (self._tail + text)[-THOUGHT_TAIL:]
        if len(self._head) < THOUGHT_HEAD:
            self._head += text

    def spinner_line(self) -> str:
        """What the spinner says while the thinking streams: its last line, cut to fit."""
        return "thinking: " + _last_line(self._tail, 70)

    def answer_begins(self) -> str | None:
        """The answer streams: the thinking that came first, whose line goes first (None: none)."""
        head, self._head = self._head, ""
        if not head.strip():
            return None
        self._early += 1
        return head

    def finished(self, text: str) -> bool:
        """A thinking block is complete (`text`): whether its line is still to be printed."""
        self._tail = self._head = ""
        if self._early:
            self._early -= 1  # already shown, before the answer
            return False
        return bool(text.strip())

    def settle(self) -> None:
        """Any other event: a line printed early is not waited for, the head starts afresh."""
        self._early, self._head = 0, ""


def _last_line(text: str, width: int) -> str:
    line = " ".join(visible(text).strip().split("\n")[-1].split()) if text.strip() else ""
    return line if len(line) <= width else "…" + line[-(width - 1) :]

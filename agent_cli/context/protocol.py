"""The context engine as the loop sees it, and the values the two exchange.

- `Frame`: the fixed prefix of every request (system prompt and tool specs).
  The loop owns it; the engine counts it.
- `Prepared`: the history to send (and keep from now on), plus what the
  engine did to it, as events the loop emits.
- `ContextPolicy`: the calls the loop makes. `context.engine.ContextEngine`
  is the implementation; tests use a pass-through fake.
- `Gate`: what an observer (a user's PreCompact hook) says of a compaction before L2 or L3 asks
  the model for a record, as a value (`CompactGate`):
  `skip` leaves this automatic compaction out for now (only an automatic one, the trigger or a
  provider's overflow, and only L2: the emergency layer still acts, so no gate can make a request
  overflow; a requested compaction, /compact or the compact tool, always runs); `extra` is text
  appended to the summary instruction (a hook's `additionalContext`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, ErrorEvent, WarningEvent
from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.core.requests import RequestOptions, ToolSpec

__all__ = [
    "OPEN",
    "CompactGate",
    "ContextPolicy",
    "EngineEvent",
    "Frame",
    "Gate",
    "Prepared",
    "open_gate",
    "skippable",
]

EngineEvent: TypeAlias = CompactEvent | WarningEvent | ErrorEvent


@dataclass(frozen=True, slots=True)
class Frame:
    """The fixed prefix of every request: the system prompt and the tool specs. `pins` is the part
    of `system` that holds the user's pins (prompt/pins.py), so /context can say what they take.
    `todos` is the todo list's note (core/todos.py): not part of `system` (it rides in the history,
    context/todos.py), but carried by every request, summary requests included. `goal` is the goal's
    note (core/goals.py), carried the same way while a goal is active."""

    system: str
    tools: tuple[ToolSpec, ...] = ()
    pins: str = ""
    todos: str = ""
    goal: str = ""

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes every request carries in its history (context/todos.py places them)."""
        return tuple(note for note in (self.todos, self.goal) if note)

    def digest(self) -> str:
        """A short fingerprint of the frame. Thinking blocks are bound to it: a session resumed
        under another frame (a new day in the system prompt, changed tools) cannot send them back."""
        specs = [[t.name, t.description, dict(t.input_schema)] for t in self.tools]
        body = json.dumps([self.system, specs], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The history to send (and keep) and what happened to it."""

    messages: list[Message]
    events: list[EngineEvent]
    # Set when even after every layer the request cannot go (far over the window before sending, or
    # still refused after an overflow): why it is not sent. The history is then as it was.
    unsendable: ContextOverflowError | None = None


class ContextPolicy(Protocol):
    """What the loop needs from the context engine."""

    def ingest(
        self, use: ToolUse, result: ToolResult, *, round_size: int = 1
    ) -> tuple[ToolResult, CompactEvent | None]:
        """L0, as each tool result arrives: the result to keep, and the cut if one was made."""
        ...

    def prepare(self, history: Sequence[Message], frame: Frame) -> Prepared:
        """Before every request: whatever layers the count calls for."""
        ...

    def observe(self, frame: Frame, sent: Sequence[Message], usage: Usage) -> WarningEvent | None:
        """After every response: the provider's count of what was sent; a warning when it is not
        believed (far below the local count), the first time."""
        ...

    def turn_ended(self, history: Sequence[Message], frame: Frame) -> None:
        """A turn ended and the user is to speak (an interactive session): work that can go on
        while they read and type may start now."""
        ...

    def on_overflow(self, history: Sequence[Message], frame: Frame, error: ContextOverflowError) -> Prepared:
        """The provider refused the prompt as too long: the shrunk history, or (when nothing more
        can go) the history as it was with `unsendable` saying why."""
        ...

    def compact(
        self, history: Sequence[Message], frame: Frame, focus: str | None, trigger: CompactTrigger
    ) -> Prepared:
        """L3: condense the conversation now (`/compact`, or the model's compact tool)."""
        ...

    def cache_options(self, history: Sequence[Message]) -> RequestOptions:
        """Where the request's cache marks go, for a provider that caches only at marked points: the
        last message the engine's next clear keeps byte for byte, whether the newest message is worth
        writing, where the next summary's span ends, the message marked for an hour."""
        ...

    def tokens(self, history: Sequence[Message], frame: Frame) -> int: ...

    @property
    def window(self) -> int:
        """The window as the engine knows it (it learns a smaller one from errors)."""
        ...

    @property
    def max_output(self) -> int:
        """Tokens a reply may take (the engine lowers it when it learns a smaller window)."""
        ...


@dataclass(frozen=True, slots=True)
class CompactGate:
    skip: bool = False
    extra: str = ""


OPEN = CompactGate()

# (layer, trigger, focus) -> what to do; called on the engine's thread before the summary request.
Gate: TypeAlias = Callable[[CompactLayer, CompactTrigger, str | None], CompactGate]


def open_gate(layer: CompactLayer, trigger: CompactTrigger, focus: str | None) -> CompactGate:
    """The gate of an engine nobody observes: every compaction goes, as it is."""
    return OPEN


def skippable(trigger: CompactTrigger) -> bool:
    """Whether a gate may skip a compaction this trigger set off (the automatic ones only)."""
    return trigger in ("auto", "overflow")

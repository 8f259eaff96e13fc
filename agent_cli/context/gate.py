"""The gate before a summary: what an observer (a user's PreCompact hook) says of a compaction.

Before L2 or L3 asks the model for a record, the engine asks its gate. The answer is a value:

- `skip`: leave this automatic compaction out for now. Only an automatic one (the trigger, or a
  provider's overflow) may be skipped, and only L2: the emergency layer still acts, so no gate
  can make a request overflow. A requested compaction (/compact, the compact tool) always runs.
- `extra`: text appended to the summary instruction (a hook's `additionalContext`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from agent_cli.core.events import CompactLayer, CompactTrigger

__all__ = ["OPEN", "CompactGate", "Gate", "open_gate", "skippable"]


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

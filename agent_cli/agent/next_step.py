"""What a model reply asks for next: the value the loop's turn dispatches on.

`AgentLoop._step` sends one request and handles its reply (its tool round, a requested
compaction, a continuation); it returns one of these and `_turn` matches on it: another request,
the answer, an interrupt, or a stop with its error. (openai-agents' runner does the same with its
NextStep values.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from agent_cli.core.events import ErrorKind, ResultStop
from agent_cli.core.messages import ToolUse

__all__ = ["FinalOutput", "Interrupted", "NextStep", "RunAgain", "Stopped"]


@dataclass(frozen=True, slots=True)
class RunAgain:
    """Send another request: tools ran, or the reply paused or was cut off (and is continued)."""


@dataclass(frozen=True, slots=True)
class FinalOutput:
    """The turn's answer: the reply's text, or every continued reply's."""

    text: str


@dataclass(frozen=True, slots=True)
class Interrupted:
    """Ctrl-C during the tool round; `cut_short` are the calls it stopped."""

    cut_short: tuple[ToolUse, ...]


@dataclass(frozen=True, slots=True)
class Stopped:
    """The turn ends without an answer: the error said, and the result's stop reason."""

    stop: ResultStop
    message: str
    kind: ErrorKind
    text: str = ""


NextStep: TypeAlias = RunAgain | FinalOutput | Interrupted | Stopped

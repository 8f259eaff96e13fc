"""The tool contract: a named function from JSON input to a text result.

Tools never raise at the model: bad input and failures come back as
`ToolOutput(is_error=True)` with a message the model can act on. Long-running
tools check `ToolContext.cancel` (set on Ctrl-C) and stop promptly. A tool
that changes the loop's course (compact) says so in its output value, and the
loop acts on it after the round.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_cli.core.messages import RAW_ARGUMENTS
from agent_cli.core.requests import ToolSpec

__all__ = [
    "CompactRequest",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolRegistry",
]


class ToolError(Exception):
    """A failure the model should read; the registry turns it into an error result."""


@dataclass(frozen=True, slots=True)
class CompactRequest:
    """The model asked to condense the conversation once the current tool round is done."""

    focus: str | None = None


@dataclass(frozen=True, slots=True)
class ToolOutput:
    content: str
    is_error: bool = False
    compact: CompactRequest | None = None  # the compact tool's wish, for the loop


@dataclass(slots=True)
class ToolContext:
    """What a tool may know about where it runs."""

    root: Path
    allow_outside_root: bool = False
    cancel: threading.Event = field(default_factory=threading.Event)
    bash_timeout: float = 120.0
    # The recall tool's way into the context engine's archive, given when the session is built.
    recall: Callable[[str], str] | None = None
    # Where the secrets in a text are (the session's redactor), so an output is never cut inside one.
    secret_spans: Callable[[str], list[tuple[int, int]]] | None = None


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput: ...


class ToolRegistry:
    """Tools by name, in the order offered to the model."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.spec.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def run(self, name: str, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run a tool by name; unknown names, bad arguments and crashes become error results."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools)
            return ToolOutput(f"Error: unknown tool {name!r}. Available tools: {known}.", True)
        if not isinstance(args, Mapping):
            return ToolOutput(f"Error: {name} expects a JSON object of arguments.", True)
        if set(args) == {RAW_ARGUMENTS}:  # the adapters keep arguments that did not parse as sent
            sent = " ".join(str(args[RAW_ARGUMENTS]).split())
            shown = sent if len(sent) <= 200 else sent[:200] + "..."
            return ToolOutput(
                f"Error: the arguments of this {name} call are not a JSON object: {shown!r}. "
                "Send them as one JSON object with the parameters the tool lists.",
                True,
            )
        try:
            return tool.run(args, ctx)
        except ToolError as exc:
            return ToolOutput(f"Error: {exc}", True)
        except Exception as exc:  # a tool bug must not kill the session; the model reads it
            return ToolOutput(f"Error: {name} failed: {type(exc).__name__}: {exc}", True)

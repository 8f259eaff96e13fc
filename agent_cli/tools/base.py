"""The tool contract: a named function from JSON input to a text result.

Tools never raise at the model: bad input and failures come back as
`ToolOutput(is_error=True)` with a message the model can act on. Long-running
tools check `ToolContext.cancel` (set on Ctrl-C) and stop promptly, and may write what they print
as it arrives to `ToolContext.live` (the REPL shows its last lines while the tool runs). A tool
that changes the loop's course (compact) or what it carries (skill) says so in its output value,
and the loop acts on it.

A tool carries everything the rest of the agent knows about it: its `spec` (name, description,
input schema: what the model is offered), its `approval` (whether a call asks the user first) and
its `view` (how a call is shown on one line and in the approval question), and, if it changes
files, its `effect` (what `/rewind` must watch to undo it). Nothing else in the package keys
knowledge on a tool's name: the approvers, the UI and the file watch ask the registry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from agent_cli.core.events import ToolProgress
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import RAW_ARGUMENTS
from agent_cli.core.requests import ToolSpec
from agent_cli.core.todos import TodoItem
from agent_cli.store.crash_log import record_crash
from agent_cli.tools.confine import Confinement
from agent_cli.tools.live import LiveOutput

__all__ = [
    "Approval",
    "CallView",
    "CompactRequest",
    "DrivenTool",
    "FileEffect",
    "SkillLoad",
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
class SkillLoad:
    """The model loaded a skill: the loop keeps its body in force from now on (prompt/skills.py)."""

    name: str
    body: str


@dataclass(frozen=True, slots=True)
class ToolOutput:
    content: str
    is_error: bool = False
    compact: CompactRequest | None = None  # the compact tool's wish, for the loop
    skill: SkillLoad | None = None  # the skill tool's: a skill to keep in force, for the loop
    denied: bool = False  # refused before it ran (not approved, or a hook blocked it)
    stop_turn: bool = False  # refused, and the user ended the turn with it
    sandbox_denied: bool = False  # it failed because the sandbox refused it (its result says so)
    todos: tuple[TodoItem, ...] | None = None  # todo_write's new list, for the loop (tools/todo.py)
    images: tuple[ImageBlock, ...] = ()  # images the result shows the model (read_file on a picture)


@dataclass(slots=True)
class ToolContext:
    """What a tool may know about where it runs."""

    root: Path
    allow_outside_root: bool = False
    cancel: threading.Event = field(default_factory=threading.Event)
    bash_timeout: float = 120.0
    # The recall tool's way into the context engine's archive, given when the session is built.
    recall: Callable[[str], str] | None = None
    # recall with scope "project": this project's earlier sessions too (ContextEngine.recall_project).
    recall_project: Callable[[str], str] | None = None
    # The remember tool's way to save an approved memory: (text, scope) -> the line for the model;
    # raises ToolError when nothing was saved (prompt/memories.py, given when the session is built).
    remember: Callable[[str, str], str] | None = None
    # The images a recall names (the archive's), for a model that takes images.
    recall_images: Callable[[str], list[ImageBlock]] | None = None
    # Where the secrets in a text are (the session's redactor), so an output is never cut inside one.
    secret_spans: Callable[[str], list[tuple[int, int]]] | None = None
    # Where a tool writes its output as it arrives, for the screen (the runner gives each call its own).
    live: LiveOutput | None = None
    # The session's sandbox for the commands a tool runs (tools/confine.py); None: off.
    sandbox: Confinement | None = None
    # This call was approved to run outside the sandbox (the user's [o] answer, never a rule).
    unconfined: bool = False
    # Saves a whole text to the session's archive before a tool returns only part of it (a page):
    # (label, text) -> the path the model is told, which recall searches. None: nowhere to save.
    save_text: Callable[[str, str], str] | None = None
    # Auto mode ran this call unasked: in the sandbox with the protected files read-only.
    protect: bool = False
    # The session's model takes images (the model table's word): read_file and recall return them.
    images: bool = True


Approval: TypeAlias = Literal["never", "ask", "command", "host"]
"""Whether a call asks first. never: the tool only reads or steers the session (read_file, grep,
recall, compact). ask: it changes something; it asks unless an "always" answer covers it. command:
it runs its `command` argument as a shell command, which the allow-list and the "always" rules read
as bash parses it (agent.approvals). host: it reaches the host its `url` argument names; asked per
host ("always" covers that host), unasked for a host in the user's `[web] allow_hosts`."""


FileEffect: TypeAlias = Literal["none", "path", "tree"]
"""What a call may change in the project's files, for `/rewind` (agent.file_watch). none: nothing
(the default: a tool without an `effect` attribute). path: the file its `path` argument names
(write_file, edit_file), snapshotted before the call. tree: anything (a shell command): the tree is
compared before and after the call."""
_EFFECTS: dict[str, FileEffect] = {"none": "none", "path": "path", "tree": "tree"}


@dataclass(frozen=True, slots=True)
class CallView:
    """How a call is shown: `line(args)` is the one-line summary (raw: the UI writes out its
    control characters and cuts it to the width).

    `main` is the argument that says most about a call (a path, a command, a pattern); without it,
    the first string argument. `quoted` shows it in quotes (free text, not a path). `where` is an
    argument shown after it as "in ..." (grep's path); `lines` a (first line, count) pair of
    arguments shown as `path:first+count`. `sized` is an argument the approval question shows only
    by its size (a file's new content), beside the exact `main`."""

    main: str | None = None
    quoted: bool = False
    where: str | None = None
    lines: tuple[str, str] | None = None
    sized: tuple[str, ...] = ()

    def line(self, args: Mapping[str, Any]) -> str:
        value = (
            args.get(self.main) if self.main else next((v for v in args.values() if isinstance(v, str)), None)
        )
        if value is None:
            return ""
        text = str(value)
        if self.where is not None and isinstance(args.get(self.where), str):
            text = f"'{text}' in {args[self.where]}"
        elif self.lines is not None and args.get(self.lines[0]):
            first, count = (args.get(k) for k in self.lines)
            text = f"{text}:{first}" + (f"+{count}" if count else "")
        elif self.quoted:
            text = f'"{text}"'
        return text


class Tool(Protocol):
    """A tool: what it is (`spec`), whether a call asks first (`approval`), how a call is shown
    (`view`), and what it does (`run`)."""

    spec: ToolSpec
    approval: Approval
    view: CallView

    def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput: ...


@runtime_checkable
class DrivenTool(Protocol):
    """A tool the runner drives in the turn's own thread rather than a worker: `drive` yields its
    progress and returns its output (the task tool: its sub-agent asks approvals and is stopped by
    Esc as the turn is). Like `run`, it reports bad input as an error output, never by raising."""

    spec: ToolSpec

    def drive(
        self, call_id: str, args: Mapping[str, Any], ctx: ToolContext
    ) -> Generator[ToolProgress, None, ToolOutput]: ...


class ToolRegistry:
    """Tools by name, in the order offered to the model.

    A *deferred* tool is known but not offered: its schema stays out of the requests until a
    search (`tool_search`) reveals it; from then on it is offered and callable like any other."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._deferred: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.spec.name] = tool

    def defer(self, tool: Tool) -> None:
        """Know `tool` without offering it until `reveal` names it."""
        self._deferred[tool.spec.name] = tool

    def deferred(self) -> list[Tool]:
        """The tools still held back, in the order they were deferred."""
        return list(self._deferred.values())

    def reveal(self, names: Iterable[str]) -> list[str]:
        """Offer these deferred tools from now on; the names that were revealed."""
        shown = [n for n in names if n in self._deferred]
        for name in shown:
            self._tools[name] = self._deferred.pop(name)
        return shown

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name) or self._deferred.get(name)

    def approval(self, name: str) -> Approval:
        """A tool's approval; a name no tool has asks (it will fail, but never unasked)."""
        tool = self._tools.get(name)
        return tool.approval if tool is not None else "ask"

    def effect(self, name: str) -> FileEffect:
        """What a call of `name` may change in the files; "none" for a tool that does not say."""
        tool = self._tools.get(name)
        return _EFFECTS.get(str(getattr(tool, "effect", "none")), "none")  # optional: most change none

    def view(self, name: str) -> CallView:
        """How a call of `name` is shown; a name no tool has shows its first string argument."""
        tool = self._tools.get(name)
        return tool.view if tool is not None else CallView()

    def driven(self, name: str) -> DrivenTool | None:
        """The tool `name` when it is driven in the caller's thread (the task tool: a sub-agent whose
        requests, approvals and Esc belong to the turn), else None: it runs in a worker."""
        tool = self._tools.get(name)
        return tool if isinstance(tool, DrivenTool) else None

    def run(self, name: str, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run a tool by name; unknown names, bad arguments and crashes become error results."""
        if name in self._deferred:
            return ToolOutput(
                f"Error: {name} is not loaded yet: call tool_search with its name first to get its schema.",
                True,
            )
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
            logged = record_crash(exc)  # and the traceback is kept for a bug report
            kept = "its traceback is in the crash log" if logged else "its traceback could not be saved"
            return ToolOutput(
                f"Error: {name} failed: {type(exc).__name__}: {exc} (a bug in the tool; {kept})", True
            )

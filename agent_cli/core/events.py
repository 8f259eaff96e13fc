"""Typed events the core emits; the REPL and the headless printer render them.

Each event has a `type` tag (the `type` field of its stream-json line) and a
`to_json()` for `--output-format stream-json`; `event_from_json` reads such a
line back into its event. The core never prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeAlias, get_args

from agent_cli.core.compact_layers import CompactLayer
from agent_cli.core.errors import ProviderErrorKind
from agent_cli.core.messages import Usage

__all__ = [
    "EVENT_TYPES",
    "AssistantText",
    "AssistantTextDelta",
    "CompactEvent",
    "CompactLayer",
    "CompactTrigger",
    "ErrorEvent",
    "ErrorKind",
    "Event",
    "GoalEvent",
    "HookOutput",
    "ResultEvent",
    "ResultStop",
    "RetryEvent",
    "Status",
    "StatusEvent",
    "ThinkingText",
    "ThinkingTextDelta",
    "ToolCallEvent",
    "ToolProgress",
    "ToolResultEvent",
    "UsageEvent",
    "WarningEvent",
    "WebSearchEvent",
    "event_from_json",
]

# What an ErrorEvent is about: a provider's failure (its error's kind), or the turn's own stop.
ErrorKind: TypeAlias = (
    ProviderErrorKind
    | Literal[
        "error", "compact", "compaction", "interrupted", "max_iterations", "pause_turn", "hook", "refused"
    ]
)
Status: TypeAlias = Literal[
    "checking the context", "waiting for model", "summarizing", "running the goal's check"
]
# What set a compaction off: the engine's own check, the user (/compact), the model (the compact
# tool), a provider's refusal, the emergency drop, a result capped as it arrived, a tool call's
# oversized input capped in the history.
CompactTrigger: TypeAlias = Literal["auto", "manual", "tool", "overflow", "emergency", "ingest", "input"]
# How a task ended (`ResultEvent.stop`): only "end_turn" is a finished answer ("blocked": a
# UserPromptSubmit hook dropped the prompt).
ResultStop: TypeAlias = Literal[
    "end_turn", "max_iterations", "interrupted", "error", "pause_turn", "blocked", "refused"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantTextDelta:
    """Streaming text, for live display. Not part of stream-json (see AssistantText)."""

    type: ClassVar[str] = "assistant_delta"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantText:
    """The complete text of one assistant message."""

    type: ClassVar[str] = "assistant_text"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingTextDelta:
    """The model's thinking as it streams, for live display (when the display setting returns text)."""

    type: ClassVar[str] = "thinking_delta"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingText:
    """The visible text of one thinking block or reasoning summary of a finished reply."""

    type: ClassVar[str] = "thinking"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEvent:
    type: ClassVar[str] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    """A running tool's output so far, for live display: its last `lines` (redacted, raw otherwise:
    the screen makes them visible), `elapsed` seconds and `size` bytes; `status` (`exit 0`) on the
    last one, once the tool has ended. Neither logged nor part of stream-json (see ToolResultEvent)."""

    type: ClassVar[str] = "tool_progress"
    id: str
    name: str
    lines: tuple[str, ...]
    elapsed: float
    size: int
    status: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "lines": list(self.lines),
            "elapsed": round(self.elapsed, 3),
            "size": self.size,
            "status": self.status,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultEvent:
    type: ClassVar[str] = "tool_result"
    id: str
    name: str
    content: str
    is_error: bool
    duration: float
    denied: bool = False  # refused before it ran: not approved, or a hook blocked it

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
            "duration": round(self.duration, 3),
            "denied": self.denied,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactEvent:
    """One compaction by one layer of the context engine (`layer` may be given as its name: a
    record read back, a test; it is the `CompactLayer` value from then on)."""

    type: ClassVar[str] = "compact"
    layer: CompactLayer
    trigger: CompactTrigger
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    summary: str | None = None
    transcript: str | None = None
    duration: float = 0.0
    degraded: bool = False
    usage: Usage | None = None  # what the summary call cost (L2/L3), thinking and cache included
    detail: str | None = None  # L0 / L1: what was cut or cleared (calls), for a one-line notice
    ahead: bool = False  # L2: the record was prepared in the background; `duration` is the wait for it
    # L2: a digest stood in while the model wrote the record: on the digest's event, and on the record's
    # (ahead) when it takes the digest's place; nobody waited for that call.
    stand_in: bool = False

    def __post_init__(self) -> None:
        # The name becomes the value (a name that is no layer is a ValueError, as a record that
        # does not fit); frozen, so set as the dataclass itself sets fields.
        object.__setattr__(self, "layer", CompactLayer.named(self.layer))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["layer"] = str(self.layer)
        data["duration"] = round(self.duration, 3)
        data["usage"] = self.usage.to_json() if self.usage is not None else None
        return {"type": self.type, **data}


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageEvent:
    """Usage reported for one request, and the context now in use."""

    type: ClassVar[str] = "usage"
    model: str
    usage: Usage
    context_tokens: int
    context_window: int

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "model": self.model,
            "usage": self.usage.to_json(),
            "context_tokens": self.context_tokens,
            "context_window": self.context_window,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryEvent:
    """A request failed transiently and will be retried after `delay` seconds."""

    type: ClassVar[str] = "retry"
    attempt: int
    delay: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "attempt": self.attempt,
            "delay": round(self.delay, 3),
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusEvent:
    """What the agent is doing now, for spinners."""

    type: ClassVar[str] = "status"
    text: Status

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearchEvent:
    """The provider searched the web on its own servers inside the reply (nothing ran here)."""

    type: ClassVar[str] = "web_search"
    query: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "query": self.query}


@dataclass(frozen=True, slots=True, kw_only=True)
class WarningEvent:
    type: ClassVar[str] = "warning"
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class HookOutput:
    """What a user's hook command printed, for the user to read (shown dim): `hook` names its event."""

    type: ClassVar[str] = "hook_output"
    hook: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "hook": self.hook, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent:
    type: ClassVar[str] = "error"
    message: str
    kind: ErrorKind = "error"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalEvent:
    """The goal after a round (core/goals.py): `status` "go_on" (the check failed; the agent goes
    on), "met", "budget_spent"; `message` says it in one line for a person."""

    type: ClassVar[str] = "goal"
    status: str
    message: str
    rounds: int = 0
    spent: float | None = None  # USD under the goal (None: the model's prices are unknown)
    budget: float | None = None
    exit_code: int | None = None  # the check's (None: no check, or it did not finish)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "status": self.status,
            "message": self.message,
            "rounds": self.rounds,
            "spent": self.spent,
            "budget": self.budget,
            "exit_code": self.exit_code,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultEvent:
    """The end of one task: the final answer and how it ended."""

    type: ClassVar[str] = "result"
    text: str
    stop: ResultStop  # "pause_turn": paused too often
    iterations: int
    usage: Usage = field(default_factory=Usage)
    session_id: str = ""

    @property
    def ok(self) -> bool:
        return self.stop == "end_turn"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "text": self.text,
            "stop": self.stop,
            "iterations": self.iterations,
            "usage": self.usage.to_json(),
            "session_id": self.session_id,
        }


Event: TypeAlias = (
    AssistantTextDelta
    | AssistantText
    | ThinkingTextDelta
    | ThinkingText
    | ToolCallEvent
    | ToolProgress
    | ToolResultEvent
    | CompactEvent
    | UsageEvent
    | RetryEvent
    | StatusEvent
    | WarningEvent
    | WebSearchEvent
    | HookOutput
    | ErrorEvent
    | GoalEvent
    | ResultEvent
)


# Each event class by its `type` tag, read off the `Event` union (one list of the events).
EVENT_TYPES: dict[str, type[Event]] = {cls.type: cls for cls in get_args(Event)}


def event_from_json(data: Mapping[str, Any]) -> Event:
    """The event a `to_json()` record describes (its `type` names the class; fields it does not
    know are ignored, so an older reader takes a newer record). Raises ValueError for a record that
    is not an event or does not fit its class."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"not an event record: type {data.get('type')!r}")
    names = {f.name for f in fields(cls)}
    values = {k: v for k, v in data.items() if k in names}
    if isinstance(values.get("lines"), list):  # JSON has no tuples
        values["lines"] = tuple(values["lines"])
    usage = values.get("usage")
    if isinstance(usage, Mapping):
        values["usage"] = Usage.from_json(usage)
    try:
        return cls(**values)
    except TypeError as exc:  # a field missing: the record is not this event
        raise ValueError(f"a {cls.type} record that does not fit: {exc}") from None

"""What a headless run says about itself, in Claude Code's shapes, so scripts written for
`claude -p --output-format stream-json|json` read ours too.

    init event   {"type": "system", "subtype": "init", "session_id", "model", "cwd", "tools",
                  "permission_mode"}: the first line of stream-json
    result       our `result` event (`text`, `stop`, `iterations`, `usage`, `session_id`) with
                 Claude Code's fields beside it: `subtype`, `is_error`, `result`, `duration_ms`,
                 `num_turns`, `total_cost_usd`, `permission_denials` (each refused call's
                 `tool_name`, `tool_use_id`, `tool_input`), and the usage's cache counts under
                 their names too (`cache_creation_input_tokens`, `cache_read_input_tokens`)

`HeadlessReport` watches the events as they pass (the calls, which of them were refused) and
fills the result when it comes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.core.events import Event, ResultEvent, ToolCallEvent, ToolResultEvent
from agent_cli.core.messages import Usage
from agent_cli.ui.reports import cost_rows

__all__ = ["HeadlessReport", "init_event", "refusal_line"]

_SUBTYPES = {"end_turn": "success", "max_iterations": "error_max_turns"}


def init_event(*, session_id: str, model: str, cwd: Path, tools: Sequence[str], mode: str) -> dict[str, Any]:
    """The stream's first line: which session, model, folder and tools, and the approval mode
    (agent.modes: "bypassPermissions" with --yes; "default": allow-listed calls run, the rest are
    refused; "acceptEdits": edits run too; "plan": only tools that read; "auto": in the sandbox,
    commands and edits that stay in the project run too)."""
    return {
        "type": "system",
        "subtype": "init",
        "session_id": session_id,
        "model": model,
        "cwd": str(cwd),
        "tools": list(tools),
        "permission_mode": mode,
    }


def refusal_line(name: str, content: str) -> str:
    """A refused call, for text output's stderr: which tool, and why (the error the model read)."""
    reason = content.removeprefix("Error: ").split("\n")[0][:200]
    return f"agent: refused {name}: {reason}"


@dataclass
class HeadlessReport:
    """The run's clock, its calls and their refusals; `usage_log` prices the result."""

    usage_log: Callable[[], Sequence[tuple[str, Usage]]]
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    _inputs: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    denials: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.started = self.started or self.clock()

    def watch(self, event: Event) -> ToolResultEvent | None:
        """Note a call or its result; the result event when it was a refusal."""
        if isinstance(event, ToolCallEvent):
            self._inputs[event.id] = (event.name, event.input)
        elif isinstance(event, ToolResultEvent) and event.denied:
            name, given = self._inputs.get(event.id, (event.name, {}))
            self.denials.append({"tool_name": name, "tool_use_id": event.id, "tool_input": given})
            return event
        return None

    def result(self, event: ResultEvent) -> dict[str, Any]:
        """`event` as JSON with Claude Code's result fields beside ours."""
        payload = event.to_json()
        rows = cost_rows(self.usage_log())
        total = rows[-1].dollars if rows else 0.0
        usage = dict(payload["usage"])
        usage.update(
            cache_creation_input_tokens=event.usage.cache_write_tokens,
            cache_read_input_tokens=event.usage.cache_read_tokens,
        )
        payload.update(
            subtype=_SUBTYPES.get(event.stop, "error_during_execution"),
            is_error=event.stop != "end_turn",
            result=event.text,
            duration_ms=round((self.clock() - self.started) * 1000),
            num_turns=event.iterations,
            total_cost_usd=None if total is None else round(total, 6),
            usage=usage,
            permission_denials=list(self.denials),
        )
        return payload

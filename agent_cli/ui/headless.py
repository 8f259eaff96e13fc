"""Headless output (`agent -p`): render the loop's events as text, one JSON object, or JSON lines.

- text: the final answer on stdout; progress lines (tools, compactions, retries)
  on stderr only when stderr is a terminal; warnings and errors on stderr always.
- json: one object at the end: the result plus the errors and compactions seen.
- stream-json: one JSON object per line with a `type` field, flushed as it happens.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, Literal, TextIO

from agent_cli.core.events import (
    AssistantTextDelta,
    CompactEvent,
    ErrorEvent,
    Event,
    ResultEvent,
    RetryEvent,
    StatusEvent,
    ThinkingText,
    ThinkingTextDelta,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from agent_cli.ui import ending
from agent_cli.ui.reports import describe_call

__all__ = ["OutputFormat", "exit_code", "render_headless"]

OutputFormat = Literal["text", "json", "stream-json"]


def exit_code(result: ResultEvent | None) -> int:
    if result is None:
        return 1
    return {"end_turn": 0, "interrupted": 130}.get(result.stop, 1)


def render_headless(
    events: Iterable[Event],
    fmt: OutputFormat,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Consume the events of one task; return the process exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    progress = fmt == "text" and err.isatty()
    result: ResultEvent | None = None
    errors: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, ResultEvent):
            result = event
        if isinstance(event, ErrorEvent):
            errors.append(event.to_json())
            # A SIGTERM or SIGHUP also interrupts the turn; the CLI says which signal, not "the user".
            if fmt != "stream-json" and not (event.kind == "interrupted" and ending.received()):
                print(f"agent: {event.message}", file=err, flush=True)
        if isinstance(event, WarningEvent) and fmt != "stream-json" and not progress:
            print(f"agent: warning: {event.message}", file=err, flush=True)
        if isinstance(event, CompactEvent):
            compactions.append(event.to_json())
        if fmt == "stream-json":
            if not isinstance(event, AssistantTextDelta | ThinkingTextDelta | StatusEvent):
                out.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
                out.flush()
        elif progress:
            line = _progress_line(event)
            if line:
                print(line, file=err, flush=True)
    if fmt == "text" and result is not None and result.text:
        out.write(result.text.rstrip("\n") + "\n")
    elif fmt == "json":
        empty = {"type": "result", "text": "", "stop": "error"}
        payload: dict[str, Any] = result.to_json() if result else empty
        payload.update(errors=errors, compactions=compactions)
        out.write(json.dumps(payload, ensure_ascii=False) + "\n")
    out.flush()
    return exit_code(result)


def _progress_line(event: Event) -> str | None:
    if isinstance(event, ThinkingText):
        first = " ".join(event.text.strip().splitlines()[0].split())
        return f"∴ {first[:100]}" + ("…" if len(first) > 100 else "")
    if isinstance(event, ToolCallEvent):
        return f"• {event.name} {describe_call(event.name, event.input)}".rstrip()
    if isinstance(event, ToolResultEvent) and event.is_error:
        return f"  ✗ {event.content.splitlines()[0][:100] if event.content else 'error'}"
    if isinstance(event, CompactEvent):
        before, after = event.tokens_before, event.tokens_after
        return f"⟳ context {event.layer} ({event.trigger}): {before:,} → {after:,} tokens"
    if isinstance(event, RetryEvent):
        return f"… retry {event.attempt} in {event.delay:.1f}s: {event.reason}"
    if isinstance(event, WarningEvent):
        return f"! {event.message}"
    return None

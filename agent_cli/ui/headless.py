"""Headless output (`agent -p`): render the loop's events as text, one JSON object, or JSON lines.

- text: the final answer on stdout; progress lines (tools, compactions, retries)
  on stderr only when stderr is a terminal; warnings, errors and what the user's
  hooks print on stderr always.
- json: one object at the end: the result plus the errors and compactions seen.
- stream-json: one JSON object per line with a `type` field, flushed as it happens; the first
  is Claude Code's init event, and the result has its fields too (headless_report.py). What is
  only for a live screen (text deltas, the spinner's status, a running tool's progress) is left out.
- a refused tool call is said on stderr in text output (the progress lines say it on a terminal).

What a person reads is made safe (`core.text.visible`): the lines on stderr
always, and the answer when stdout is a terminal. An answer piped or
redirected is data (a script, a patch, a file's content) and is written as
the model gave it, as `cat` would; whoever shows it on a terminal later
does so at their own word. JSON escapes C0 controls by itself; the C1
controls, DEL and the invisible format characters are escaped too (`\u009b`:
the same JSON value), so not even stream-json piped to a terminal carries one.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from typing import Any, Literal, TextIO

from agent_cli.core.events import (
    AssistantTextDelta,
    CompactEvent,
    ErrorEvent,
    Event,
    GoalEvent,
    HookOutput,
    ResultEvent,
    RetryEvent,
    StatusEvent,
    ThinkingText,
    ThinkingTextDelta,
    ToolCallEvent,
    ToolProgress,
    ToolResultEvent,
    WarningEvent,
    WebSearchEvent,
)
from agent_cli.core.text import one_line, visible
from agent_cli.tools.base import ToolRegistry
from agent_cli.tools.registry import known_tools
from agent_cli.ui import ending
from agent_cli.ui.headless_report import HeadlessReport, refusal_line
from agent_cli.ui.reports import describe_call

__all__ = ["OutputFormat", "exit_code", "json_line", "render_aside", "render_headless"]

OutputFormat = Literal["text", "json", "stream-json"]

# Inside JSON text these characters can only stand in strings, where `\uXXXX` is the same value.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def json_line(value: Any) -> str:
    """`value` as one line of JSON holding no character a terminal would act on."""
    text = json.dumps(value, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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
    tools: ToolRegistry | None = None,
    init: dict[str, Any] | None = None,
    report: HeadlessReport | None = None,
) -> int:
    """Consume the events of one task; return the process exit code. `tools` (the session's) say
    how a call is shown on the progress lines; `init` opens stream-json, and `report` adds Claude
    Code's fields to the result (headless_report.py)."""
    tools = tools or known_tools()
    out = out or sys.stdout
    err = err or sys.stderr
    progress = fmt == "text" and err.isatty()
    result: ResultEvent | None = None
    errors: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    if fmt == "stream-json" and init is not None:
        out.write(json_line(init) + "\n")
        out.flush()
    for event in events:
        refused = report.watch(event) if report is not None else None
        if refused is not None and fmt == "text" and not progress:
            print(visible(refusal_line(refused.name, refused.content)), file=err, flush=True)
        if isinstance(event, ResultEvent):
            result = event
        if isinstance(event, ErrorEvent):
            errors.append(event.to_json())
            # A SIGTERM or SIGHUP also interrupts the turn; the CLI says which signal, not "the user".
            if fmt != "stream-json" and not (event.kind == "interrupted" and ending.received()):
                print(f"agent: {visible(event.message)}", file=err, flush=True)
        if isinstance(event, WarningEvent) and fmt != "stream-json" and not progress:
            print(f"agent: warning: {visible(event.message)}", file=err, flush=True)
        if isinstance(event, GoalEvent) and fmt != "stream-json":
            print(f"agent: goal: {visible(event.message)}", file=err, flush=True)
        if isinstance(event, HookOutput) and fmt != "stream-json":
            print(f"agent: {event.hook} hook: {visible(event.text)}", file=err, flush=True)
        if isinstance(event, CompactEvent):
            compactions.append(event.to_json())
        if fmt == "stream-json":
            if isinstance(event, ResultEvent) and report is not None:
                out.write(json_line(report.result(event)) + "\n")
            elif not isinstance(event, AssistantTextDelta | ThinkingTextDelta | StatusEvent | ToolProgress):
                out.write(json_line(event.to_json()) + "\n")
                out.flush()
        elif progress:
            line = _progress_line(event, tools)
            if line:
                print(visible(line), file=err, flush=True)
    if fmt == "text" and result is not None and result.text:
        answer = result.text.rstrip("\n")
        out.write((visible(answer) if _isatty(out) else answer) + "\n")
    elif fmt == "json":
        empty = {"type": "result", "text": "", "stop": "error"}
        payload: dict[str, Any] = empty
        if result is not None:
            payload = report.result(result) if report is not None else result.to_json()
        payload.update(errors=errors, compactions=compactions)
        out.write(json_line(payload) + "\n")
    out.flush()
    return exit_code(result)


def render_aside(events: Iterable[Event], err: TextIO | None = None) -> None:
    """Events after the task's result (the SessionEnd hooks'): their warnings, errors and hook
    output as lines on stderr, whatever the format, so stdout ends with the result."""
    err = err or sys.stderr
    for event in events:
        if isinstance(event, WarningEvent | ErrorEvent):
            print(f"agent: warning: {visible(event.message)}", file=err, flush=True)
        elif isinstance(event, HookOutput):
            print(f"agent: {event.hook} hook: {visible(event.text)}", file=err, flush=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def _progress_line(event: Event, tools: ToolRegistry) -> str | None:
    if isinstance(event, ThinkingText):
        first = " ".join(event.text.strip().split("\n")[0].split())
        return f"∴ {first[:100]}" + ("…" if len(first) > 100 else "")
    if isinstance(event, ToolCallEvent):
        return f"• {event.name} {describe_call(tools.view(event.name), event.input)}".rstrip()
    if isinstance(event, WebSearchEvent):
        return f"• searched: {one_line(event.query)}"
    if isinstance(event, ToolResultEvent) and event.is_error:
        first = event.content.split("\n")[0][:100] if event.content else "error"
        return f"  ✗ {first}"
    if isinstance(event, CompactEvent):
        before, after = event.tokens_before, event.tokens_after
        return f"⟳ context {event.layer} ({event.trigger}): {before:,} → {after:,} tokens"
    if isinstance(event, RetryEvent):
        return f"… retry {event.attempt} in {event.delay:.1f}s: {event.reason}"
    if isinstance(event, WarningEvent):
        return f"! {event.message}"
    return None

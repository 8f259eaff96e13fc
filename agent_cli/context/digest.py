"""The no-LLM fallback record: a deterministic digest of a span.

Pure. When the summary call fails, times out, returns nothing, or returns
something that does not shrink the request, L2 still replaces the span, with
this digest instead of dropping it (the JS seed drops the span on failure):
the earlier record's content, the files touched and how, the commands run with
their exit codes, the latest errors and the last thing the assistant said.
The user's messages are added verbatim by `sections`, as for a model record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_cli.context.plain import abbreviate
from agent_cli.context.sections import USER_END, USER_HEADER
from agent_cli.messages import Message, ToolUse

__all__ = ["build_digest"]

_EXIT_RE = re.compile(r"exit(?:ed)?(?:[ _]code|[ _]status)?\s*[:=]?\s*(-?\d+)", re.IGNORECASE)
COMMAND_KEYS = ("command", "cmd")
PATH_KEYS = ("path", "file_path")
MAX_COMMANDS = 40
MAX_ERRORS = 3
EARLIER_CHARS = 6_000
LAST_TEXT_CHARS = 1_500


def _strip_users(record: str) -> str:
    """An earlier record without its user-message section (rebuilt separately)."""
    start = record.find(USER_HEADER)
    if start == -1:
        return record
    end = record.find(USER_END, start)
    return record[:start] + (record[end + len(USER_END) :] if end != -1 else "")


def _outcome(result_text: str, is_error: bool) -> str:
    match = _EXIT_RE.search(result_text)
    if match:
        return f"exit {match.group(1)}"
    return "failed" if is_error else "ok"


def build_digest(span: Sequence[Message]) -> str:
    """The digest's sections for `span` (without the user-message section)."""
    calls: dict[str, ToolUse] = {}
    files: dict[str, list[str]] = {}
    commands: list[str] = []
    errors: list[str] = []
    earlier: list[str] = []
    last_text = ""
    for message in span:
        summary = message.summary
        if summary is not None:
            earlier.append(_strip_users(summary.text).strip())
            continue
        if message.role == "assistant" and message.text.strip():
            last_text = message.text.strip()
        for use in message.tool_uses:
            calls[use.id] = use
            for key in PATH_KEYS:
                path = use.input.get(key)
                if isinstance(path, str) and path:
                    verbs = files.setdefault(path, [])
                    if use.name not in verbs:
                        verbs.append(use.name)
        for result in message.tool_results:
            call = calls.get(result.tool_use_id)
            name = call.name if call else "tool"
            command = next(
                (call.input[k] for k in COMMAND_KEYS if call and isinstance(call.input.get(k), str)), None
            )
            if command is not None:
                commands.append(
                    f"- `{abbreviate(str(command), 200)}` -> {_outcome(result.content, result.is_error)}"
                )
            if result.is_error:
                lines = [ln for ln in result.content.splitlines() if ln.strip()][:2]
                errors.append(f"- {name}: " + abbreviate(" | ".join(lines), 300))
    parts: list[str] = []
    if earlier:
        parts.append("## From the earlier record\n" + abbreviate("\n\n".join(earlier), EARLIER_CHARS))
    if files:
        parts.append("## Files touched\n" + "\n".join(f"- {p} ({', '.join(v)})" for p, v in files.items()))
    if commands:
        dropped = len(commands) - MAX_COMMANDS
        shown = commands[-MAX_COMMANDS:]
        if dropped > 0:
            shown.insert(0, f"- ({dropped} earlier commands not listed)")
        parts.append("## Commands run\n" + "\n".join(shown))
    if errors:
        parts.append("## Latest errors\n" + "\n".join(errors[-MAX_ERRORS:]))
    if last_text:
        parts.append(
            "## The assistant's last words before this point\n" + abbreviate(last_text, LAST_TEXT_CHARS)
        )
    return "\n\n".join(parts)

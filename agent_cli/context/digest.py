"""The no-LLM fallback record: a deterministic digest of a span.

Pure. When the summary call fails, times out, returns nothing, or returns
something that does not shrink the request, L2 still replaces the span, with
this digest instead of dropping it (the JS seed drops the span on failure):
the earlier record's content, the files touched and how, the commands run with
their exit codes, the latest errors, the last thing the assistant said and the
latest next step it stated since the user's last message (a line that starts
"Next", "Plan:" or "TODO"), which a later reply would otherwise hide.
The user's messages are added verbatim by `sections`, as for a model record.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.context.clear import is_stub, stub_failure
from agent_cli.context.plain import abbreviate
from agent_cli.context.sections import strip_user_messages
from agent_cli.context.signals import call_paths, command_of, failure, last_exit_code, stated_next_step
from agent_cli.context.thresholds import is_engine_note
from agent_cli.core.messages import Message, ToolResult, ToolUse

__all__ = ["build_digest"]

MAX_COMMANDS = 40
MAX_ERRORS = 3
EARLIER_CHARS = 6_000
LAST_TEXT_CHARS = 1_500


def _outcome(result: ToolResult) -> str:
    """How a command ended: its last stated exit code (the status line comes last), else ok / failed."""
    failed = failure(result)
    if failed is not None and failed.status and not failed.status.startswith("exit code"):
        return failed.status  # killed by a signal, timed out, cancelled
    code = last_exit_code(result.content)
    if code is not None:
        return f"exit {code}"
    return "failed" if result.is_error else "ok"


def build_digest(span: Sequence[Message]) -> str:
    """The digest's sections for `span` (without the user-message section)."""
    calls: dict[str, ToolUse] = {}
    files: dict[str, list[str]] = {}
    commands: list[str] = []
    errors: list[str] = []
    earlier: list[str] = []
    last_text = next_step = ""
    for message in span:
        summary = message.summary
        if summary is not None:
            earlier.append(strip_user_messages(summary.text).strip())
            continue
        if message.native is not None:  # the provider's record: what of it may be read
            earlier.append(message.native.text.strip())
            continue
        if message.is_plain_user and not is_engine_note(message):
            next_step = ""  # a new request: the plan stated before it is no longer the next step
        if message.role == "assistant" and message.text.strip():
            last_text = message.text.strip()
            next_step = stated_next_step(last_text) or next_step
        for use in message.tool_uses:
            calls[use.id] = use
            for path in call_paths(use):
                verbs = files.setdefault(path, [])
                if use.name not in verbs:
                    verbs.append(use.name)
        for result in message.tool_results:
            call = calls.get(result.tool_use_id)
            name = call.name if call else "tool"
            command = command_of(call)
            if command is not None:
                commands.append(f"- `{abbreviate(command, 200)}` -> {_outcome(result)}")
            # A cleared result's error is the one its stub records (the output itself is on disk).
            failed = stub_failure(result.content) if is_stub(result) else failure(result, 300)
            if failed is not None:
                status = f" ({failed.status})" if failed.status else ""
                what = f"`{abbreviate(command, 80)}`" if command is not None else name
                errors.append(f"- {what}{status}: {failed.line}")
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
        last_words = abbreviate(last_text, LAST_TEXT_CHARS)
        parts.append("## The assistant's last words before this point\n" + last_words)
        if next_step and next_step not in last_words:
            parts.append("## The next step it stated last\n" + next_step)
    return "\n\n".join(parts)

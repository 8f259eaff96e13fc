"""Messages rendered as plain text, with long tool outputs abbreviated.

Used where messages cannot be sent as themselves: the chunks of a
conversation too long for one summary request, and the no-LLM digest.
Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_cli.core.messages import Message, ToolUse

__all__ = ["abbreviate", "call_text", "render_message", "render_messages", "tool_calls_by_id"]

# Tool outputs in a rendered transcript keep this many characters (head + tail).
OUTPUT_CHARS = 2_000
TEXT_CHARS = 6_000


def abbreviate(text: str, limit: int) -> str:
    """`text` if short, else its head and tail around a note of what was left out."""
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit:,} characters left out ...]\n{text[-tail:]}"


def call_text(use: ToolUse) -> str:
    args = json.dumps(dict(use.input), ensure_ascii=False, sort_keys=True)
    return f"{use.name} {abbreviate(args, 400)}"


def tool_calls_by_id(messages: Sequence[Message]) -> dict[str, ToolUse]:
    return {use.id: use for m in messages for use in m.tool_uses}


def render_message(message: Message, calls: dict[str, ToolUse], *, output_chars: int = OUTPUT_CHARS) -> str:
    """One message as text lines: `USER:`, `ASSISTANT:`, `TOOL CALL`, `TOOL RESULT`."""
    lines: list[str] = []
    who = "USER" if message.role == "user" else "ASSISTANT"
    summary = message.summary
    if summary is not None:
        lines.append(f"EARLIER RECORD:\n{summary.text}")
    if message.native is not None:  # the provider's record: what of it may be read
        lines.append(f"EARLIER RECORD (the provider's):\n{message.native.text}")
    text = message.text if summary is None else ""
    if text:
        lines.append(f"{who}: {abbreviate(text, TEXT_CHARS)}")
    for use in message.tool_uses:
        lines.append(f"TOOL CALL {call_text(use)}")
    for result in message.tool_results:
        call = calls.get(result.tool_use_id)
        name = call.name if call else "tool"
        status = "ERROR" if result.is_error else "RESULT"
        lines.append(f"TOOL {status} ({name}):\n{abbreviate(result.content, output_chars)}")
    for image in message.images:  # its pixels cannot be text: its name and size stand for it
        lines.append(f"IMAGE {image.name} ({image.width}x{image.height} px)")
    return "\n".join(lines)


def render_messages(messages: Sequence[Message], *, output_chars: int = OUTPUT_CHARS) -> list[str]:
    """Each message rendered; tool results are titled with their call's name."""
    calls = tool_calls_by_id(messages)
    return [render_message(m, calls, output_chars=output_chars) for m in messages]

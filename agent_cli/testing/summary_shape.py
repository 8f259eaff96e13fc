"""A summary request recognised by its shape: what acceptance checks and fakes answer as one.

A *summary request* is a request with tool calls switched off (`tool_choice` none, or no tools at
all) whose last item is a user message ending in a text block: the instruction to summarize. No
words are read, so the user's messages and the carried records may say anything; a check that read
them would tempt a change to the user's text to suit it.

The body is a request as sent on the wire (Anthropic Messages, Chat Completions or Responses), as
`fakeserver.RecordedRequest.body` holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["is_summary_request"]


def is_summary_request(body: Mapping[str, Any]) -> bool:
    """A summary request as the acceptance checks see one, by its structure only: tool calls switched
    off (`tool_choice` none, or no tools) and a text block ending the last user message. No words
    are read: the user's messages and the records may say anything."""
    choice = body.get("tool_choice")
    off = not body.get("tools") or choice in ({"type": "none"}, "none")
    items = body.get("messages") or body.get("input") or []
    users = [m for m in items if isinstance(m, dict) and m.get("role") == "user"]
    if not off or not users or items[-1] is not users[-1]:
        return False
    content = users[-1].get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return bool(content) and content[-1].get("type") in ("text", "input_text")

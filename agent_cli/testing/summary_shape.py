"""A summary request recognised by its shape: what acceptance checks and fakes answer as one.

A *summary request* ends in a user message whose last block is a text block, the instruction, and
comes in one of two forms (../shared/TESTING-NOTES.md):

- tool calls switched off (`tool_choice` none, or no tools at all); no words are read;
- the main requests' tools and `tool_choice` kept (so it reads the cached conversation: on
  Anthropic a `tool_choice` change invalidates the cached messages), the instruction opening with
  the exact tag `<compaction-request>` and asking, after it, to summarize with that verb
  (summarize, summarise, summarizes, summarizing).

Nothing else is read, so the user's messages and the carried records may say anything; a check
that read them would tempt a change to the user's text to suit it.

The body is a request as sent on the wire (Anthropic Messages, Chat Completions or Responses), as
`fakeserver.RecordedRequest.body` holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["TAG", "is_summary_request"]

TAG = "<compaction-request>"
_ASKS = re.compile(r"\bsummari[sz](?:e|es|ing)\b", re.IGNORECASE)


def _last_text(content: Any) -> str | None:
    """The text of the message's last block, when it is a text block."""
    if isinstance(content, str):
        return content
    if not content or not isinstance(content[-1], Mapping):
        return None
    last = content[-1]
    return str(last.get("text") or "") if last.get("type") in ("text", "input_text") else None


def is_summary_request(body: Mapping[str, Any]) -> bool:
    """A summary request as the acceptance checks see one, by its structure only (the module
    docstring's two forms)."""
    choice = body.get("tool_choice")
    off = not body.get("tools") or choice in ({"type": "none"}, "none")
    items = body.get("messages") or body.get("input") or []
    users = [m for m in items if isinstance(m, dict) and m.get("role") == "user"]
    if not users or items[-1] is not users[-1]:
        return False
    text = _last_text(users[-1].get("content"))
    if text is None:
        return False
    if off:
        return bool(text.strip())
    return text.startswith(TAG) and _ASKS.search(text, len(TAG)) is not None

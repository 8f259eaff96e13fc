"""What the end-to-end mode's fake model reads out of a request body (the Anthropic wire format):
its text as the replay reads a request, its tool results by call id, and a summary request's
messages as the stand-ins' entries (a condensed record, or the text chunks the product sends for
a span too long for one request, read back into their pieces: `text_entries`, which the replay's
stand-ins use for ours' chunk requests too)."""

from __future__ import annotations

import json
import re
from typing import Any

from bench_standins import Entry

__all__ = ["request_entries", "request_text", "text_entries", "tool_results"]

# The product's condensed record (agent_cli.context.record_parts.assemble_record), as the wire carries it.
_RECORD = re.compile(r"^Condensed (?:record|mechanical digest \(written by code, not by a model\)) of the")
# A summary request over text chunks (agent_cli.context.summary_request.run_summary).
_CHUNK_HEAD = "EARLIER CONDENSED RECORD:\n"
_CHUNK_PART = re.compile(r"CONVERSATION TRANSCRIPT, PART \d+ OF \d+:\n")
# What agent_cli.context.plain.render_message writes at the start of each piece.
_RENDERED = re.compile(
    r"^(USER: |ASSISTANT: |TOOL CALL |TOOL (?:RESULT|ERROR) \([^)\n]*\):\n|EARLIER RECORD:\n)", re.M
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in ("signature", "data") for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _block_text(content: Any) -> str:
    """A tool result's text (a string, or text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(str(b.get("text", "")) for b in texts)
    return ""


def request_text(body: dict[str, Any]) -> str:
    """Every string of the request's messages (texts, tool inputs and results), as the replay reads
    a request: the conversation, not the system prompt or the tool list."""
    return "\n".join(_strings(body.get("messages", [])))


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    """The request's tool results by call id: their text."""
    return {
        str(b.get("tool_use_id")): _block_text(b.get("content"))
        for m in body.get("messages", [])
        for b in _blocks(m)
        if b.get("type") == "tool_result"
    }


def text_entries(text: str) -> list[Entry]:
    """A user text block: a condensed record, a rendered transcript chunk, or what the user said."""
    if _RECORD.match(text):
        return [("summary", text)]
    part = _CHUNK_PART.search(text)
    if part is None:
        return [("user", text)]
    out: list[Entry] = []
    head = text[: part.start()]
    if head.startswith(_CHUNK_HEAD) and head[len(_CHUNK_HEAD) :].strip():
        out.append(("summary", head[len(_CHUNK_HEAD) :].strip()))
    body = text[part.end() :]
    marks = list(_RENDERED.finditer(body))
    for n, mark in enumerate(marks):
        piece = body[mark.end() : marks[n + 1].start() if n + 1 < len(marks) else len(body)].rstrip("\n")
        kind = mark.group(1)
        if kind.startswith("TOOL CALL"):
            role, piece = "assistant", f"[tool call {piece}]"
        elif kind.startswith("TOOL"):
            role = "tool"
        elif kind.startswith("EARLIER"):
            role = "summary"
        else:
            role = "user" if kind.startswith("USER") else "assistant"
        if role == "assistant" and out and out[-1][0] == "assistant":
            out[-1] = ("assistant", out[-1][1] + "\n" + piece)
        else:
            out.append((role, piece))
    return out


def request_entries(body: dict[str, Any]) -> list[Entry]:
    """A summary request's messages as the stand-ins read them: user text -> "user", assistant text
    and tool calls -> "assistant", tool results -> "tool", a condensed record -> "summary"; the
    final instruction (the last user message's last text block) left out."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    out: list[Entry] = []
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        if i == len(messages) - 1 and blocks and blocks[-1].get("type") == "text":
            blocks = blocks[:-1]
        if message.get("role") == "assistant":
            parts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
            parts += [
                f"[tool call {b.get('name')} {json.dumps(b.get('input') or {}, sort_keys=True)}]"
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            parts = [p for p in parts if p.strip()]
            if parts:
                out.append(("assistant", "\n".join(parts)))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                out.append(("tool", _block_text(block.get("content"))))
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                out += text_entries(str(block["text"]))
    return out

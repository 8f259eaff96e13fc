"""Recorded Claude Code sessions read back as the requests they sent (../shared/sessions/real/FORMAT.md).

A *session file* is one conversation: a main thread, or one sub-agent's file. Each distinct
assistant `message.id` is one API request; its input is every message before it since the last
compaction boundary (consecutive assistant lines of one id are one message, the user lines after it
the next message). Per request we keep what the API reported (`Recorded`), its time, its model and
the blocks it sent (`Block`: a key naming its content, its raw tiktoken count, whether it is a
thinking block, the index of its message in the thread). Two kinds of user message are told apart:
one of tool results only (a step inside a turn) and one with other content (a new turn: the API
then drops thinking blocks of the messages before it, see billing/anthropic.py). A parallel batch's
results are put in the order of their calls, as Claude Code sends them, and the request names the
block that arrived last (`SessionRequest.mark`), where Claude Code puts its breakpoint.

Stream-json files (skillsbench) carry no timestamps and no initial prompt: requests are taken to
follow each other `STREAM_GAP_S` apart, and the prompt is an empty first message whose tokens the
frame absorbs. Nothing here bills anything; `cache_validation.py` does.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cli.tokens.encodings import get_encoding
from agent_cli.tokens.tally import TOOL_RESULT_OVERHEAD, TOOL_USE_OVERHEAD

__all__ = ["STREAM_GAP_S", "Block", "Recorded", "SessionRequest", "raw_tokens", "read_session"]

NOTIFICATION = "<task-notification>"  # how Claude Code opens the turn it starts when a background task ends
STREAM_GAP_S = 10.0  # stream-json files have no timestamps: requests taken 10 s apart (within any TTL)

_ENCODER: Any = None


def raw_tokens(text: str) -> int:
    """cl100k_base tokens of `text` (the counter's local count before its ratio)."""
    global _ENCODER
    if _ENCODER is None:
        _ENCODER = get_encoding("cl100k_base")
    return len(_ENCODER.encode_ordinary(text)) if text else 0


@dataclass(frozen=True)
class Block:
    key: str
    raw: int
    thinking: bool
    message: int
    ref: str = ""  # the tool call's id, on a tool_use or tool_result block


@dataclass(frozen=True)
class Recorded:
    input: int
    read: int
    write: int
    write_1h: int

    @property
    def prompt(self) -> int:
        return self.input + self.read + self.write


@dataclass
class SessionRequest:
    """One API request: its id, model, time (s), blocks sent, what was billed, and its thread's state."""

    id: str
    model: str
    at: float
    blocks: list[Block]
    recorded: Recorded
    turn_start: int  # index of the newest message that opened a turn (-1: none)
    epoch: int  # bumped at each compaction boundary: a new thread
    after_boundary: bool = False
    mark: str = ""  # the key of the block Claude Code put the message breakpoint on ("": the last)
    notification: bool = False  # the newest turn opened with Claude Code's <task-notification> message


@dataclass
class _Thread:
    messages: list[list[Block]] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    turn_start: int = -1
    notification: bool = False  # the newest turn opened with a <task-notification> message

    def add(self, role: str, blocks: list[Block], opens_turn: bool, notification: bool = False) -> None:
        if role == "user" and self.roles and self.roles[-1] == "user":
            self.messages[-1].extend(blocks)  # consecutive user lines are one message
        else:
            self.messages.append(blocks)
            self.roles.append(role)
        if opens_turn:
            self.turn_start = len(self.messages) - 1
            self.notification = notification

    def send_order(self) -> str:
        """Put the newest user message's tool results in the order of their calls, as they are sent,
        and return the key of the block that arrived last: Claude Code marks that one, so with a
        parallel batch the results sorted after it go uncached (the recorded input_tokens)."""
        if len(self.messages) < 2 or self.roles[-1] != "user":
            return ""
        message = self.messages[-1]
        last = message[-1].key if message else ""
        calls = [b.ref for b in self.messages[-2] if b.ref]
        if calls:
            rank = {ref: i for i, ref in enumerate(calls)}
            message.sort(key=lambda b: rank.get(b.ref, len(calls)))
        return last


def _block_text(block: dict[str, Any]) -> tuple[str, int, bool]:
    """The text a block costs, its fixed overhead, and whether it is thinking."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", "")), 0, False
    if kind == "thinking":
        return str(block.get("thinking", "")), 0, True
    if kind == "redacted_thinking":
        return str(block.get("data", "")), 0, True
    if kind == "tool_use":
        return str(block.get("name", "")) + json.dumps(block.get("input", {})), TOOL_USE_OVERHEAD, False
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            text = "".join(str(c.get("text", "")) if isinstance(c, dict) else str(c) for c in content)
        else:
            text = str(content or "")
        return text, TOOL_RESULT_OVERHEAD, False
    return json.dumps(block, sort_keys=True), 0, False


def _blocks(content: Any, message: int, salt: str) -> tuple[list[Block], bool]:
    """The blocks of one line's content, and whether it holds more than tool results."""
    items = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    out, opens = [], False
    for i, item in enumerate(items):
        text, overhead, thinking = _block_text(item)
        digest = hashlib.sha256(f"{salt}\0{i}\0{json.dumps(item, sort_keys=True)}".encode()).hexdigest()[:24]
        ref = str(item.get("id") or item.get("tool_use_id") or "") if isinstance(item, dict) else ""
        out.append(Block(digest, raw_tokens(text) + overhead, thinking, message, ref))
        opens = opens or item.get("type") != "tool_result"
    return out, opens


def _seconds(stamp: str | None) -> float | None:
    if not stamp:
        return None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _usage(usage: dict[str, Any]) -> Recorded:
    split = usage.get("cache_creation") or {}
    return Recorded(
        int(usage.get("input_tokens", 0)),
        int(usage.get("cache_read_input_tokens", 0)),
        int(usage.get("cache_creation_input_tokens", 0)),
        int(split.get("ephemeral_1h_input_tokens", 0)),
    )


def read_session(path: Path) -> list[SessionRequest]:
    """Every request of one session file, in the order sent."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    stream = any(o.get("type") == "system" and o.get("subtype") == "init" for o in lines[:1])
    subagent = ".subagent-" in path.name
    thread, epoch, boundary = _Thread(), 0, False
    if stream:
        thread.add("user", [Block("unrecorded-prompt", 0, False, 0)], True)
    requests: list[SessionRequest] = []
    open_id: str | None = None
    where: dict[str, int] = {}  # message id -> its index in the thread (parallel calls interleave lines)
    clock = 0.0
    for line in lines:
        kind = line.get("type")
        if kind == "system" and line.get("subtype") == "compact_boundary":
            thread, epoch, boundary, open_id, where = _Thread(), epoch + 1, True, None, {}
            continue
        if kind not in ("user", "assistant") or (
            line.get("isVisibleInTranscriptOnly") and not line.get("isCompactSummary")  # the summary is sent
        ):
            continue
        if line.get("isSidechain") and not subagent:
            continue
        message = line.get("message") or {}
        if kind == "assistant":
            mid = str(message.get("id"))
            if mid in where and mid != open_id:
                blocks, _ = _blocks(
                    message.get("content"), where[mid], mid + str(len(thread.messages[where[mid]]))
                )
                thread.messages[where[mid]].extend(blocks)
                continue
            if mid != open_id:
                at = _seconds(line.get("timestamp"))
                clock = at if at is not None else clock + STREAM_GAP_S
                mark = thread.send_order()
                visible = [b for m in thread.messages for b in m]
                requests.append(
                    SessionRequest(
                        mid,
                        str(message.get("model", "")),
                        clock,
                        visible,
                        _usage(message.get("usage") or {}),
                        thread.turn_start,
                        epoch,
                        boundary,
                        mark,
                        thread.notification,
                    )
                )
                boundary = False
                thread.add("assistant", [], False)
                open_id = mid
                where[mid] = len(thread.messages) - 1
            blocks, _ = _blocks(
                message.get("content"), len(thread.messages) - 1, mid + str(len(thread.messages[-1]))
            )
            thread.messages[-1].extend(blocks)
            continue
        open_id = None
        index = (
            len(thread.messages)
            if not thread.roles or thread.roles[-1] != "user"
            else len(thread.messages) - 1
        )
        content = message.get("content")
        blocks, opens = _blocks(content, index, str(line.get("uuid", len(requests))))
        thread.add("user", blocks, opens, isinstance(content, str) and content.startswith(NOTIFICATION))
    return requests

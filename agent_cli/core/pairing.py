"""Tool-call pairing in a history: checking it and repairing it (pure).

Every provider rejects a history where a tool call has no result or a result
has no call. Histories come from places that can break that rule: a session
log cut by a crash, a tool round interrupted by Ctrl-C, a compaction bug. The
rule this module enforces, matching the Anthropic and OpenAI APIs:

- every `ToolUse` in an assistant message is answered by exactly one
  `ToolResult` in the user message right after it;
- tool results appear only there, before any other block of that message;
- tool uses appear only in assistant messages, tool results only in user ones;
- tool use ids are unique within one assistant message;
- no message is empty (no blocks, or only blank text).

`repair_history` returns a history that satisfies `pairing_errors(...) == []`,
changing as little as it can: messages that need no change keep their
identity (and id); changed ones get a new id, since an id names one content.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.core.messages import Block, Message, TextBlock, ToolResult, ToolUse

__all__ = ["INTERRUPTED_RESULT", "pairing_errors", "repair_history"]

INTERRUPTED_RESULT = "interrupted: the tool did not finish (the session was stopped)"


def _is_empty(message: Message) -> bool:
    return all(isinstance(b, TextBlock) and not b.text.strip() for b in message.content)


def pairing_errors(messages: Sequence[Message]) -> list[str]:
    """Every violation of the pairing rules, one readable line each; [] when valid."""
    errors: list[str] = []
    pending: list[str] = []  # unanswered tool_use ids of the previous assistant message
    pending_at = -1

    def unanswered(where: str) -> None:
        errors.extend(f"message {pending_at}: tool_use {p} has no tool_result {where}" for p in pending)

    for i, msg in enumerate(messages):
        at = f"message {i} ({msg.role}, {msg.id})"
        if _is_empty(msg):
            errors.append(f"{at}: empty message")
        if msg.role == "assistant":
            unanswered("in the next message")
            stray = msg.tool_results
            errors.extend(f"{at}: tool_result {r.tool_use_id} in an assistant message" for r in stray)
            ids = [u.id for u in msg.tool_uses]
            dups = sorted({x for x in ids if ids.count(x) > 1})
            errors.extend(f"{at}: duplicate tool_use id {d}" for d in dups)
            pending, pending_at = list(dict.fromkeys(ids)), i
            continue
        errors.extend(f"{at}: tool_use {u.id} in a user message" for u in msg.tool_uses)
        seen_other = False
        for block in msg.content:
            if not isinstance(block, ToolResult):
                seen_other = True
            elif block.tool_use_id not in pending:
                errors.append(f"{at}: orphan tool_result {block.tool_use_id} (no matching call before it)")
            else:
                pending.remove(block.tool_use_id)
                if seen_other:
                    errors.append(f"{at}: tool_result {block.tool_use_id} after other content")
        unanswered("in the next message")
        pending = []
    unanswered("(history ends)")
    return errors


def _interrupted(use_id: str) -> ToolResult:
    return ToolResult(use_id, INTERRUPTED_RESULT, is_error=True)


def _repair_assistant(msg: Message) -> Message | None:
    """Drop stray tool results and duplicate tool use ids; None when nothing is left."""
    kept: list[Block] = []
    ids: set[str] = set()
    for block in msg.content:
        if isinstance(block, ToolResult):
            continue
        if isinstance(block, ToolUse):
            if block.id in ids:
                continue
            ids.add(block.id)
        kept.append(block)
    if len(kept) == len(msg.content):
        return msg
    candidate = msg.replace(kept)
    return None if _is_empty(candidate) else candidate


def _repair_user(msg: Message, pending: Sequence[str]) -> Message | None:
    """Answer `pending` calls in this user message, in call order, results first.

    Results for anything else (orphans, duplicates) and stray tool uses are
    dropped. None when nothing is left.
    """
    answers: dict[str, ToolResult] = {}
    others: list[Block] = []
    for block in msg.content:
        if isinstance(block, ToolResult):
            if block.tool_use_id in pending and block.tool_use_id not in answers:
                answers[block.tool_use_id] = block
        elif not isinstance(block, ToolUse):
            others.append(block)
    # Keep the existing results in their own order, then answer the rest.
    results = list(answers.values()) + [_interrupted(u) for u in pending if u not in answers]
    content: tuple[Block, ...] = (*results, *others)
    if content == msg.content:
        return msg
    candidate = msg.replace(content)
    return None if _is_empty(candidate) else candidate


def repair_history(messages: Sequence[Message]) -> list[Message]:
    """A history with valid tool pairing (see the module docstring).

    Unanswered calls get an error result saying the tool was interrupted, in
    the following user message or, when there is none, a new one; orphan
    results and empty messages are removed.
    """
    out: list[Message] = []
    pending: list[str] = []
    for original in messages:
        if _is_empty(original):
            continue
        if original.role == "assistant":
            fixed = _repair_assistant(original)
            if fixed is None:
                continue
            if pending:
                out.append(Message.of("user", (_interrupted(u) for u in pending)))
            out.append(fixed)
            pending = [u.id for u in fixed.tool_uses]
        else:
            fixed = _repair_user(original, pending)
            pending = []
            if fixed is not None:
                out.append(fixed)
    if pending:
        out.append(Message.of("user", (_interrupted(u) for u in pending)))
    return out

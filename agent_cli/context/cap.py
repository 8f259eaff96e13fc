"""L0: an oversized tool result cut to head + tail as it arrives, once its full text is saved.

    cap_arrival(use, result, limit, counter=..., archive=..., clock=...)
        -> (the result as the history takes it, the CompactEvent when it was cut)

A tool result is capped as it arrives, before it joins the history (`ContextEngine.ingest` picks the
limit: the cap the round's results share). Its full text goes to the archive first (its own output
file, named by the call's id), and the marker the cut leaves says where it is and how to see it;
when the disk refuses, the result is not cut (L1, L2 and L4 still keep the request in bounds).

The cut itself is pure (`cap_result`): given the result, its token count and where the full text
was saved, the capped result. The marker in the middle says how many lines went, where the full
text is, and how to see it (read_file with an offset for file reads, recall with a phrase for
anything). Command output keeps more tail (errors and summaries print last); file reads keep more
head. The model's own oversized calls are cut the same way (`cap_input`), on the history, by
`layers.LayerRunner`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from agent_cli.context.plain import abbreviate, call_text
from agent_cli.context.thresholds import Counter
from agent_cli.core.events import CompactEvent, CompactLayer
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.store.archive import Archive

__all__ = ["cap_arrival", "cap_input", "cap_result", "head_share"]

# Tools whose output is a file's text, paged by line number.
FILE_READERS = frozenset({"read_file", "read", "view", "cat"})
MIN_KEEP_CHARS = 200


def head_share(use: ToolUse) -> float:
    """How much of the kept text comes from the head (the rest from the tail)."""
    return 0.6 if use.name in FILE_READERS else 0.4


def _marker(use: ToolUse, omitted_lines: int, omitted_chars: int, first_cut_line: int, saved_to: str) -> str:
    path = use.input.get("path") or use.input.get("file_path")
    how = 'recall("<a phrase you expect in the missing part>")'
    if use.name in FILE_READERS and isinstance(path, str):
        args = json.dumps({"path": path, "offset": first_cut_line}, ensure_ascii=False)
        how = f"read_file {args} (lines from {first_cut_line}), or {how}"
    return (
        f"\n[... {omitted_lines:,} lines ({omitted_chars:,} characters) cut here to save context. "
        f"The full output is saved in {saved_to}. To see the missing part: {how}]\n"
    )


def cap_result(
    use: ToolUse,
    result: ToolResult,
    *,
    max_tokens: int,
    tokens: int,
    count_text: Callable[[str], int],
    saved_to: str,
) -> ToolResult:
    """`result` cut to about `max_tokens` tokens (head + marker + tail); unchanged if it fits."""
    text = result.content
    if tokens <= max_tokens or not text:
        return result
    chars_per_token = len(text) / max(tokens, 1)
    budget_chars = int(max_tokens * chars_per_token)
    capped = text
    for _ in range(4):  # shrink until the counted result fits; converges in one or two passes
        capped = _cut(use, text, budget_chars, saved_to)
        if count_text(capped) <= max_tokens:
            break
        budget_chars = int(budget_chars * 0.8)
    return ToolResult(result.tool_use_id, capped, result.is_error, result.images)


def _cut(use: ToolUse, text: str, budget_chars: int, saved_to: str) -> str:
    marker_room = 400  # the marker's own length, roughly
    keep = max(budget_chars - marker_room, MIN_KEEP_CHARS)
    head_chars = int(keep * head_share(use))
    tail_chars = keep - head_chars
    head_end = head_chars
    # Snap to line boundaries when that does not lose much of the allowance.
    nl = text.rfind("\n", 0, head_end)
    if nl >= head_end // 2:
        head_end = nl + 1
    tail_start = max(len(text) - tail_chars, head_end)
    nl = text.find("\n", tail_start)
    if nl != -1 and nl + 1 - tail_start <= tail_chars // 2 and nl + 1 < len(text):
        tail_start = nl + 1
    omitted = text[head_end:tail_start]
    if not omitted:
        return text
    first_cut_line = text.count("\n", 0, head_end) + 1
    omitted_lines = omitted.count("\n") + (0 if omitted.endswith("\n") else 1)
    marker = _marker(use, omitted_lines, len(omitted), first_cut_line, saved_to)
    return text[:head_end] + marker + text[tail_start:]


def cap_input(use: ToolUse, *, max_chars: int, saved_to: str) -> ToolUse:
    """`use` with each string argument longer than `max_chars` cut to head + marker + tail (a file's
    content written by the call, say); unchanged when none is. The call has run: what it did is on
    disk, and the full call in `saved_to`."""
    args: dict[str, object] = {}
    changed = False
    for name, value in use.input.items():
        if isinstance(value, str) and len(value) > max_chars:
            keep = max(max_chars - 300, MIN_KEEP_CHARS)
            head, tail = value[: keep * 2 // 3], value[len(value) - keep // 3 :]
            cut = len(value) - len(head) - len(tail)
            marker = (
                f"\n[... {cut:,} characters of this argument cut after the call ran, to save context. "
                f"The full call is saved in {saved_to}; "
                f'recall("{use.id}") returns it]\n'
            )
            args[name] = head + marker + tail
            changed = True
        else:
            args[name] = value
    return dataclasses.replace(use, input=args) if changed else use


# -- on arrival: saved whole, then cut -------------------------------------------------------------


def cap_arrival(
    use: ToolUse,
    result: ToolResult,
    limit: int,
    *,
    counter: Counter,
    archive: Archive,
    clock: Callable[[], float],
) -> tuple[ToolResult, CompactEvent | None]:
    """`result` of `use` cut to `limit` tokens, once its full text is on disk; as it is when it fits
    (or the disk refused it)."""
    tokens = counter.count_text(result.content)
    if tokens <= limit:
        return result, None
    start = clock()
    header = f"[full output of {call_text(use)} · id {use.id}]"
    try:
        path = str(archive.write_output(use.id, result.content, header=header))
    except OSError:  # not on disk, so not cut: L1, L2 and L4 still keep the request in bounds
        return result, None
    count = counter.count_text
    shown = archive.shown(path)
    capped = cap_result(use, result, max_tokens=limit, tokens=tokens, count_text=count, saved_to=shown)
    event = CompactEvent(
        layer=CompactLayer.CAP,
        trigger="ingest",
        messages_before=1,
        messages_after=1,
        tokens_before=tokens,
        tokens_after=count(capped.content),
        transcript=path,
        duration=clock() - start,
        detail=f"{abbreviate(call_text(use), 80)} · id {use.id}",
    )
    return capped, event

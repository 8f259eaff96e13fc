"""L0 at ingest: a tool result over its cap saved whole, then cut to head + tail, with its event.

    cap_arrival(use, result, limit, counter=..., archive=..., clock=...)
        -> (the result as the history takes it, the CompactEvent when it was cut)

A tool result is capped as it arrives, before it joins the history (`ContextEngine.ingest` picks the
limit: the cap the round's results share). Its full text goes to the archive first (its own output
file, named by the call's id), and the marker the cut leaves says where it is and how to see it;
when the disk refuses, the result is not cut (L1, L2 and L4 still keep the request in bounds). The
cut itself is pure (cap.py). The layers that act on the history, the model's own oversized calls
among them, are run by `layers.LayerRunner`.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_cli.context.cap import cap_result
from agent_cli.context.plain import abbreviate, call_text
from agent_cli.context.thresholds import Counter
from agent_cli.core.events import CompactEvent, CompactLayer
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.store.archive import Archive

__all__ = ["cap_arrival"]


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

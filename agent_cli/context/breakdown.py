"""What the context holds, by kind, for `/context`.

Pure given a counter: system prompt, tool specs, condensed records, the
conversation's own text and tool calls, tool results, and what is free, each
in tokens and as a share of the window, plus where the next layer fires. The
parts are scaled to add up to the request count the engine acts on (anchored
on the provider's own usage), so the indicator never disagrees with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.policy import Counter, Frame, Thresholds, percent
from agent_cli.messages import Message

__all__ = ["Breakdown", "compute_breakdown"]


@dataclass(frozen=True, slots=True)
class Breakdown:
    window: int
    budget: int
    total: int  # the request as the engine counts it
    system: int
    tools: int
    summary: int
    messages: int  # conversation text and tool calls
    tool_results: int
    free: int  # room left for input before the budget
    clear_at: int
    trigger_at: int
    target: int
    emergency_at: int
    auto_compact: bool  # False after the loop guard stopped automatic compaction

    def rows(self) -> list[tuple[str, int, float]]:
        """(label, tokens, % of window) for each part, free last."""
        parts = [
            ("system prompt", self.system),
            ("tool specs", self.tools),
            ("condensed records", self.summary),
            ("messages", self.messages),
            ("tool results", self.tool_results),
            ("free", self.free),
        ]
        return [(label, tokens, percent(tokens, self.window)) for label, tokens in parts]

    @property
    def next_compaction(self) -> str:
        if not self.auto_compact:
            return (
                f"automatic compaction is off after repeated failures; /compact still works "
                f"(emergency trimming at {self.emergency_at:,} tokens)"
            )
        if self.total >= self.trigger_at:
            return "before the next request"
        return (
            f"at {self.trigger_at:,} tokens ({percent(self.trigger_at, self.window)}% of the window), "
            f"{self.trigger_at - self.total:,} from now; old tool results are cleared from {self.clear_at:,}"
        )


def compute_breakdown(
    history: Sequence[Message], frame: Frame, counter: Counter, thresholds: Thresholds, *, auto_compact: bool
) -> Breakdown:
    total = counter.count_request(frame.system, frame.tools, list(history))
    framed = counter.count_frame(frame.system, frame.tools)
    system = min(counter.count_text(frame.system), framed)
    tools = framed - system
    summary = text = results = 0
    for message in history:
        tokens = counter.count_message(message)
        if message.summary is not None:
            summary += tokens
        elif message.tool_results:
            results += tokens
        else:
            text += tokens
    # Scale the local per-message counts to the anchored total.
    local = summary + text + results
    conversation = max(total - framed, 0)
    if local > 0:
        summary = summary * conversation // local
        results = results * conversation // local
        text = conversation - summary - results
    return Breakdown(
        window=thresholds.window,
        budget=thresholds.budget,
        total=total,
        system=system,
        tools=tools,
        summary=summary,
        messages=text,
        tool_results=results,
        free=max(thresholds.budget - total, 0),
        clear_at=thresholds.clear_at,
        trigger_at=thresholds.trigger_at,
        target=thresholds.target,
        emergency_at=thresholds.emergency_at,
        auto_compact=auto_compact,
    )

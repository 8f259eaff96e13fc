"""What the engine tells the user: its warnings and errors about compaction, and what `/context` shows.

*The notices* are pure functions returning text, kept apart from the engine so each message can be
read (and changed) in one place. Each says what happened and what to do.

*What `/context` shows* (`compute_breakdown`, pure given a counter): system prompt, tool specs,
condensed records, the conversation's own text and tool calls, tool results, and what is free, each
in tokens and as a share of the window, plus where the next layer fires. The parts are local counts
scaled to add up to the request count the engine acts on (anchored on the provider's own usage), so
the indicator never disagrees with it, and a part that holds anything never shows 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.protocol import Frame, holds
from agent_cli.context.thresholds import Counter, Thresholds, percent
from agent_cli.core.messages import Message
from agent_cli.tokens.images import image_tokens

__all__ = [
    "Breakdown",
    "compute_breakdown",
    "loop_guard_stopped",
    "not_saved",
    "overflow_unresolved",
    "scale_parts",
    "smaller_window",
    "summary_failed",
    "summary_fell_short",
    "summary_outcome",
    "under_reported",
]


# -- the notices: warnings and errors --------------------------------------------------------------


def smaller_window(limit: int) -> str:
    return (
        f"The provider reports a context window of {limit:,} tokens; using it from now on "
        f"(set context_window to {limit} to start with it)."
    )


def summary_failed(reason: str, path: str) -> str:
    return (
        f"The summary request failed ({reason or 'no text'}); the earlier conversation was "
        f"replaced by a mechanical digest instead. Its full text is in {path}."
    )


def summary_fell_short(shortfall: str) -> str:
    return f"The model's summary is in use, but it {shortfall}."


def summary_outcome(failure: str | None, shortfall: str | None, path: str, latched: str | None) -> str | None:
    """One message for what went wrong with a compaction's summary, if anything: the digest that
    stood in for a failed call (`failure`), or the record used though it fell short (`shortfall`),
    and what the latch does about it (`latched`, when it just opened), said together once."""
    first = summary_failed(failure, path) if failure is not None else None
    if first is None and shortfall is not None:
        first = summary_fell_short(shortfall)
    parts = [p for p in (first, latched) if p]
    return " ".join(parts) or None


def under_reported(reported: int, counted: int) -> str:
    return (
        f"The provider reported {reported:,} input tokens for a request counted here at about "
        f"{counted:,}; its usage reports are not believed when they are far below the local count, "
        "so compaction goes by the local count (said once)."
    )


def not_saved(layer: str, error: OSError) -> str:
    return (
        f"Could not write the transcript before {layer} ({error.strerror or error}); nothing was removed "
        "from the conversation. Check the free space and permissions of .transcripts/."
    )


def loop_guard_stopped(failures: int) -> str:
    return (
        f"Automatic compaction stopped after {failures} attempts in a row that left the "
        "conversation above the compaction line. Run /compact (optionally with a focus) to try "
        "again, or start a new session; the oldest messages will be trimmed if the window fills."
    )


def overflow_unresolved(th: Thresholds, total: int, largest: int, *, frame: int, counted: bool) -> str:
    """Nothing more can go. `counted`: the provider's error said how many tokens the request had;
    `frame`: what the system prompt and the tool definitions take on their own."""
    if frame >= largest and frame * 2 >= th.budget:
        return (
            f"The system prompt and the tool definitions alone take about {frame:,} tokens (project "
            f"instructions included), and a request may have {th.budget:,} (window {th.window:,}): "
            "nothing the conversation could give up would make it fit. Use a model with a larger "
            "window, raise context_window if it is set too low, or shorten the project instructions."
        )
    if not counted and total <= th.budget:
        # No numbers in the error, and our count fits: the limit is not the window we know.
        return (
            f"The provider rejected the request as too large, though it counts about {total:,} tokens "
            f"here, within the budget of {th.budget:,} (window {th.window:,}), and nothing more can be "
            "compacted. The provider's limit is probably smaller than the configured window: set "
            "context_window lower, or shorten the largest message (about "
            f"{largest:,} tokens)."
        )
    return (
        "The conversation does not fit the model's window, and nothing more can be compacted: "
        f"about {total:,} tokens for a budget of {th.budget:,} (window {th.window:,}); "
        f"its largest message alone is about {largest:,} tokens. "
        "Shorten that message, or start a new session."
    )


# -- /context: what the context holds, by kind -----------------------------------------------------


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
    pins: int = 0  # the user's pins, part of the system prompt (shown apart from it)
    todos: int = 0  # the todo list's note, in a message of the history (shown apart from it)
    goal: int = 0  # the goal's note, the same way
    images: int = 0  # images the history still holds (by pixels: tokens/images.py)

    def rows(self) -> list[tuple[str, int, float]]:
        """(label, tokens, % of window) for each part, free last."""
        parts = [
            ("system prompt", self.system),
            ("pins", self.pins),
            ("todo list", self.todos),
            ("goal", self.goal),
            ("tool specs", self.tools),
            ("condensed records", self.summary),
            ("messages", self.messages),
            ("tool results", self.tool_results),
            ("images", self.images),
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


def scale_parts(parts: Sequence[int], total: int) -> list[int]:
    """`parts` scaled to add up to exactly `total` (largest remainder); a part with content stays >= 1.

    The local count and the provider's anchored count disagree (a fake server
    reports characters / 4; Claude's tokenizer is not tiktoken's); the engine
    decides on the anchored total, so that is what the rows must add up to.
    """
    local = sum(parts)
    if total <= 0 or local <= 0:
        return [0] * len(parts)
    exact = [p * total / local for p in parts]
    out = [int(x) for x in exact]
    order = sorted(range(len(parts)), key=lambda i: exact[i] - out[i], reverse=True)
    for i in order[: total - sum(out)]:
        out[i] += 1
    for i, part in enumerate(parts):
        if part > 0 and out[i] == 0:
            donor = max(range(len(out)), key=lambda j: out[j])
            if out[donor] > 1:
                out[donor] -= 1
                out[i] = 1
    return out


def compute_breakdown(
    history: Sequence[Message], frame: Frame, counter: Counter, thresholds: Thresholds, *, auto_compact: bool
) -> Breakdown:
    total = counter.count_request(frame.system, frame.tools, list(history))
    framed = counter.count_frame(frame.system, frame.tools)
    system = min(counter.count_text(frame.system), framed)
    tools = framed - system
    pins = min(counter.count_text(frame.pins), system) if frame.pins else 0
    system -= pins
    summary = text = results = todos = goal = images = 0
    for message in history:
        tokens = counter.count_message(message)
        if message.images:  # an image's share of its message, by the rule that charges most
            pictures = min(tokens, sum(image_tokens(i.width, i.height) for i in message.images))
            images += pictures
            tokens -= pictures
        if frame.todos and holds([message], frame.todos):
            todos = min(counter.count_text(frame.todos), tokens)
            tokens -= todos
        if frame.goal and holds([message], frame.goal):
            goal = min(counter.count_text(frame.goal), tokens)
            tokens -= goal
        if message.summary is not None or message.native is not None:
            summary += tokens
        elif message.tool_results:
            results += tokens
        else:
            text += tokens
    # Every part (the frame too) is scaled to the anchored total the engine acts on:
    # scaling only the messages left them at 0 when the provider counts less than we do.
    system, pins, todos, goal, tools, summary, text, results, images = scale_parts(
        [system, pins, todos, goal, tools, summary, text, results, images], total
    )
    return Breakdown(
        window=thresholds.window,
        budget=thresholds.budget,
        total=total,
        system=system,
        pins=pins,
        todos=todos,
        goal=goal,
        tools=tools,
        summary=summary,
        messages=text,
        tool_results=results,
        images=images,
        free=max(thresholds.budget - total, 0),
        clear_at=thresholds.clear_at,
        trigger_at=thresholds.trigger_at,
        target=thresholds.target,
        emergency_at=thresholds.emergency_at,
        auto_compact=auto_compact,
    )

"""Threshold arithmetic for the context engine, and the counter it programs against.

Pure values and functions: the window, the output reserve, the budget
`B = window - reserve`, and every token line the layers act on (L1 clear,
L2 trigger, the post-compaction target, L4 emergency), plus the sizes of what
L2 keeps (verbatim tail, summary cap, the user's own messages).

`Counter` is the small part of `tokens.counter.TokenCounter` the engine uses;
its parameters are positional-only so any implementation's names fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_cli.config.settings import ContextSettings
from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import ToolSpec

__all__ = [
    "MIN_SHARED_CAP",
    "Counter",
    "Thresholds",
    "compute_thresholds",
    "output_for_window",
    "percent",
]

# Room kept beyond the model's max output for counting error: 2% of the window,
# at most 4k tokens. Counts are anchored on the provider's own usage report, so
# the error is small; the reactive path covers the rest.
RESERVE_MARGIN_SHARE = 0.02
RESERVE_MARGIN_MAX = 4_096
# The verbatim tail L2 keeps is at most a quarter of the budget (opencode keeps
# 25% of the usable window, clamped); the code also fits it under the target.
TAIL_SHARE = 0.25
# The summary and the verbatim user messages each take at most this share of B,
# so small windows still compact down to their target.
SUMMARY_SHARE = 0.10
USER_MESSAGES_SHARE = 0.10
MIN_SUMMARY_TOKENS = 256
# L1's protected share and batch size are clamped to these shares of B, so a
# small window still gets L1 (the 40k / 20k defaults suit a 200k window).
CLEAR_PROTECT_SHARE = 0.25
CLEAR_BATCH_SHARE = 0.125
# L0 cuts a single tool result to at most this share of B: the newest round stays
# verbatim through a summary, so it must leave room for the rest in a small window.
TOOL_RESULT_SHARE = 0.5
MIN_SHARED_CAP = 256  # tokens each result of a very wide round may still keep
# The least room between the prepare line and the trigger for a record prepared ahead: a large
# result (a 30 KiB file read) that arrives in between must not overtake it.
AHEAD_ROOM = 8_000

# Replies may take at most this share of a small window (the rest holds the prompt).
OUTPUT_SHARE = 0.25
MIN_OUTPUT_TOKENS = 1_024


class Counter(Protocol):
    """What the engine needs from a token counter (see tokens.counter.TokenCounter)."""

    def count_text(self, text: str, /) -> int: ...

    def count_message(self, message: Message, /) -> int: ...

    def count_frame(self, system: str, tools: tuple[ToolSpec, ...], /) -> int: ...

    def count_request(self, system: str, tools: tuple[ToolSpec, ...], messages: list[Message], /) -> int: ...

    def fits_under(
        self, system: str, tools: tuple[ToolSpec, ...], messages: list[Message], limit: int, /
    ) -> bool:
        """Whether the request certainly counts under `limit` (known without counting, when it can be)."""
        ...

    def observe(
        self, system: str, tools: tuple[ToolSpec, ...], sent_messages: list[Message], usage: Usage, /
    ) -> int | None:
        """Learn from a usage report; the count used instead when the report was not believed."""
        ...

    def calibrate_overflow(
        self, system: str, tools: tuple[ToolSpec, ...], messages: list[Message], reported_tokens: int, /
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Every token line the engine acts on, for one window and output size."""

    window: int  # the model's context window
    reserve: int  # output tokens plus a counting margin, never used for input
    budget: int  # B = window - reserve: the most a request may hold
    working: int  # the budget the layers work to: min(B, context.working_budget)
    clear_at: int  # L1 may clear old tool results above this
    trigger_at: int  # L2 fires at or above this
    prepare_at: int  # L2's record is made in the background above this (decide._prepare); trigger_at: never
    target: int  # compactions aim at or below this (hysteresis)
    emergency_at: int  # L4 drops the oldest groups above this
    keep_tail: int  # L2 keeps at most this much recent conversation verbatim
    summary_cap: int  # max_tokens of the summary request, enforced after too
    user_messages: int  # budget for the user's own messages kept verbatim
    clear_protect: int  # L1 keeps the newest tool results up to this many tokens
    clear_min_batch: int  # L1 acts only when it frees at least this much
    tool_result_cap: int  # L0 cuts a tool result above this many tokens
    # Past the trigger a request below this goes as it is while its record is being made (the swap
    # comes at a later request); trigger_at or below: the turn waits for the record at the trigger.
    hold_at: int = 0

    def describe(self) -> str:
        return (
            f"window {self.window:,}, budget {self.budget:,} (reserve {self.reserve:,}), "
            f"working budget {self.working:,}; "
            f"clear at {self.clear_at:,}, compact at {self.trigger_at:,} down to {self.target:,}, "
            f"emergency at {self.emergency_at:,}"
        )


def output_for_window(max_output: int, window: int) -> int:
    """The reply size to ask for: the model's (or configured) maximum, at most a quarter of a small window."""
    return min(max_output, max(MIN_OUTPUT_TOKENS, window // int(1 / OUTPUT_SHARE)))


def _ratio(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def compute_thresholds(settings: ContextSettings, window: int, max_output: int) -> Thresholds:
    """The token lines for `window` when each reply may take up to `max_output` tokens.

    Ratios are clamped into a consistent order (clear <= trigger <= emergency <= 1,
    target < trigger) so a bad config degrades instead of looping.
    """
    window = max(int(window), 1)
    margin = min(int(window * RESERVE_MARGIN_SHARE), RESERVE_MARGIN_MAX)
    reserve = max(int(max_output), 0) + margin
    if reserve > window // 2:  # a misconfigured output size must not eat the whole window
        reserve = window // 2
    budget = max(window - reserve, 1)
    # The layers work to a budget that does not grow with the window (the working budget); only the
    # emergency line guards the window itself. 0 means the whole window.
    work = min(budget, settings.working_budget) if settings.working_budget > 0 else budget

    emergency = _ratio(settings.emergency_ratio, 0.05, 1.0)
    trigger = _ratio(settings.trigger_ratio, 0.05, emergency)
    clear = _ratio(settings.clear_ratio, 0.0, trigger)
    prepare = _ratio(settings.prepare_ratio, clear, trigger)
    target = _ratio(settings.target_ratio, 0.01, trigger * 0.9)

    target_at = int(work * target)
    summary_cap = min(settings.summary_max_tokens, int(work * SUMMARY_SHARE))
    if max_output > 0:
        summary_cap = min(summary_cap, max_output)
    summary_cap = max(summary_cap, min(MIN_SUMMARY_TOKENS, max(work // 4, 1)))
    user_messages = max(min(settings.user_messages_tokens, int(work * USER_MESSAGES_SHARE)), 0)
    # The tail must leave room under the target for the summary and the user's messages, and all three
    # sit `min_freed_tokens` under the trigger (a small window). The target, where L4 drops to, stays.
    trigger_at = int(work * trigger)
    kept_at = min(target_at, trigger_at - max(settings.min_freed_tokens, 0))
    tail_room = max(kept_at - summary_cap - user_messages, 0)
    keep_tail = max(min(settings.keep_tail_tokens, int(work * TAIL_SHARE), tail_room), 0)
    # A record prepared ahead is of use only if the room up to the trigger holds a large result:
    # else one result jumps past it and the turn summarizes again (a small window: made at the trigger).
    prepare_at = int(work * prepare)
    if trigger_at - prepare_at < AHEAD_ROOM:
        prepare_at = trigger_at
    emergency_at = max(int(budget * emergency), trigger_at)
    # Never above the emergency line (L4 would act first) nor the working budget's share.
    hold_at = max(min(int(work * _ratio(settings.hold_ratio, 0.0, 1.0)), emergency_at), trigger_at)
    return Thresholds(
        window=window,
        reserve=reserve,
        budget=budget,
        working=work,
        clear_at=int(work * clear),
        trigger_at=trigger_at,
        prepare_at=prepare_at,
        target=target_at,
        emergency_at=emergency_at,
        keep_tail=keep_tail,
        summary_cap=summary_cap,
        user_messages=user_messages,
        clear_protect=max(min(settings.clear_protect_tokens, int(work * CLEAR_PROTECT_SHARE)), 0),
        clear_min_batch=max(min(settings.clear_min_batch_tokens, int(work * CLEAR_BATCH_SHARE)), 0),
        tool_result_cap=max(min(settings.tool_result_max_tokens, int(work * TOOL_RESULT_SHARE)), 1),
        hold_at=hold_at,
    )


def percent(tokens: int, window: int) -> float:
    """`tokens` as a percentage of `window`, one decimal."""
    return round(100.0 * tokens / window, 1) if window > 0 else 0.0

"""Thresholds and safe cuts: the pure arithmetic under every layer."""

from __future__ import annotations

import pytest
from test_context_fakes import assistant, tool_round, user

from agent_cli.config.settings import ContextSettings
from agent_cli.context.cut import find_safe_cut, groups, open_round_start, safe_cuts
from agent_cli.context.thresholds import compute_thresholds
from agent_cli.core.messages import Message, ToolResult, ToolUse

# -- thresholds ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("window", "max_output", "budget", "trigger", "target", "emergency"),
    [
        # 200k window, 32k output: reserve 32k + 4k margin, B = 164k
        (200_000, 32_000, 164_000, 147_600, 73_800, 155_800),
        # 128k window, 16k output: margin 2% of the window
        (128_000, 16_384, 109_056, 98_150, 49_075, 103_603),
        # a misconfigured output size never takes more than half the window
        (8_000, 16_000, 4_000, 3_600, 1_800, 3_800),
    ],
)
def test_thresholds_table(
    window: int, max_output: int, budget: int, trigger: int, target: int, emergency: int
) -> None:
    th = compute_thresholds(ContextSettings(working_budget=0), window, max_output)  # the whole window
    assert (th.budget, th.trigger_at, th.target, th.emergency_at) == (budget, trigger, target, emergency)
    assert th.window - th.reserve == th.budget
    assert th.clear_at <= th.trigger_at <= th.emergency_at <= th.budget
    assert th.target < th.trigger_at
    # What L2 keeps fits under the target, so compaction does not fire again next turn.
    assert th.keep_tail + th.summary_cap + th.user_messages <= th.target
    assert th.summary_cap <= max_output


@pytest.mark.parametrize("window", [200_000, 400_000, 1_000_000, 1_050_000])
def test_the_working_budget_does_not_grow_with_the_window(window: int) -> None:
    th = compute_thresholds(ContextSettings(working_budget=100_000), window, 32_000)
    assert th.working == 100_000 and th.budget == window - th.reserve
    assert (th.clear_at, th.trigger_at, th.target) == (50_000, 90_000, 45_000)  # the same on every window
    assert th.emergency_at >= int(th.budget * 0.95)  # the hard limit still guards the window itself
    assert th.keep_tail + th.summary_cap + th.user_messages <= th.target
    small = compute_thresholds(ContextSettings(working_budget=100_000), 32_000, 4_000)
    assert small.working == small.budget  # a window smaller than the working budget uses all of it


def test_what_l2_keeps_sits_a_compactions_worth_below_the_trigger() -> None:
    # At 32k what L2 keeps (record cap, user's messages, verbatim tail) sits `min_freed_tokens` under
    # the trigger: the tail is what is left of that; the target (L4's line) stays the ratio's.
    small = compute_thresholds(ContextSettings(), 32_000, 8_192)
    kept = small.keep_tail + small.summary_cap + small.user_messages
    assert small.trigger_at - kept >= ContextSettings().min_freed_tokens == 14_000
    assert small.target == int(small.working * ContextSettings().target_ratio)
    off = compute_thresholds(ContextSettings(min_freed_tokens=0), 32_000, 8_192)
    assert off.keep_tail > small.keep_tail > 0 and off.target == small.target
    # From a working budget of about 31k up (0.45 B' <= 0.9 B' - 14k) the target is lower already.
    for window in (64_000, 200_000, 1_000_000):
        assert compute_thresholds(ContextSettings(), window, 8_192) == compute_thresholds(
            ContextSettings(min_freed_tokens=0), window, 8_192
        )


def test_thresholds_clamp_inconsistent_ratios() -> None:
    bad = ContextSettings(trigger_ratio=0.99, emergency_ratio=0.5, target_ratio=0.9, clear_ratio=0.95)
    th = compute_thresholds(bad, 100_000, 4_000)
    assert th.clear_at <= th.trigger_at <= th.emergency_at
    assert th.target < th.trigger_at


def test_small_windows_still_get_l1() -> None:
    th = compute_thresholds(ContextSettings(), 32_000, 4_000)
    assert th.clear_protect < th.budget // 2 and th.clear_min_batch < th.budget // 4
    configured = ContextSettings(working_budget=0)
    big = compute_thresholds(configured, 1_000_000, 32_000)
    assert big.clear_protect == configured.clear_protect_tokens  # the configured values
    assert big.clear_min_batch == configured.clear_min_batch_tokens


# -- safe cuts ----------------------------------------------------------------


def _conv() -> list[Message]:
    # 0 user, 1 call, 2 result, 3 assistant, 4 user, 5 call(2 uses), 6 results, 7 assistant
    a, b = tool_round("read_file", {"path": "a"}, "A")
    u1, u2 = ToolUse("t1", "bash", {"command": "ls"}), ToolUse("t2", "bash", {"command": "pwd"})
    return [
        user("read a"),
        a,
        b,
        assistant("a says A"),
        user("list"),
        Message.of("assistant", [u1, u2]),
        Message.of("user", [ToolResult("t1", "x"), ToolResult("t2", "y")]),
        assistant("done"),
    ]


def test_safe_cuts_never_split_pairs() -> None:
    ok = safe_cuts(_conv())
    assert ok == [True, True, False, True, True, True, False, True, True]


def test_the_kotlin_seed_case_cut_on_a_result_moves_back() -> None:
    # keep 1 message after a call: the seed steps back so the result keeps its call.
    conv = [
        user("read the file"),
        *tool_round("read_file", {"path": "f"}, "hello"),
        assistant("it says hello"),
    ]
    counts = [10, 10, 10, 10]
    cut = find_safe_cut(conv, counts, keep_tokens=15)
    assert cut == 3  # before the final assistant turn: the pair stays in the replaced part
    cut = find_safe_cut(conv, counts, keep_tokens=25)
    assert cut == 3  # a cut at 2 would orphan the result; the fitting safe cut is 3


def test_prefers_a_turn_boundary_when_it_keeps_enough() -> None:
    conv = _conv()
    counts = [10] * len(conv)
    # 45 tokens allow a tail from index 4 (40 tokens): before the plain user message.
    assert find_safe_cut(conv, counts, keep_tokens=45) == 4
    # 35 tokens: first fit is 5 (after a plain user message, a safe cut); 8 would keep nothing,
    # and 7 is a turn boundary but keeps less than half the allowance... 5 stays.
    assert find_safe_cut(conv, counts, keep_tokens=35) == 5


def test_a_huge_open_round_moves_the_cut_before_it() -> None:
    conv = [user("go"), assistant("ok"), user("run it"), Message.of("assistant", [ToolUse("t9", "bash", {})])]
    counts = [5, 5, 5, 500]
    # The open call cannot be cut off from the result the loop will append next.
    assert find_safe_cut(conv, counts, keep_tokens=50) == 3
    assert open_round_start(conv) == 3


def test_floor_is_respected() -> None:
    conv = _conv()
    assert find_safe_cut(conv, [10] * 8, keep_tokens=1_000, floor=2) >= 2


def test_groups_partition_the_history() -> None:
    conv = _conv()
    gs = groups(conv)
    assert gs[0] == (0, 1) and (1, 3) in gs and (5, 7) in gs
    assert [i for g in gs for i in range(*g)] == list(range(len(conv)))


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        ([assistant("done")], 4),  # a finished turn: nothing open, the whole history may go
        ([Message.of("assistant", [ToolUse("t5", "compact", {})])], 3),  # a call waiting for its result
        ([], 3),  # the user's message awaits an answer; it is no tool round
    ],
)
def test_open_round_start(tail: list[Message], expected: int) -> None:
    conv = [user("a"), assistant("b"), user("c"), *tail]
    assert open_round_start(conv) == expected


def test_open_round_with_result_in() -> None:
    conv = [user("compact please"), *tool_round("compact", {}, "scheduled")]
    assert open_round_start(conv) == 1

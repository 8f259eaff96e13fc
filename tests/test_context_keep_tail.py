"""Keep-tail records and L1 in the same request: the kept turns keep the thinking they were sent with.

Anthropic's page on compaction and preserved thinking (platform.claude.com/docs/en/build-with-claude/
compaction-thinking-blocks, beta `compact-2026-09-04`): thinking in the turns kept after the block
stays valid only while the kept turns follow the summarized messages unchanged, and "one way to set
the first kept message correctly is to compact the messages of a request you already sent, as is";
the kept turns then begin with Claude's reply to that request. A tool result stubbed by L1 in the
very request that L2 then summarizes breaks that: the span is no longer what was sent, the newest
turn's thinking (bound to the output as sent) has to go, and the kept tail starts `[compaction,
text, tool_use]`. The stub was for nothing besides: the span is replaced.

The window is the engine tests' 20k (trigger at 14,080), over the fake counter (characters / 4).
"""

from __future__ import annotations

from pathlib import Path

from test_context_fakes import FRAME, FakeSummarizer, filler, make_engine, pairing_errors, user

from agent_cli.context.clear import apply_clear, clearable, is_stub
from agent_cli.context.protocol import CompactGate
from agent_cli.context.summary_request import SummaryReply
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, NativeRecord, TextBlock, ToolResult, ToolUse
from agent_cli.core.thought_blocks import ThinkingBlock

NATIVE = NativeRecord("anthropic", '{"type": "compaction"}', "The provider's summary.", keeps_tail=True)
# A long argument makes the stub long (the call is named in it): longer than the estimate allows.
LONG_PATH = "src/" + "/".join(f"package_{i:02d}" for i in range(14)) + "/module.py"


def reading(pad: int) -> list[Message]:
    """Seven reads, each call after a thought and long notes; the newest round not yet seen by the
    model (over the kept tail's size, so the cut is right before it); two older outputs worth a stub."""
    history = [user("read them all, then say what they share" + " and why" * pad)]
    for i, size in enumerate((200, 200, 200, 200, 5_000, 5_000, 9_000)):
        use = ToolUse(f"toolu_k{i}", "read_file", {"path": f"{LONG_PATH}{i}"})
        notes = TextBlock(f"Reading part {i}. " + filler(6_000, f"note{i}"))
        history.append(Message.of("assistant", [ThinkingBlock("", f"sig-{i}"), notes, use]))
        history.append(Message.of("user", [ToolResult(use.id, filler(size, f"out{i}"))]))
    return history


def test_past_the_trigger_l1_counts_its_stubs_and_the_kept_turn_keeps_its_thinking(tmp_path: Path) -> None:
    # The provider's compaction: its record, which keeps the tail (a reply, as the adapter returns it).
    provider = FakeSummarizer([lambda _: SummaryReply(NATIVE.text, native=NATIVE)])  # type: ignore[list-item]
    engine, _, summarizer = make_engine(tmp_path, provider)
    th = engine.thresholds
    # The history where L1's estimate gets below the trigger and its stubs do not.
    found = None
    for pad in range(0, 400):
        history = reading(pad)
        total = engine.tokens(history, FRAME)
        counts = [engine.tokens([m], FRAME) - engine.tokens([], FRAME) for m in history]
        to_clear, freed = clearable(history, counts, protect_tokens=th.clear_protect)
        stubbed = engine.tokens(apply_clear(history, to_clear, freed).messages, FRAME)
        if to_clear and total - freed < th.trigger_at <= stubbed:
            found = history
            break
    assert found is not None, "no history between the estimate and the count"
    history = found

    prepared = engine.prepare(history, FRAME)

    # The record, then the kept turn as it was sent, thinking first, then its result and our carrier.
    first, kept, result = prepared.messages[:3]
    assert first.native == NATIVE
    assert isinstance(kept.content[0], ThinkingBlock), [type(b).__name__ for b in kept.content]
    assert kept == history[-2] and result == history[-1]
    assert pairing_errors(prepared.messages[1:]) == ["the history does not start with a user message"]
    # The span the provider summarized is what was sent (every output whole, no stub), and L1 did
    # nothing: L2 took the span whole.
    sent = summarizer.requests[0].messages
    assert not any(is_stub(r) for m in sent for r in m.tool_results)
    assert sum(1 for m in sent for _ in m.tool_results) == 6
    assert [e.layer for e in prepared.events if isinstance(e, CompactEvent)] == ["summarize"]


def test_a_blocked_summary_leaves_the_clear_to_l1_not_a_drop(tmp_path: Path) -> None:
    """Past the trigger L1 holds back for L2 (above); when L2 does not act (a PreCompact hook blocked
    it), L1 clears what it can after all, free, before L4 would drop anything."""
    blocked = CompactGate(skip=True)
    engine, _, summarizer = make_engine(tmp_path, gate=lambda *_: blocked)
    th = engine.thresholds
    found = None
    for pad in range(0, 400):
        history = reading(pad)
        total = engine.tokens(history, FRAME)
        counts = [engine.tokens([m], FRAME) - engine.tokens([], FRAME) for m in history]
        to_clear, freed = clearable(history, counts, protect_tokens=th.clear_protect)
        stubbed = engine.tokens(apply_clear(history, to_clear, freed).messages, FRAME)
        if to_clear and th.trigger_at <= stubbed and total < th.emergency_at:
            found = history
            break
    assert found is not None, "no history past the trigger that L1 alone cannot get below it"

    prepared = engine.prepare(found, FRAME)

    layers = [e.layer for e in prepared.events if isinstance(e, CompactEvent)]
    assert layers == ["clear"], layers
    assert summarizer.requests == []
    assert any(is_stub(r) for m in prepared.messages for r in m.tool_results)
    assert len(prepared.messages) == len(found), "nothing was dropped"

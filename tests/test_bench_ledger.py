"""What each layer costs in the cache (benchmarks/bench_ledger.py): the lines add up to the bill,
and each policy's edits land on the line of what it did, seen the same way for every policy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_ledger import LINES, edits, first  # noqa: E402
from bench_policies import POLICIES, JavaS06, Kotlin, Masking, NoCompaction, Ours  # noqa: E402
from bench_replay import Run, reference_count, replay  # noqa: E402
from bench_report import frame, frame_tokens, prices, writer  # noqa: E402
from bench_sessions import Session, make_session  # noqa: E402

from agent_cli.core.messages import Message, SummaryBlock, ToolResult  # noqa: E402


def _run(policy_cls: type, window: int, steps: int = 120) -> Run:
    s = make_session("long", seed=2, outputs="typical")
    s = Session(s.name, s.steps[:steps])
    policy = policy_cls(window, frame(), reference_count, writer("faithful", s))
    return replay(s, policy, frame_tokens(), seed=2)


def _claude():  # type: ignore[no-untyped-def]
    return prices()["claude"]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_the_lines_add_up_to_the_bill(name: str) -> None:
    run = _run(POLICIES[name], 1_000_000, steps=80)
    lines = sum(run.ledger.dollars(line, _claude()) for line in LINES)
    assert lines == pytest.approx(run.dollars("claude", _claude()))
    assert run.ledger.floor(_claude()) <= run.dollars("claude", _claude())


def test_a_policy_that_changes_nothing_pays_only_reads_new_writes_and_output() -> None:
    run = _run(NoCompaction, 1_000_000, steps=80)
    tokens = run.ledger.tokens
    assert tokens["reads"]["read"] > 0 and tokens["new"]["write"] > 0 and tokens["output"]["output"] > 0
    assert all(tokens[line]["write"] == 0 for line in ("clear", "summary", "drop", "unmarked"))
    # The frame is written by the first request and read back by every one after it.
    assert run.ledger.frame_reads == frame_tokens() * (len(run.requests) - 1)


def test_each_edit_lands_on_its_own_line() -> None:
    masking = _run(Masking, 1_000_000).ledger.tokens
    assert masking["clear"]["write"] > 0 and masking["summary"]["write"] == 0
    kotlin = _run(Kotlin, 200_000, steps=320).ledger.tokens  # it summarizes and never clears
    assert kotlin["summary"]["write"] > 0 and kotlin["clear"]["write"] == 0
    assert kotlin["summary calls"]["write"] + kotlin["summary calls"]["read"] > 0
    java = _run(JavaS06, 200_000, steps=320).ledger.tokens  # its micro-compaction rewrites every turn
    assert java["clear"]["write"] > java["new"]["write"]
    ours = _run(Ours, 200_000, steps=320).ledger.tokens
    assert ours["clear"]["write"] > 0 and ours["summary"]["write"] > 0
    assert ours["clear"]["write"] < java["clear"]["write"] / 2


def test_edits_are_told_apart_from_outside() -> None:
    a, b = Message.user("a"), Message.assistant("b")
    results = Message("user", (ToolResult("t1", "output " * 50),))
    history = [a, b, results]
    assert edits(history, list(history)) is None
    stubbed = results.replace([ToolResult("t1", "[cleared]")])
    assert edits(history, [a, b, stubbed]) == "clear"
    assert edits(history, [b, results]) == "drop"
    record = Message("user", (SummaryBlock("what happened"),))
    assert edits(history, [record, results]) == "summary"
    assert first("clear", "summary") == "summary" and first(None, "drop") == "drop"
    assert first(None, None) is None


def test_a_block_added_to_the_last_message_reads_the_blocks_before_it_back() -> None:
    # A summary request adds its instruction as a block after the last tool result; Anthropic
    # looks back from the new breakpoint to the last one written, so everything before the
    # instruction is read back, as long as the request's tool_choice is the conversation's.
    from bench_billing import Caches, Wire

    from agent_cli.core.messages import TextBlock

    wire, caches = Wire(frame()), Caches()
    first_turn = [Message.user("read the file"), Message("user", (ToolResult("t1", "line\n" * 2_000),))]
    sent = wire.send(first_turn)
    assert caches.bill(sent, 0.0, 0.0)["claude"].read == 0  # the first writes its frame and its last block
    last = first_turn[-1]
    asked = [first_turn[0], last.replace([*last.content, TextBlock("Stop here and summarize.")])]
    bill = caches.bill(wire.send(asked), 1.0, 1.0)["claude"]
    assert bill.read == sent.tokens and bill.write == wire.send(asked).tokens - sent.tokens

"""The replay bills every policy as the provider bills what it sends (issue 36, item 3): the audit's
three biases, each held by a test that fails on the benchmark before the billing change.

- ours' summary calls were sent with `tool_choice: none`, which Anthropic bills as a new messages
  prefix (they read the tools and system prompt back, not the conversation): they are billed as
  sent, and now send the main requests' `tool_choice`, so they read the conversation back;
- the Kotlin seed compacts and retries when the provider refuses a request as too long, as its
  design does;
- the probes are fair to a policy without recall (it may read a file again; the continuation probe
  does not look for the line our records copy by code; recall is asked about every fact), and the
  frame is the same bytes on every machine.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_replay  # noqa: E402
from bench_billing import Bill  # noqa: E402
from bench_policies import Kotlin, NoCompaction, Ours, Policy, _record_message  # noqa: E402
from bench_replay import PROBE_EVERY, Run, reference_count, replay  # noqa: E402
from bench_sessions import Session, make_session  # noqa: E402
from bench_setup import frame, frame_tokens, writer  # noqa: E402

from agent_cli.context.fidelity import Facts, repair  # noqa: E402
from agent_cli.core.messages import Message, TextBlock, ToolResult  # noqa: E402


def _run(policy: Policy, s: Session, seed: int = 1) -> Run:
    return replay(s, policy, frame_tokens(), seed=seed)


def _short(shape: str, steps: int, seed: int = 1) -> Session:
    s = make_session(shape, seed=seed)
    return Session(s.name, s.steps[:steps])


def test_a_summary_request_with_tool_choice_none_reads_only_the_tools_and_system() -> None:
    from bench_billing import Caches, Wire

    wire, caches = Wire(frame()), Caches()
    history = [Message.user("read the file"), Message("user", (ToolResult("t1", "line\n" * 3_000),))]
    sent = wire.send(history)
    caches.bill(sent, 0.0, 0.0)
    last = history[-1]
    asked = [history[0], last.replace([*last.content, TextBlock("Stop here and summarize.")])]
    summary = wire.send(asked, "none")
    bill = caches.bill(summary, 1.0, 1.0)
    assert bill["claude"].read == frame_tokens()  # tools and system only
    assert bill["claude"].write == summary.tokens - frame_tokens()  # the conversation written again
    assert bill["openai"].read > frame_tokens()  # OpenAI's prefix holds: tool_choice is not in it


def test_our_summary_calls_are_billed_as_sent() -> None:
    s = _short("long", 150)
    policy = Ours(32_000, frame(), reference_count, writer("faithful", s))
    run = _run(policy, s)
    assert run.summary_calls >= 2
    # The main requests' tool_choice (issue 37): the calls read the cached conversation back, where
    # with `tool_choice: none` each read the frame at most.
    # (A span too long for one request goes as text chunks, which read nothing cached: tool calls off.)
    chunk = {call.tool_choice for call in policy.summaries if len(call.messages) == 1}
    span = {call.tool_choice for call in policy.summaries if len(call.messages) > 1}
    assert chunk <= {"none"} and span == {"auto"}
    assert run.parts["summaries"].read > run.summary_calls * frame_tokens()
    assert run.parts["summaries"].read > run.parts["summaries"].write
    assert run.ledger.tokens["summary calls"]["read"] == run.parts["summaries"].read


def test_the_kotlin_seed_compacts_and_retries_when_refused() -> None:
    s = make_session("survey", seed=1)
    history = [m for step in s.steps[:20] for m in step.messages]
    policy = Kotlin(150_000, frame(), reference_count, writer("faithful", s))
    assert policy._estimate(history) < 0.8 * 150_000  # below its own trigger, yet refused:
    retried = policy.react(history, 160_000)
    assert retried is not None and retried[0].summary is not None and len(policy.summaries) == 1
    assert policy._estimate(retried) < policy._estimate(history)
    # In a whole run: its estimate (characters / 3) undercounts the provider's count, the provider
    # refuses, and the seed goes on where it used to fail (at request 117).
    run = _run(Kotlin(32_000, frame(), reference_count, writer("faithful", s)), make_session("long", seed=1))
    assert run.finished


def test_a_policy_without_recall_reads_the_file_again_and_pays_for_it() -> None:
    s = make_session("long", seed=1)
    run = _run(Kotlin(32_000, frame(), reference_count, writer("lossy", s)), s)
    assert run.recall_calls > 0  # read_file round trips, not recall: it has none
    assert run.parts["recall"].write + run.parts["recall"].read > 0 and run.parts["recall"].output > 0
    assert run.probes["recall"] and any(run.probes["recall"])


class _Asked(Ours):
    asked: list[str]

    def recall(self, query: str) -> str | None:
        self.asked = [*getattr(self, "asked", []), query]
        return super().recall(query)


def test_recall_is_asked_about_every_fact_at_every_probe_point() -> None:
    s = _short("long", 60)
    policy = _Asked(1_000_000, frame(), reference_count, writer("faithful", s))
    run = _run(policy, s)  # nothing leaves a 1M window: every fact is in the request
    probes = len(run.requests) // PROBE_EVERY
    facts = [f for f in s.facts if f.kind == "recall"]
    assert probes >= 3 and len(policy.asked) == probes * len(facts) == run.recall_calls
    assert run.parts["recall"].output > 0


class _Spy(bench_replay._Biller):
    """The replay's biller, keeping each request's part, size and steady Claude bill."""

    sent: ClassVar[list[tuple[str, int, int, int, int]]] = []  # (part, tokens, read, write, input)

    def bill(self, messages: list[Message], output: int, part: str, *args: Any, **kwargs: Any) -> int:
        before = Bill(**vars(self.run.parts[part]))
        tokens = super().bill(messages, output, part, *args, **kwargs)
        after = self.run.parts[part]
        _Spy.sent.append(
            (part, tokens, after.read - before.read, after.write - before.write, after.input - before.input)
        )
        return tokens


def test_a_recall_round_trip_reads_the_conversation_back_and_writes_only_the_calls_and_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under Anthropic's rule, with the breakpoints the product's adapter places: the request after
    the recall calls reads back all the probed request put in the cache (the frame and the
    conversation, but for a newest message the probed request left unwritten) and writes only the
    rest (the calls and their results, and that newest message), none of it sent uncached: not
    the whole conversation again."""
    monkeypatch.setattr(bench_replay, "_Biller", _Spy)
    monkeypatch.setattr(_Spy, "sent", [])
    s = _short("long", 100)
    run = _run(Ours(32_000, frame(), reference_count, writer("lossy", s)), s)
    trips = [(n, q) for n, q in enumerate(_Spy.sent) if q[0] == "recall"]
    assert len(trips) == len(run.requests) // PROBE_EVERY and run.recall_calls > len(trips)
    whole = 0
    for n, (_, tokens, read, write, uncached) in trips:
        part, probed, probed_read, probed_write, _ = _Spy.sent[n - 1]
        assert part == "turns", n
        assert read == probed_read + probed_write > 0, n  # what the probed request cached, read back
        assert write == tokens - read and uncached == 0, n  # the rest written, at the results' mark
        whole += read == probed  # (the probed request cached all it sent)
    assert whole
    assert sum(q[3] for _, q in trips) == run.parts["recall"].write


class _Newest(Ours):
    """Ours, keeping what the engine told the wire about each main request's newest message."""

    newest: list[bool]

    def anchor(self, history: list[Message], originals: set[int]) -> int | None:
        mark = super().anchor(history, originals)
        self.newest = [*getattr(self, "newest", []), self.cache_newest()]
        return mark


def test_our_newest_message_is_left_unwritten_where_the_product_leaves_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The product sends `cache_newest=False` where the next clear is expected to stub the newest
    message (`cache_choices._worth_writing`): Anthropic then bills it as uncached input (1x), not as a
    write (1.25x). The replay bills the request as the product sends it."""
    monkeypatch.setattr(bench_replay, "_Biller", _Spy)
    monkeypatch.setattr(_Spy, "sent", [])
    s = _short("survey", 60)  # a file read a turn, each stubbed by the next clear
    policy = _Newest(32_000, frame(), reference_count, writer("lossy", s))
    run = _run(policy, s)
    turns = [q for q in _Spy.sent if q[0] == "turns"]
    assert len(turns) == len(policy.newest) == len(run.requests)
    assert not all(policy.newest) and any(policy.newest)
    for (_, tokens, read, write, uncached), newest in zip(turns, policy.newest, strict=True):
        assert read + write + uncached == tokens
        assert (uncached == 0) == newest  # unwritten: sent uncached, billed as input
    assert run.parts["turns"].input == sum(q[4] for q in turns) > 0


class _CopiesTheNextStep(NoCompaction):
    """Keeps the latest user message, the rest as a record whose only trace of the stated next step
    is the line our fidelity check copies by code."""

    by_code = True

    def prepare(self, history: list[Message]) -> list[Message]:
        seen: set[int] = getattr(self, "seen", set())
        step: str | None = getattr(self, "step", None)
        for m in history:
            if id(m) in seen:
                continue
            if m.is_plain_user:
                step = None  # a new request supersedes the plan, as the replay's probe has it
            elif m.role == "assistant" and "\nNext: " in m.text:
                step = m.text.rsplit("\nNext: ", 1)[1]
        users = [m for m in history if m.is_plain_user]
        if len(history) < 4 or not users:
            return history
        if self.by_code:
            record = repair("## Work state\nworking", Facts(None, (), None, None, step))
        else:  # the summary's own words
            record = "## Work state\nworking" + (f"\nNext: {step}" if step else "")
        kept = [_record_message(record), Message.assistant("Understood."), users[-1]]
        self.seen, self.step = {id(m) for m in kept}, step
        return kept


class _WritesTheNextStep(_CopiesTheNextStep):
    by_code = False


def test_the_continuation_probe_does_not_count_a_line_copied_by_code() -> None:
    s = _short("long", 120)
    copied = _run(_CopiesTheNextStep(1_000_000, frame(), reference_count, writer("faithful", s)), s)
    written = _run(_WritesTheNextStep(1_000_000, frame(), reference_count, writer("faithful", s)), s)
    # Where a next step was stated, only the record that carries it itself passes.
    by_code, own = copied.probes["continuation"], written.probes["continuation"]
    assert all(own) and len(by_code) == len(own)
    assert 0 < by_code.count(False) < len(by_code)


def test_the_frame_is_the_same_bytes_on_every_machine() -> None:
    system = frame().system
    assert platform.release() not in system and platform.python_version() not in system
    assert "/project;" in system and "2026-11-30" in system


def test_long_session_bills_the_recorded_requests_as_anthropic_bills_them() -> None:
    # long_session.py's ideal cache reads any earlier prefix (OpenAI's rule); a summary request
    # sent with tool_choice none reads, on Anthropic, only the tools and the system prompt.
    from long_session import anthropic_cost, ideal_cache_cost

    from agent_cli.core.requests import Request, RequestOptions
    from agent_cli.providers.anthropic_wire import to_wire
    from agent_cli.testing.fakeserver import RecordedRequest
    from agent_cli.testing.fakeserver.server import chars_over_four

    f = frame()
    history = [Message.user("read the file"), Message("user", (ToolResult("t1", "line of code\n" * 3_000),))]
    asked = [*history, Message.user("Stop here and summarize.")]
    bodies = [
        to_wire(Request(f.system, tuple(history), tuple(f.tools)), "claude-sonnet-5-5", caching=True),
        to_wire(
            Request(f.system, tuple(asked), tuple(f.tools), options=RequestOptions(tool_choice="none")),
            "claude-sonnet-5-5",
            caching=True,
        ),
    ]
    sent = [
        RecordedRequest("anthropic", "/v1/messages", body, {}, chars_over_four(str(body))) for body in bodies
    ]
    billed, ideal = anthropic_cost(sent), ideal_cache_cost(sent)
    assert billed > 1.4 * ideal  # the history written twice at 1.25x, not read back at 0.1x


def test_long_session_sets_ours_beside_the_peers_in_one_unit_and_one_rule() -> None:
    """Issue 36 item 6: the peers' figures were counted at characters / 3.2 and ours at characters / 4;
    Claude Code's cost is Anthropic's rule, Codex's the ideal cache. The comparison converts ours to
    the peers' unit and sets each peer beside ours under its own rule."""
    from long_session import against_peers

    line = against_peers(800_000, 400_000.0, 300_000.0)
    assert "input 1,000,000, as Anthropic bills it 500,000, ideal cache 375,000" in line
    assert "vs Claude Code (2.32M, 0.66M by Anthropic's rule): input 0.43x" in line
    assert "cost 0.76x (goal <= 0.65x)" in line  # 500,000 / 660,000: the billed figure, not the ideal one
    assert "vs Codex (2.08M, 0.56M ideal cache): input 0.48x" in line and "cost 0.67x" in line


def test_codex_is_set_beside_ours_on_the_responses_wire_under_openais_rule_in_one_unit() -> None:
    """Issue 37, item 2: Codex's 0.56M is the ideal cache (read back at 0.1x, the rest at 1.25x)
    over 2.08M sent; those two sums give what it read and what it sent new, hence its bill under
    the rule OpenAI bills gpt-6.2-sol by (cached input 0.05x, cache writes 1.25x). Ours, billed by
    that rule and converted to the peers' unit, is set beside it; the old ideal-cache ratio too."""
    from long_session import CODEX_NEW, CODEX_READ, against_codex, codex_under, openai_rule

    assert abs(CODEX_NEW + CODEX_READ - 2_080_000) < 1e-6
    assert abs(1.25 * CODEX_NEW + 0.1 * CODEX_READ - 560_000) < 1e-6
    assert round(CODEX_NEW) == 306_087 and round(codex_under(0.05, 1.25)) == 471_304
    assert openai_rule("gpt-6.2-sol") == (0.05, 1.25)  # the model page: $0.10 cached, $2.50 writes, $2 input
    line = against_codex(800_000, 300_000.0, 0.05, 1.25, 320_000.0)
    assert "input 1,000,000, as OpenAI bills it 375,000" in line and "input 0.48x" in line
    assert "375,000 / 471,304 = 0.80x" in line  # one unit, one rule
    assert "under the ideal cache (the old comparison) 0.71x" in line  # 400,000 / 560,000


def test_the_bench_wire_bridges_only_to_a_prefix_alive_at_the_bills_time() -> None:
    """The product's wire picks its bridge among the prefixes written in the last 5 minutes (it
    passes the clock); the bench's wire does too, at the run's own clock. Before, it passed none, and
    bridged to a prefix the billed cache had long dropped (a mark that reads nothing)."""
    from bench_billing import Wire

    history = [Message.user("go " + "word " * 400), Message.assistant("ok")]
    for i in range(15):  # small rounds between: the change lies past the look-back of the newest
        history += [Message.user(f"step {i}"), Message.assistant(f"done {i}")]
    changed = [*history, Message.user("and now?")]
    changed[2] = Message.user("step 0, edited")  # (a change right after the anchor)

    def marks(at: float) -> list[int]:
        wire = Wire(frame())
        wire.send(history, anchor=1, at=0.0)
        sent = wire.send(changed, at=at)
        return [i for i, u in enumerate(sent.anthropic.units) if u.breakpoint]

    frame_units = Wire(frame()).send([]).frame_units
    assert frame_units + 1 in marks(60.0)  # the first request's anchor (the "ok"): read back
    assert frame_units + 1 not in marks(400.0)  # gone after 5 idle minutes: no mark there


def test_a_one_hour_write_is_billed_at_twice_the_input_price() -> None:
    """The bench's bill keeps the 1-hour writes apart (2x the input price, against 1.25x for the
    5-minute ones), as the cost model bills them. Before, every write was billed at 1.25x."""
    from bench_billing import Bill as BenchBill
    from bench_setup import prices

    from agent_cli.billing import Bill as WireBill

    claude = prices()["claude"]
    five, hour = BenchBill(), BenchBill()
    five.add(WireBill(write_5m=1_000_000), 0)
    hour.add(WireBill(write_1h=1_000_000), 0)
    assert five.dollars(claude) == claude.cache_write_price == 1.25 * claude.input_price
    assert hour.dollars(claude) == 2 * claude.input_price

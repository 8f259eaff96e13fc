"""The benchmark's own rules, each able to fail: every policy treated alike, no oracle, no free lunch.

The replay (benchmarks/bench_replay.py) decides what the report claims, so each correction the
outside review asked for is checked here on real sessions and real policies.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_policies import POLICIES, Hybrid, JavaS06, JavaScript, Kotlin, Masking, NoCompaction, Ours  # noqa: E402
from bench_replay import CLAUDE_RATIO, Run, claude, reference_count, replay, request_text  # noqa: E402
from bench_report import frame, frame_tokens, session, writer  # noqa: E402
from bench_sessions import OUTPUTS, SHAPES, Session, make_session  # noqa: E402
from bench_standins import faithful_record  # noqa: E402
from bench_tables import Agg, Group, policy_table  # noqa: E402
from test_context_fakes import tool_round  # noqa: E402

from agent_cli.core.messages import Message, ToolResult, ToolUse  # noqa: E402


def _run(policy_cls: type, s: Session, window: int, stand_in: str = "faithful") -> tuple[Run, object]:
    policy = policy_cls(window, frame(), reference_count, writer(stand_in, s))
    return replay(s, policy, frame_tokens(), seed=1), policy


def _short(shape: str = "long", steps: int = 90, outputs: str = "typical") -> Session:
    s = make_session(shape, seed=1, outputs=outputs)
    return Session(s.name, s.steps[:steps])


def test_no_recall_query_holds_its_answer() -> None:
    for shape in SHAPES:
        for outputs in OUTPUTS:
            for seed in range(1, 6):
                for fact in make_session(shape, seed=seed, outputs=outputs).facts:
                    if fact.kind != "recall":
                        assert fact.paraphrase == ""
                        continue
                    asked = {fact.asked(probe) for probe in range(4)}
                    assert asked == {fact.question, fact.paraphrase}  # in turn
                    for question in asked:
                        assert fact.text not in question
                        for token in fact.text.replace(":", " ").replace("'", " ").split():
                            if any(c.isdigit() for c in token) or "_" in token:
                                assert token not in question, (token, question)


class _Asked(Ours):
    """Ours, recording what every recall it is asked is called with."""

    asked: list[str]

    def recall(self, query: str) -> str | None:
        self.asked = [*getattr(self, "asked", []), query]
        return super().recall(query)


def test_the_replay_recalls_with_the_question_and_bills_the_round_trip() -> None:
    s = make_session("long", seed=1)
    run, policy = _run(_Asked, s, 32_000)
    asked = policy.asked  # type: ignore[attr-defined]
    answers = [f.text for f in s.facts]
    assert asked and all(a not in q for q in asked for a in answers)
    questions = {q for f in s.facts if f.kind == "recall" for q in (f.question, f.paraphrase)}
    assert set(asked) <= questions and len(set(asked)) > 1
    assert run.recall_calls > 0 and run.parts["recall"].write > 0 and run.parts["recall"].output > 0
    # A policy with no recall is never asked; it pays only for the files it reads again (at most
    # one a probe point here: the edited config file).
    plain, _ = _run(_NeverAsked, s, 32_000)
    assert plain.recall_calls <= len(plain.requests) // 10


class _NeverAsked(Kotlin):
    def recall(self, query: str) -> str | None:
        raise AssertionError("a policy without recall was asked")


class _Unmarked(Masking):
    def anchor(self, history: list[Message], originals: set[int]) -> int | None:
        return None


def test_a_baseline_gets_its_breakpoint_at_its_own_edit_point() -> None:
    s = _short(steps=80)
    marked, policy = _run(Masking, s, 1_000_000)
    unmarked, _ = _run(_Unmarked, s, 1_000_000)
    assert marked.bills["claude"].read > unmarked.bills["claude"].read * 1.5
    assert marked.bills["claude"].write < unmarked.bills["claude"].write
    # The mark is the newest message it rewrote.
    history = [m for step in s.steps for m in step.messages]
    masked = policy.prepare(history)
    edited = [i for i, m in enumerate(masked) if m is not history[i]]
    assert edited and policy.anchor(masked, {id(m) for m in history}) == edited[-1]


def test_an_over_window_request_is_refused_not_priced() -> None:
    s = _short(steps=60)
    run, _ = _run(NoCompaction, s, 20_000)
    assert run.failed_at is not None and not run.finished
    assert all(size <= 20_000 for size in run.requests)
    assert len(run.requests) == run.failed_at - 1
    agg = Agg("none", [run])
    assert agg.cost("claude", {"claude": _prices()}) is None
    row = policy_table(Group("long", "typical", 20_000, "faithful", {"none": agg}), _all_prices())[2]
    assert f"refused at request {run.failed_at}" in row and "$" not in row


def test_the_javascript_seed_retries_once_after_a_refusal() -> None:
    s = _short(steps=120)
    run, policy = _run(JavaScript, s, 32_000)
    refused = JavaScript(32_000, frame(), reference_count, writer("faithful", s))
    history = [m for step in s.steps[:60] for m in step.messages]
    assert refused.react(history, 40_000) is not None  # it compacts once more rather than give up
    assert run.summary_calls >= 1 and policy.summaries


def _round(path: str, chars: int) -> list[Message]:
    return tool_round("read_file", {"path": path}, "x" * chars)


def test_a_seed_keeps_the_round_its_model_is_to_answer() -> None:
    """A seed's compaction keeps the newest round whenever the request fits with it: a result
    summarized before the model saw it (the Kotlin seed sends 100 characters of it) leaves the
    session's next reply, written from that result, without its ground."""
    s = _short(steps=10)
    older = [Message.user("read the files"), *_round("a.py", 20_000), *_round("b.py", 20_000)]
    newest = _round("c.py", 54_000)  # over half a 32k window (characters / 3), under the window
    kotlin = Kotlin(32_000, frame(), reference_count, writer("faithful", s))
    sent = kotlin.prepare([*older, *newest])
    assert kotlin.summaries and sent[-2:] == newest and sent[0].summary is not None
    # Refused by the provider, it compacts whatever its estimate says: then the round may go too.
    refused = Kotlin(32_000, frame(), reference_count, writer("faithful", s)).react([*older, *newest], 40_000)
    assert refused is not None and newest[-1] not in refused
    java = JavaS06(200_000, frame(), reference_count, writer("faithful", s))
    big = [Message.user("read the files"), *_round("a.py", 120_000), *_round("b.py", 120_000)]
    sent = java.prepare([*big, *newest])
    assert java.summaries and sent[1:] == newest and len(sent) == 3
    typed = Message.user("and now?")
    fresh = JavaS06(200_000, frame(), reference_count, writer("faithful", s))
    sent = fresh.prepare([*big, Message.assistant("done"), typed])
    assert [m.role for m in sent] == ["user", "assistant", "user"] and sent[-1] is typed


class _Forgets(Masking):
    """A policy that leaves out the newest message at every other request."""

    n = 0

    def prepare(self, history: list[Message]) -> list[Message]:
        self.n += 1
        return history[:-1] if self.n % 2 and history[-1].tool_results else history


def test_the_replay_counts_requests_sent_without_what_they_answer() -> None:
    s = _short(steps=40)
    forgot, _ = _run(_Forgets, s, 1_000_000)
    kept, _ = _run(Masking, s, 1_000_000)
    assert forgot.unseen > 0 and kept.unseen == 0
    heavy = make_session("survey", seed=1, outputs="heavy")
    refusals: list[int] = []

    class _Counted(Kotlin):
        def react(self, history: list[Message], tokens: int) -> list[Message] | None:
            refusals.append(tokens)
            return super().react(history, tokens)

    kotlin, _ = _run(_Counted, heavy, 32_000)
    ours, _ = _run(Ours, heavy, 32_000)
    assert kotlin.finished and 0 < kotlin.unseen <= len(refusals)  # only on the way out of a refusal
    assert ours.finished and ours.unseen == 0
    group = Group("survey", "heavy", 32_000, "faithful", {"kotlin": Agg("kotlin", [kotlin])})
    row = policy_table(group, _all_prices())
    assert f"| {float(kotlin.unseen):.1f} |" in row[2]


def test_the_replay_gives_the_same_bytes_twice() -> None:
    s = make_session("survey", seed=2, outputs="heavy")
    first, _ = _run(Ours, s, 32_000)
    second, _ = _run(Ours, s, 32_000)
    assert first.fingerprint and first.fingerprint == second.fingerprint
    assert first.bills == second.bills and first.probes == second.probes


class _Seen(Ours):
    texts: list[str]

    def prepare(self, history: list[Message]) -> list[Message]:
        out = super().prepare(history)
        self.texts = [*getattr(self, "texts", []), request_text(out)]
        return out


def test_no_temporary_path_reaches_a_request() -> None:
    s = make_session("long", seed=1)
    run, policy = _run(_Seen, s, 32_000)
    texts = policy.texts  # type: ignore[attr-defined]
    # Saved files are named relative to the project, as the product names them to the model.
    assert run.summary_calls and any(".transcripts/bench/" in t for t in texts)
    assert not any("/project/.transcripts/" in t for t in texts)
    assert not any(tempfile.gettempdir() in t for t in texts)
    assert not any(tempfile.gettempdir() in m.text for c in policy.summaries for m in c.messages)


def test_summary_inputs_are_cut_as_each_policy_cuts_them() -> None:
    """What each seed's summarizer is given is what its code sends: no policy is billed, or
    summarized, from more (or less) than its own design builds."""
    s = make_session("long", seed=1)
    limits = {Kotlin: 100 + len("..."), JavaScript: 800 + len("… (truncated, 100000 characters)")}
    for cls, window in ((Kotlin, 32_000), (JavaScript, 200_000), (JavaS06, 200_000)):
        seen: list[list[tuple[str, str]]] = []
        base = writer("faithful", s)

        def write(entries, cap, seen=seen, base=base):  # type: ignore[no-untyped-def]
            seen.append(list(entries))
            return base(entries, cap)

        policy = cls(window, frame(), reference_count, write)
        replay(s, policy, frame_tokens(), seed=1)
        assert seen and len(seen) == len(policy.summaries), cls.name
        tools = [t for entries in seen for role, t in entries if role == "tool"]
        assert tools, cls.name
        if cls in limits:
            assert max(len(t) for t in tools) <= limits[cls], cls.name
            assert any(len(t) > limits[cls] - 40 for t in tools), cls.name  # the cut is reached
        else:  # the Java seed: the first 80,000 characters of "role: content" lines
            for entries, call in zip(seen, policy.summaries, strict=True):
                assert sum(len(t) for _, t in entries) <= JavaS06.transcript_chars
                assert len(call.messages[0].text) <= len(JavaS06.prompt) + JavaS06.transcript_chars
        for call in policy.summaries:
            assert reference_count(call.output) <= policy.summary_cap


def test_summary_calls_carry_the_frame_and_bill_their_output() -> None:
    s = make_session("long", seed=1)
    run, policy = _run(Kotlin, s, 32_000)
    outputs = sum(claude(reference_count(c.output)) for c in policy.summaries)
    assert run.summary_calls == len(policy.summaries)
    assert run.summary_input >= run.summary_calls * claude(frame_tokens())
    assert run.summary_output == outputs and run.parts["summaries"].output == sum(
        reference_count(c.output) for c in policy.summaries
    )


def test_the_faithful_stand_in_does_not_trip_our_latch() -> None:
    s = make_session("long", seed=1)
    faithful, _ = _run(Ours, s, 32_000, "faithful")
    lossy, _ = _run(Ours, s, 32_000, "lossy")
    assert faithful.summary_calls > 5 and faithful.digests == 0
    assert lossy.digests > 0  # the check can fail: a record that drops the latest error trips it


def test_a_faithful_record_keeps_only_what_its_input_holds() -> None:
    s = make_session("long", seed=1)
    error = next(f for f in s.facts if f.kind == "recall")
    entries = [("user", "Fix the tests."), ("tool", "F\n" + error.text + "\n[exit code 1]")]
    record = faithful_record(entries, s.facts, reference_count, 800)
    assert error.text in record and "Fix the tests." in record
    without = faithful_record([("user", "Fix the tests.")], s.facts, reference_count, 800)
    assert error.text not in without
    assert reference_count(faithful_record(entries * 200, s.facts, reference_count, 50)) <= 50


def test_a_faithful_record_keeps_the_next_step_an_earlier_record_carried() -> None:
    # An earlier record in the input carries the step (as this stand-in writes it, or as a line a
    # policy's code added): the new record keeps it, as a model folding that record would; a step
    # stated since in a message wins, being the latest.
    s = make_session("long", seed=1)
    for carried in ("- Next: continue with step 7", "- The step it stated: - Next: continue with step 7"):
        entries = [("summary", "## State\n" + carried), ("user", "Keep going.")]
        assert "- Next: continue with step 7" in faithful_record(entries, s.facts, reference_count, 800)
        later = [*entries, ("assistant", "Done.\n\nNext: continue with step 8")]
        record = faithful_record(later, s.facts, reference_count, 800)
        assert "- Next: continue with step 8" in record and "step 7" not in record


def _results(n: int) -> list[Message]:
    out: list[Message] = [Message.user("start")]
    for i in range(n):
        out.append(Message("assistant", (ToolUse(f"t{i}", "bash", {"command": f"echo {i}"}),)))
        out.append(Message("user", (ToolResult(f"t{i}", f"line {i}\nsecond"),)))
    return out


def test_masking_keeps_the_latest_ten_observations_and_nothing_else_changes() -> None:
    s = _short()
    policy = Masking(32_000, frame(), reference_count, writer("faithful", s))
    history = _results(15)
    masked = policy.prepare(history)
    contents = [r.content for m in masked for r in m.tool_results]
    assert contents[:5] == ["Old environment output: (2 lines omitted)"] * 5
    assert contents[5:] == [f"line {i}\nsecond" for i in range(5, 15)]
    again = policy.prepare(masked)  # masked messages stay the same objects: the cached prefix holds
    assert len(again) == len(masked) and all(a is b for a, b in zip(again, masked, strict=True))
    assert not policy.summaries


def test_hybrid_summarizes_twenty_one_turns_once_thirty_one_wait() -> None:
    s = _short()
    policy = Hybrid(1_000_000, frame(), reference_count, writer("faithful", s))
    history = _results(30)
    assert not policy.summaries and len(policy.prepare(history)) == len(history)
    history = _results(31)
    for m in history:
        for r in m.tool_results:
            policy.ingest(ToolUse(r.tool_use_id, "bash", {}), r, 1)
    out = policy.prepare(history)
    assert len(policy.summaries) == 1
    assert out[0] is history[0] and out[1].summary is not None
    assert sum(1 for m in out if m.role == "assistant") == 10
    assert "line 0" in policy.summaries[0].messages[0].text  # the summarizer reads turns unmasked


def test_the_paused_pace_lets_cache_entries_expire() -> None:
    s = make_session("long", seed=3)
    run, _ = _run(Ours, s, 200_000)
    steady, paused = run.bills["claude"], run.bills["claude-paused"]
    assert paused.write > steady.write and paused.read < steady.read
    assert run.dollars("claude-paused", _prices()) > run.dollars("claude", _prices())


def test_claude_is_billed_at_the_tokenizer_ratio() -> None:
    s = _short(steps=30)
    run, _ = _run(NoCompaction, s, 1_000_000)
    expected = run.bills["claude"].dollars(_prices()) * CLAUDE_RATIO
    assert run.dollars("claude", _prices()) == pytest.approx(expected)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_runs_the_chat_session(name: str) -> None:
    run, _ = _run(POLICIES[name], session("chat", 1, "typical"), 200_000)
    assert run.requests and all(size <= 200_000 for size in run.requests)


def _prices():  # type: ignore[no-untyped-def]
    from bench_report import prices

    return prices()["claude"]


def _all_prices():  # type: ignore[no-untyped-def]
    from bench_report import prices

    return prices()

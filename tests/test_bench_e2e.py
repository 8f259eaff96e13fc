"""The benchmark's end-to-end mode (benchmarks/bench_e2e.py): probes scored as each request arrives,
recall as a real tool round trip asked with the question's words, the stand-in summarizers, and
the same probe points and figures whatever compacts.

A short session (the first 40 steps of `long`, seed 1) with small windows, so the product compacts;
four runs of about 8 s each (one `agent -p` per user message; in one, the fake takes 0.3 s to
write each record), shared by the tests.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_e2e import (  # noqa: E402
    E2ERun,
    judge_recall,
    request_entries,
    request_text,
    run_e2e,
    segments,
    tool_results,
)
from bench_replay import PROBE_EVERY  # noqa: E402
from bench_sessions import PORT, Fact, Session, make_session  # noqa: E402
from bench_standins import faithful_record  # noqa: E402

from agent_cli.testing.summary_shape import is_summary_request  # noqa: E402

SMALL, MEDIUM = 16_000, 24_000
SLOW_SUMMARY = 0.3  # seconds the fake takes to answer a summary request, in one run
# Said in the session (the dev server's address), asked with words no text of the session holds:
# whenever the request has lost it, the recall returns other passages, and the probe must fail.
UNFINDABLE = Fact(
    "recall", f"127.0.0.1:{PORT}", "What colour was the bikeshed painted?", "Which hue won the vote?"
)


def _session() -> Session:
    session = make_session("long", seed=1)
    session.steps = session.steps[:40]
    step = session.steps[2]  # make dev-server
    session.steps[2] = replace(step, facts=(*step.facts, UNFINDABLE))
    return session


@cache
def _run(
    window: int,
    summarizer: str = "lossy",
    probe_recall: bool = True,
    again: int = 0,
    summary_seconds: float = 0.0,
) -> E2ERun:
    run = run_e2e(
        "long", window, summarizer=summarizer, session=_session(), probe_recall=probe_recall,
        summary_seconds=summary_seconds,
    )  # fmt: skip
    assert not run.failed, run.failed
    return run


def _timeless(text: str | None) -> str | None:
    """`text` without the session folders' names (20261205-154001-4f2a9c: when the session began)."""
    return None if text is None else re.sub(r"\b\d{8}-\d{6}-", "", text)


def _assistant_calls(run: E2ERun, name: str) -> dict[str, dict]:
    """Every tool call of `name` the agent sent back to the fake, by id: its input."""
    found: dict[str, dict] = {}
    for q in run.recorded:
        for m in q.body.get("messages", []):
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if b.get("type") == "tool_use" and b.get("name") == name:
                        found[b["id"]] = b["input"]
    return found


def _main(run: E2ERun) -> list[dict]:
    return [q.body for q in run.recorded if q.api != "models" and not is_summary_request(q.body)]


def test_recall_calls_ask_with_the_question_never_the_answer() -> None:
    run = _run(SMALL)
    calls = _assistant_calls(run, "recall")
    assert run.recall_calls > 0 and len(calls) == run.recall_calls
    queries = {q for f in _session().facts if f.kind == "recall" for q in (f.question, f.paraphrase)}
    answers = [f.text for f in _session().facts]
    for call_input in calls.values():
        assert set(call_input) == {"query"} and call_input["query"] in queries
        assert not any(a in json.dumps(call_input) for a in answers)


def test_a_recall_is_judged_by_the_result_the_agent_returned_then() -> None:
    run = _run(SMALL)
    assert run.recalls and len(run.recalls) == run.recall_calls
    bodies = _main(run)
    for check in run.recalls:
        # The first main request carrying this call's result: what the agent's tool returned then.
        returned = next(tool_results(b)[check.call_id] for b in bodies if check.call_id in tool_results(b))
        assert check.result == returned
        assert check.passed == (check.answer in returned)
    # A recall whose result does not hold the answer fails: nothing the session says matches the words.
    unfindable = [c for c in run.recalls if c.query in (UNFINDABLE.question, UNFINDABLE.paraphrase)]
    assert unfindable and not any(c.passed for c in unfindable)
    assert all(c.result and f"127.0.0.1:{PORT}" not in c.result for c in unfindable)
    found = [c for c in run.recalls if c.query not in (UNFINDABLE.question, UNFINDABLE.paraphrase)]
    assert any(c.passed for c in found)


def test_judging_reads_only_the_tool_result_for_that_call() -> None:
    fact = Fact("recall", "RETRY_TIMEOUT = 37", "What changed?", "config.py")
    elsewhere = {
        "messages": [{"role": "user", "content": "RETRY_TIMEOUT = 37 is in the text, not the result"}]
    }
    wrong = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_recall_0010_0", "content": "No match for 'config.py'"},
        {"type": "tool_result", "tool_use_id": "other", "content": "RETRY_TIMEOUT = 37"},
    ]}]}  # fmt: skip
    right = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_recall_0010_0",
         "content": [{"type": "text", "text": "[span-002 · m1]\nRETRY_TIMEOUT = 37  # was 30"}]},
    ]}]}  # fmt: skip
    pending = [(fact, "toolu_recall_0010_0")]
    assert [c.passed for c in judge_recall(pending, elsewhere, 10)] == [False]
    assert judge_recall(pending, elsewhere, 10)[0].result is None
    assert [c.passed for c in judge_recall(pending, wrong, 10)] == [False]
    assert [c.passed for c in judge_recall(pending, right, 10)] == [True]


def test_probe_points_are_every_tenth_main_request_whatever_compacts() -> None:
    steps = sum(len(s) for _, s in segments(_session()))
    expected = list(range(PROBE_EVERY, steps + 1, PROBE_EVERY))
    runs = [_run(SMALL), _run(SMALL, probe_recall=False), _run(MEDIUM, "faithful")]
    for run in runs:
        assert run.main_requests == steps
        assert run.probe_points == expected
    # They compacted differently and made different numbers of requests, yet were probed alike.
    assert len({(r.requests, r.summary_calls, r.recall_calls) for r in runs}) == 3
    assert all(r.summary_calls for r in runs)
    # Every planted fact is probed at every point after it was said (all are said before the first).
    facts = _session().facts
    for run in runs:
        assert len(run.probes["recall"]) == len(expected) * sum(f.kind == "recall" for f in facts)
        assert len(run.probes["decision"]) == len(expected) * sum(f.kind == "decision" for f in facts)


def test_the_recall_round_trip_is_billed_as_the_product_bills_it() -> None:
    on, off = _run(SMALL), _run(SMALL, probe_recall=False)
    assert on.recall_calls > 0 and off.recall_calls == 0
    assert on.over_window == off.over_window == 0
    # One more main request per probe point that asked for a recall (all its calls in one reply).
    asked = len({c.point for c in on.recalls})
    assert len(_main(on)) == len(_main(off)) + asked
    billed = [r.input_tokens + r.cache_read + r.cache_write for r in (on, off)]
    assert billed[0] > billed[1] and on.dollars > off.dollars
    # The recall results stay in the history: a later request still carries one.
    last = _main(on)[-1]
    assert any(c.call_id in tool_results(last) for c in on.recalls) or on.compactions


def test_two_runs_give_the_same_scores_and_counts() -> None:
    # The second run's summaries take the fake a while to write: where a record made in the
    # background reached the run one request later, what the model saw then (whether it recalled,
    # what L0 capped, the bill) moved with it (with half a second: 7 summary calls instead of 12).
    one, two = _run(SMALL), _run(SMALL, again=1, summary_seconds=SLOW_SUMMARY)
    assert one.figures() == two.figures()
    assert one.probes == two.probes and one.probe_points == two.probe_points
    # What recall returned, word for word but for the session's folder, named by the time it began.
    assert [(c.point, c.query, c.passed, _timeless(c.result)) for c in one.recalls] == [
        (c.point, c.query, c.passed, _timeless(c.result)) for c in two.recalls
    ]
    # The same requests, of the same sizes (a summary request and the main request sent beside it
    # may reach the fake in either order).
    assert sorted(q.input_tokens for q in one.recorded) == sorted(q.input_tokens for q in two.recorded)


def test_summary_requests_are_answered_by_the_stand_in_within_the_products_cap() -> None:
    run = _run(MEDIUM, "faithful")
    facts = _session().facts
    later = [request_text(q.body) for q in run.recorded]
    summaries = [(i, q.body) for i, q in enumerate(run.recorded) if is_summary_request(q.body)]
    assert summaries and run.digests == 0
    rolled = 0
    for n, (i, body) in enumerate(summaries):
        entries = request_entries(body)
        assert not any("Stop here and write no tool calls" in text for _, text in entries)
        rolled += any(role == "summary" for role, _ in entries)
        cap = body["max_tokens"] // 2
        record = faithful_record(entries, facts, lambda s: (len(s) + 3) // 4, cap)
        assert (len(record) + 3) // 4 <= cap
        # The product put it in the history (a digest stood in until then); the last one may still be
        # on its way when the session ends, and only that one.
        put = any(record in text for text in later[i + 1 :])
        assert put or n == len(summaries) - 1
    assert rolled  # a second compaction reads the first record as a "summary" entry


def test_a_chunked_summary_request_is_read_as_entries() -> None:
    chunk = (
        "EARLIER CONDENSED RECORD:\n## State\n- Next: fix it\n\nCONVERSATION TRANSCRIPT, PART 2 OF 3:\n"
        'USER: fix the tests\n\nASSISTANT: running them\nTOOL CALL bash {"command": "pytest -q"}\n\n'
        "TOOL ERROR (bash):\nE   KeyError: 'tenant_id'"
    )
    body = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": chunk}, {"type": "text", "text": "Stop here and write no tool calls."},
    ]}]}  # fmt: skip
    assert request_entries(body) == [
        ("summary", "## State\n- Next: fix it"),
        ("user", "fix the tests"),
        ("assistant", 'running them\n[tool call bash {"command": "pytest -q"}]'),
        ("tool", "E   KeyError: 'tenant_id'"),
    ]


def test_commands_run_as_the_session_wrote_them() -> None:
    run = _run(SMALL)
    calls = _assistant_calls(run, "bash")
    assert calls["toolu_00001"] == {"command": "pytest -q tests/test_auth.py"}
    result = next(tool_results(b)["toolu_00001"] for b in _main(run) if "toolu_00001" in tool_results(b))
    assert "E   KeyError: 'tenant_id' in handlers/auth.py:142" in result

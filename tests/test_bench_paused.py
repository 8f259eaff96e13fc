"""The replay's paused pace is one the policy lives through: a policy that reads the clock is run
again with the paused clock (`bench_replay.replay_paced`), and its paused figures are that run's;
a policy that never reads it sends the same bytes at both paces, so one run serves both."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_billing import CACHES, Bill  # noqa: E402
from bench_floor_cells import check  # noqa: E402
from bench_policies import IDLE_TTL, POLICIES, SUMMARIZING, Ours, Policy  # noqa: E402
from bench_replay import PROBES, Run, reference_count, replay, replay_paced  # noqa: E402
from bench_sessions import Session, make_session  # noqa: E402
from bench_setup import frame, frame_tokens, prices, writer  # noqa: E402
from bench_tables import Agg, Group, paused_line, policy_table  # noqa: E402

from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.core.messages import Message  # noqa: E402

# Lines at which a pause in the survey's first 40 steps lands where the idle rule clears a result
# the steady run keeps (at the default trigger, 90%, the clear it makes is one the steady run makes
# at the same request: the same bytes at both paces).
LINES = ContextSettings(trigger_ratio=0.80)


def _survey(steps: int = 40) -> Session:
    """The survey's first 40 steps: above ours' L1 line at 200k, a clear most turns."""
    s = make_session("survey", seed=1, outputs="typical")
    return Session(s.name, s.steps[:steps])


class _Given(Ours):
    """Ours, keeping the clock it was given before each request."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.given: list[float] = []

    def prepare(self, history: list[Message]) -> list[Message]:
        self.given.append(self.now)
        return super().prepare(history)


def test_ours_sees_the_paused_clock_and_its_idle_rule_acts_there() -> None:
    s = _survey()
    made: list[_Given] = []

    def make() -> _Given:
        made.append(_Given(200_000, frame(), reference_count, writer("faithful", s), LINES))
        return made[-1]

    run = replay_paced(s, make, frame_tokens(), seed=1)
    steady, paused = made
    assert run.paused is not None and run.paused.pace == "paused"

    def gaps(p: _Given) -> list[float]:
        return [b - a for a, b in zip(p.given, p.given[1:], strict=False)]

    assert max(gaps(steady)) < IDLE_TTL < max(gaps(paused))  # pauses past the cache's TTL, seen
    # The engine tells the cold cache by that clock: after a pause it clears what it would not warm.
    assert run.idle_clears == 0 and run.paused.idle_clears > 0
    assert run.paused.fingerprint != run.fingerprint


def test_the_paused_run_gives_the_paused_figures_and_the_steady_ones_stay() -> None:
    s = _survey()

    def make() -> Ours:
        return Ours(200_000, frame(), reference_count, writer("faithful", s), LINES)

    alone = replay(s, make(), frame_tokens(), seed=1)
    run = replay_paced(s, make, frame_tokens(), seed=1)
    assert run.paused is not None
    assert run.fingerprint == alone.fingerprint and run.requests == alone.requests
    for cache in CACHES:
        expected = run.paused.bills[cache] if cache.endswith("-paused") else alone.bills[cache]
        assert run.bills[cache] == expected, cache
    assert run.bills["claude-paused"] != alone.bills["claude-paused"]  # what the idle rule changed
    assert run.probes == alone.probes
    for probe in PROBES:
        assert run.share(probe, "claude-paused") == run.paused.share(probe)
    # The same again: the replay stays deterministic with the second run.
    again = replay_paced(s, make, frame_tokens(), seed=1)
    assert again.paused is not None and again.paused.fingerprint == run.paused.fingerprint


# A window where each finishes the long session's first 100 steps, summarizing where it summarizes.
WINDOWS = {"java-s06": 200_000, "kotlin": 200_000, "javascript": 1_000_000, "masking": 200_000,
           "hybrid": 200_000, "none": 1_000_000}  # fmt: skip


@pytest.mark.parametrize("name", [n for n in POLICIES if n != "ours"])
def test_a_policy_that_never_reads_the_clock_sends_the_same_bytes_at_both_paces(name: str) -> None:
    whole = make_session("long", seed=1, outputs="typical")
    s = Session(whole.name, whole.steps[:100])

    def make() -> Policy:
        return POLICIES[name](WINDOWS[name], frame(), reference_count, writer("faithful", s))

    steady_policy, paused_policy = make(), make()
    steady = replay(s, steady_policy, frame_tokens(), seed=1)
    paused = replay(s, paused_policy, frame_tokens(), seed=1, pace="paused")
    assert steady.finished and (steady.summary_calls > 0 or name not in SUMMARIZING)
    assert not steady_policy.read_clock and not paused_policy.read_clock
    assert paused.fingerprint == steady.fingerprint
    assert paused.bills == steady.bills and paused.probes == steady.probes
    assert paused.summary_calls == steady.summary_calls
    assert replay_paced(s, make, frame_tokens(), seed=1).paused is None  # one run serves both paces


def test_ours_reads_the_clock() -> None:
    s = _survey(6)
    policy = Ours(200_000, frame(), reference_count, writer("faithful", s))
    replay(s, policy, frame_tokens(), seed=1)
    assert policy.read_clock


def _run(policy: str, tokens: int, recall: list[bool], paused_recall: list[bool] | None = None) -> Run:
    """A chat run billed `tokens` uncached at every cache (and a run at the paused pace, if probes given)."""
    run = Run(policy, 200_000, shape="chat", seed=1, outputs="typical")
    run.bills = {c: Bill(input=tokens) for c in CACHES}
    run.probes["recall"] = recall
    if paused_recall is not None:
        other = Run(policy, 200_000, shape="chat", seed=1, outputs="typical", pace="paused")
        other.bills = {c: Bill(input=tokens) for c in CACHES}
        other.probes["recall"] = paused_recall
        run.with_paused(other)
    return run


def test_the_tables_report_the_paused_runs_probes_and_judge_the_paused_pace_by_them() -> None:
    ours = _run("ours", 2_000_000, [True, True], [False, False])
    assert ours.paused is not None
    ours.paused.idle_clears, ours.paused.clears = 3, 5
    g = Group("chat", "typical", 200_000, "lossy", {
        "ours": Agg("ours", [ours]),
        "masking": Agg("masking", [_run("masking", 1_000_000, [True, False])]),
    })  # fmt: skip
    table = policy_table(g, prices())
    assert "| 100% (paused 0%) |" in next(line for line in table if line.startswith("| ours |"))
    assert "(paused" not in next(line for line in table if line.startswith("| masking |"))
    assert "ours, 3.0 of its 5.0 clears" in paused_line(g)
    # Masking is cheaper at both paces: less faithful than ours' steady run, as faithful as its paused one.
    assert check(g, prices(), "claude").beaten_by == ()
    assert check(g, prices(), "claude-paused").beaten_by == ("masking",)


def test_a_run_that_fails_at_the_paused_pace_is_not_finished() -> None:
    run = _run("ours", 1, [True], [True])
    assert run.finished and run.paused is not None
    run.paused.failed_at = 4
    assert not run.finished
    g = Group("chat", "typical", 200_000, "lossy", {"ours": Agg("ours", [run])})
    assert "refused at request 4 at the paused pace" in "\n".join(policy_table(g, prices()))

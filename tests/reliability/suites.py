"""Every suite's cases, or the CI sample of them."""

from __future__ import annotations

from tests.reliability import faults, inputs, kills, security, signals
from tests.reliability.harness import Case

# The CI sample kills inside the two summary calls only; tests/test_e2e_headless.py kills during bash.
SAMPLE_KILLS = 0


def all_cases(*, kills: int = 50, seed: int = 1, sample: bool = False) -> list[Case]:
    found = [
        *faults.cases(),
        *kills_cases(SAMPLE_KILLS if sample else kills, seed),
        *inputs.cases(),
        *signals.cases(),
        *security.cases(),
    ]
    return [c for c in found if c.sample] if sample else found


def kills_cases(count: int, seed: int) -> list[Case]:
    return [Case(c.suite, c.name, c.run, sample=True) for c in kills.cases(count, seed, sample=count)]

"""Every suite's cases, or the CI sample of them."""

from __future__ import annotations

from tests.reliability import (
    faults,
    hostile_allowlist,
    hostile_processes,
    hostile_providers,
    hostile_repository,
    hostile_sandbox,
    hostile_store,
    hostile_terminal,
    hostile_tools,
    inputs,
    kills,
    sandbox_agent,
    security,
    signals,
)
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
        *hostile_terminal.cases(),
        *hostile_allowlist.cases(),
        *hostile_tools.cases(),
        *hostile_processes.cases(),
        *hostile_repository.cases(),
        *hostile_providers.cases(),
        *hostile_store.cases(),
        *hostile_sandbox.cases(),
        *sandbox_agent.cases(),
    ]
    return [c for c in found if c.sample] if sample else found


def kills_cases(count: int, seed: int) -> list[Case]:
    return [Case(c.suite, c.name, c.run, sample=True) for c in kills.cases(count, seed, sample=count)]

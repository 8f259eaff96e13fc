"""The CI sample of the reliability suites (`python -m tests.reliability` runs them all and writes
docs/reliability.md): a few cases of each suite, every one of which must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.harness import run_cases
from tests.reliability.report import TITLES
from tests.reliability.suites import all_cases

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the signal suite reads /proc")
SAMPLE = all_cases(sample=True)


@pytest.mark.parametrize("suite", list(TITLES))
def test_the_sample_of_each_suite_passes(suite: str, tmp_path: Path) -> None:
    cases = [c for c in SAMPLE if c.suite == suite]
    assert cases, f"no {suite} cases in the sample"
    results = run_cases(cases, tmp_path, workers=1 if suite in ("kills", "signals") else 2)
    failed = [f"{r.case.name}: {r.outcome.detail} {r.leaks or ''}" for r in results if not r.passed]
    assert not failed, "\n".join(failed)
    assert all(r.outcome.orphans == 0 and r.outcome.lost == 0 and not r.leaks for r in results)

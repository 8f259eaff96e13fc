"""Reliability suites anyone can rerun: faults, kills, bad inputs, signals and security, each case a
real `agent` process against the fake model server, every file it wrote swept for the API key.

    python -m tests.reliability            # the full suites; writes docs/reliability.md
    python -m tests.reliability --sample   # the CI sample (what tests/test_reliability.py runs)

`harness` runs cases and judges their endings, `keys` sweeps for the key, one module per suite
(`faults`, `kills`, `inputs`, `signals`, `security`), `report` writes the table.
"""

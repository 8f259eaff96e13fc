"""The long run (benchmarks/long_run.py), smaller: `agent -p --goal ... --check ...` at a 32k window
on the fake server, a todo list, a background command, three `task` sub-agents reading the files.

On the Anthropic wire and the Responses wire, the goal's check fails once and then passes; the
last request carries every todo item and the goal; no request is over the window; the parent's
requests hold each child's report and none of the facts only the children read; a `--continue`
run's recall finds such a fact in a child's transcript. The same checks flag a run whose children
put their tool output (the facts) in their reports.
"""

from __future__ import annotations

import pytest

from benchmarks.long_run import properties, run

pytestmark = pytest.mark.e2e
WINDOW = 32_000


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_a_long_run_keeps_the_goal_and_todos_and_the_children_s_reports_not_their_output(wire: str) -> None:
    r = run(9, 60, WINDOW, subagents=True, wire=wire)
    assert r["exit"] == 0, r["stderr"]
    assert properties(r, WINDOW, subagents=True) == []
    assert r["goal_rounds"] == ["go_on", "met"]  # the check failed once, then passed
    assert r["child_requests"] >= 3 * 4  # each child read its three files, then reported
    assert "SURVEY-COMPLETE" in r["report"]
    assert r["facts_in_parent"] == 0 and r["reports_in_parent"]
    probe = r["probe"]
    assert probe["exit"] == 0 and probe["from_child"]
    assert "FACT 02: the secret of part 02 is" in probe["answer"]
    assert r["billed"].usd > 0  # priced under the wire's cache rule


def test_the_checks_flag_a_child_whose_report_carries_its_tool_output() -> None:
    r = run(6, 30, WINDOW, subagents=True, leak=True, probe=False)
    assert r["exit"] == 0, r["stderr"]
    assert r["facts_in_parent"] == 6
    assert properties(r, WINDOW, subagents=True) == ["no child's tool output in the parent"]


def test_without_sub_agents_the_parent_reads_every_file_and_the_same_checks_hold() -> None:
    solo = run(6, 30, WINDOW, subagents=False)
    assert properties(solo, WINDOW, subagents=False) == []
    assert solo["facts_in_parent"] == 6 and solo["child_requests"] == 0

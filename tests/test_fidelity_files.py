"""The files list a record carries (context/fidelity.py, condense.py): at a small window it counts
inside the record's budget, the newest kept and the earlier ones counted; an L4 marker that drops a
record keeps its list (emergency.py), and the next record carries it on.
"""

from __future__ import annotations

import re

from test_context_fakes import assistant, tool_round, user

from agent_cli.config.settings import ContextSettings
from agent_cli.context.condense import condensed_history
from agent_cli.context.cut import ACK
from agent_cli.context.emergency import apply_drop, marker_text, plan_drop
from agent_cli.context.fidelity import FILES_HEADER, carried_paths, span_facts
from agent_cli.context.thresholds import Thresholds, compute_thresholds, output_for_window
from agent_cli.core.messages import Message, SummaryBlock
from agent_cli.tokens.estimate import estimate_tokens

# 300 files with long paths (a worktree under a home directory), each read once.
PATHS = [
    f"/home/user/projects/app-worktrees/app-4te/lib/app/module_{n:03}/implementation.ex" for n in range(300)
]
# the gap line, after its number
UNLISTED = " more files touched between these, not listed; recall finds them)"
INTRO = 150  # the record's intro and closing lines, about 100 tokens
BODY = "## Work state\nSurveyed the modules one by one.\n\n## Next\nNext: write the summary table."


def lines(window: int) -> Thresholds:
    return compute_thresholds(ContextSettings(), window, output_for_window(32_000, window))


def survey(paths: list[str]) -> list[Message]:
    span: list[Message] = [user("survey every module and tell me what each does")]
    for path in paths:
        span += [*tool_round("read_file", {"path": path}, "defmodule X do\nend\n"), assistant("ok")]
    return span


def unlisted(record: str) -> int:
    """The number the last files list's closing line gives (0 without one)."""
    found = re.findall(r"^\((\d+)" + re.escape(UNLISTED), record[record.rfind(FILES_HEADER) :], re.MULTILINE)
    return int(found[0]) if found else 0


def record_text(history: list[Message]) -> str:
    first = history[0].summary
    assert first is not None
    return first.text


def condensed(span: list[Message], th: Thresholds) -> str:
    tail = [user("go on")]
    history = condensed_history(
        span, tail, BODY, "span-001-compact.jsonl", thresholds=th, count_text=estimate_tokens, pending=True
    )
    return record_text(history)


def test_at_a_32k_window_the_files_list_counts_inside_the_record_budget() -> None:
    th = lines(32_000)
    many = PATHS + [p.replace("module_", "extra_") for p in PATHS]  # 600 files, about 12,000 tokens
    record = condensed(survey(many), th)
    listed = carried_paths(record)
    # The body, the user's messages and the list share their budgets, with the room under the target
    # the verbatim tail leaves (about 3.5k at 32k since L2 frees at least 14k: 300 files fit) and the
    # intro's few lines; the list may always take one body cap of its own.
    spare = th.target - th.summary_cap - th.user_messages - th.keep_tail
    assert spare > 0 and estimate_tokens(record) <= 2 * th.summary_cap + th.user_messages + spare + INTRO
    assert carried_paths(condensed(survey(PATHS), th)) == PATHS
    # Cut from the middle: the files the work began with, then the newest, in order.
    assert 3 < len(listed) < len(many) and listed == many[:3] + many[-(len(listed) - 3) :]
    assert f"({len(many) - len(listed)}{UNLISTED}" in record
    assert unlisted(record) == len(many) - len(listed)


def test_at_a_200k_window_the_list_is_whole() -> None:
    record = condensed(survey(PATHS), lines(200_000))
    assert carried_paths(record) == PATHS and UNLISTED not in record


def test_the_next_record_carries_the_list_on_and_counts_what_no_list_names() -> None:
    th = lines(32_000)
    first = condensed(survey(PATHS), th)
    shown = carried_paths(first)
    earlier = Message("user", (SummaryBlock(first, "span-001-compact.jsonl"),))
    newer = [f"lib/new_{n}.ex" for n in range(3)]
    again = condensed([earlier, assistant(ACK), *survey(newer)[1:]], th)
    listed = carried_paths(again)
    assert listed[-3:] == newer and set(listed) <= set(shown) | set(newer)
    assert unlisted(again) == len(PATHS) + len(newer) - len(listed)


def test_the_files_the_work_began_with_stay_listed_through_many_records() -> None:
    """Before, a small window's list kept only the newest: by the second record the first file read
    (what a task began with) was named nowhere in the request."""
    th = lines(32_000)
    record = condensed(survey(PATHS), th)
    for n in range(4):
        earlier = Message("user", (SummaryBlock(record, f"span-00{n + 2}-compact.jsonl"),))
        newer = [f"lib/round_{n}/file_{k}.ex" for k in range(40)]
        record = condensed([earlier, assistant(ACK), *survey(newer)[1:]], th)
    listed = carried_paths(record)
    assert listed[:3] == PATHS[:3] and listed[-1] == "lib/round_3/file_39.ex"
    assert unlisted(record) == len(PATHS) + 160 - len(listed)


def test_a_marker_that_drops_a_record_keeps_its_files_list() -> None:
    th = lines(32_000)
    record = condensed(survey(PATHS[:20]), th)
    summary = Message("user", (SummaryBlock(record, "span-001-compact.jsonl"),))
    newest = [*tool_round("read_file", {"path": "lib/latest.ex"}, "x " * 400), assistant("done")]
    history = [user("the task"), summary, assistant(ACK), user("and now this"), *newest]
    counts = [estimate_tokens(m.text) + 10 for m in history]
    plan = plan_drop(history, counts, need=10**9)  # everything that may go
    assert plan is not None and 1 in plan.drop  # the record goes
    after = apply_drop(history, plan, marker_text(len(plan.drop), "span-002-emergency.jsonl"))
    assert all(m.summary is None for m in after)
    marker = after[0].text
    # Before: the marker named the transcript only, and every earlier file name was gone.
    assert FILES_HEADER in marker and carried_paths(marker) == [*PATHS[:20], "lib/latest.ex"]
    assert span_facts(after).paths[:20] == tuple(PATHS[:20])  # the next record carries them on


def test_a_path_another_one_names_already_is_listed_once() -> None:
    """A working day at 32k named 265 paths, 28 of them folders a search ran in beside a file found
    there, or a second spelling of one path: the list named them all and cut its middle the sooner."""
    root = "/home/user/projects/app"
    touched = [f"{root}/lib/a.ex", f"{root}/lib/", f"{root}/lib", root, f"{root}/docs/", f"{root}/docs"]
    touched += ["lib/a.ex", "./lib/a.ex", "lib/", "./lib", "src", "src/b.py", "ib/a.ex", "deps/x/"]
    record = condensed(survey(touched), lines(200_000))
    listed = carried_paths(record)
    # A folder holding a path listed goes (`docs` holds none); a second spelling of one path goes; a
    # relative path stays beside an absolute one that ends with it (another root's file, perhaps).
    assert listed == [f"{root}/lib/a.ex", f"{root}/docs/", "lib/a.ex", "src/b.py", "ib/a.ex", "deps/x/"]
    earlier = Message("user", (SummaryBlock(record, "span-001-compact.jsonl"),))
    again = condensed([earlier, assistant(ACK), *survey([f"{root}/lib/c.ex"])[1:]], lines(200_000))
    assert carried_paths(again) == [*listed, f"{root}/lib/c.ex"]  # carried on as it was

"""grep and glob under a time budget: backtracking patterns end with a note, Ctrl-C ends a search at
once, and the model's `re` syntax keeps working on the `regex` engine.

The searches that hung before run in a child process with a timeout: a hung `re` match holds the GIL,
so a test in this process could not even notice it had hung. How long a search took is judged by the
processor time it used (`cpu`), which other work on a busy machine does not inflate; the wall-clock
limits themselves are tested with a clock of our own (`Budget`) or by counting what ran.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.matching import Budget, SearchLimits, SearchStopped, compile_model_regex
from agent_cli.tools.search import Glob, Grep, glob_to_regex

SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank, then rests!\n"
BACKTRACKS = r"^(\w+\s?)*$"  # hangs Python's re on SENTENCE
BACKTRACKS_REGEX = r"^(a|a)*$"  # hangs the regex engine too, on a line of a's and a '!'
A_LINE = "a" * 40 + "!\n"

CHILD = """
import json, sys, time
from pathlib import Path
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools
root, name, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = time.process_time()
out = default_tools().run(name, args, ToolContext(root=Path(root)))
print(json.dumps({"content": out.content, "is_error": out.is_error, "cpu": time.process_time() - start}))
"""


def in_child(root: Path, name: str, **args: Any) -> dict[str, Any]:
    """Run one tool call in a fresh interpreter (default limits); a hang is a failure after 40 s."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(root), name, json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=40,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} {args} still running after 40 s")
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def seconds_as_n(text: str) -> str:
    return re.sub(r"after \d+(\.\d+)? s", "after N s", text)


def test_grep_on_a_backtracking_pattern_ends_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("first line\n" + SENTENCE + A_LINE)
    out = in_child(tmp_path, "grep", pattern=BACKTRACKS_REGEX, path="notes.txt")
    assert not out["is_error"]
    assert re.fullmatch(
        r"\[search stopped after \d+\.\d s: the pattern backtracks \(at notes\.txt:3\); simplify it\]",
        out["content"],
    ), out["content"]
    assert out["cpu"] < 2  # stopped by the call limit (0.25 s), not the file's (2 s)


def test_grep_of_the_sentence_pattern_that_hung_re_answers(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(SENTENCE * 50 + "a plain sentence\n")
    out = in_child(tmp_path, "grep", pattern=BACKTRACKS)
    assert out["content"] == "notes.txt:51:a plain sentence"
    assert out["cpu"] < 2


def test_grep_tree_gives_up_on_backtracking_files_then_stops(tmp_path: Path) -> None:
    (tmp_path / "a_ok.txt").write_text("aaaa\n")
    for name in ("b1", "b2", "b3", "b4"):
        (tmp_path / f"{name}.txt").write_text(A_LINE)
    ctx = ToolContext(root=tmp_path)
    # Only the call limit is under test: the file and total limits are far off, for a busy machine
    # (there a match given 0.1 s has been seen to return after seconds).
    one = Grep(SearchLimits(call=0.1, file=60, total=60)).run(
        {"pattern": BACKTRACKS_REGEX, "path": "b1.txt"}, ctx
    )
    assert seconds_as_n(one.content) == (
        "[search stopped after N s: the pattern backtracks (at b1.txt:1); simplify it]"
    )
    out = (
        Grep(SearchLimits(call=0.1, file=60, total=60, slow_files=3))
        .run({"pattern": BACKTRACKS_REGEX}, ctx)
        .content
    )
    assert seconds_as_n(out).split("\n") == [
        "a_ok.txt:1:aaaa",
        "[search stopped after N s: the pattern backtracks (at b1.txt:1, b2.txt:1, b3.txt:1); simplify it]",
    ]
    some = (
        Grep(SearchLimits(call=0.1, file=60, total=60, slow_files=9))
        .run({"pattern": BACKTRACKS_REGEX}, ctx)
        .content
    )
    assert some.split("\n")[-1] == (
        "[gave up on 4 files: the pattern backtracks there (b1.txt:1, b2.txt:1, b3.txt:1, b4.txt:1); "
        "simplify it]"
    )


def test_grep_total_limit(tmp_path: Path) -> None:
    for n in range(6):
        (tmp_path / f"f{n}.txt").write_text(A_LINE)
    limits = SearchLimits(call=0.1, total=0.35, slow_files=99)
    out = Grep(limits).run({"pattern": BACKTRACKS_REGEX}, ToolContext(tmp_path)).content
    assert re.fullmatch(
        r"No matches for .* in \. \((\d) files? searched\)\.\n"  # one file when the machine is slow
        r"\[search stopped after \d+ s \(the limit\), \1 files? searched; "  # 0 s, 1 s when slow
        r"narrow the path or simplify the pattern\]",
        out,
    ), out


def test_a_cancel_during_a_match_ends_the_search_at_that_match(tmp_path: Path) -> None:
    for n in range(40):
        (tmp_path / f"f{n:02d}.txt").write_text(A_LINE)
    ctx = ToolContext(root=tmp_path)
    limits = SearchLimits(call=0.25, file=60, total=60, slow_files=99)
    start = time.monotonic()
    cancelled_after: list[float] = []

    def cancel() -> None:
        ctx.cancel.set()
        cancelled_after.append(time.monotonic() - start)

    threading.Timer(0.4, cancel).start()
    out = Grep(limits).run({"pattern": BACKTRACKS_REGEX}, ctx)
    assert out.content.endswith("[cancelled: the search is incomplete]"), out.content
    searched = re.search(r"\((\d+) files? searched\)", out.content)
    assert searched is not None, out.content
    # Each file's line backtracks until the call limit stops it, so no more than this many files had
    # begun when the cancel came, however busy the machine; none may begin after it (40 without it).
    assert int(searched[1]) <= cancelled_after[0] / limits.call + 1, (out.content, cancelled_after)


def test_budget_scopes_with_a_clock_of_our_own() -> None:
    now = [0.0]
    cancel = threading.Event()
    budget = Budget(SearchLimits(call=0.25, file=2.0, total=5.0), cancel, clock=lambda: now[0])
    plain = compile_model_regex("x")
    assert budget.search(plain, "axb") and not budget.match(plain, "axb")
    now[0] = 2.5  # the file started at 0 has used its 2 s
    with pytest.raises(SearchStopped) as stopped:
        budget.search(plain, "x")
    assert stopped.value.scope == "file"
    budget.start_file()
    assert budget.search(plain, "x")
    now[0] = 5.0
    with pytest.raises(SearchStopped) as stopped:
        budget.search(plain, "x")
    assert stopped.value.scope == "total"
    cancel.set()
    with pytest.raises(SearchStopped) as stopped:
        budget.check()
    assert stopped.value.scope == "cancelled"


@pytest.mark.parametrize(
    ("pattern", "line", "matches"),
    [
        ("(?i)hello", "HeLLo there", True),
        (r"(?P<word>\w+)=(?P=word)", "ab=ab", True),
        (r"\d+", "\u0661\u0662\u0663", True),  # Arabic-Indic digits, as in re
        (r"(?x) a  b  # a comment", "ab", True),
        (r"\bfoo\b", "a foo b", True),
        (r"(?<=x)y", "xy", True),
        (r"(?>a+)b", "aab", True),
        (r"a*+a", "aaa", False),
        (r"[^\W\d_]+", "\u00e9", True),
        (r"\N{LATIN SMALL LETTER E WITH ACUTE}", "caf\u00e9", True),
        (r"\Aonly\Z", "only", True),
    ],
)
def test_re_syntax_keeps_working(pattern: str, line: str, matches: bool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(line + "\n")
    out = Grep().run({"pattern": pattern, "path": "f.txt"}, ToolContext(tmp_path))
    assert out == ToolOutput(f"f.txt:1:{line}" if matches else f"No matches for {pattern!r} in f.txt.")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/**/**/x.py", "x.py", True),
        ("**/**/**/x.py", "a/b/x.py", True),
        ("a/**/**/b", "a/b", True),
        ("***.py", "x.py", True),
        ("*a*a*a*b", "aaab", True),
        ("*a*a*a*b", "aab", False),
        ("*a*b*c", "xaybzc", True),
        ("*a*b*c", "xaybzcq", False),
        ("[!a]x", "/x", False),  # a negated class never matches the separator
        ("[!]]x", "ax", True),
        ("[!]]x", "]x", False),
    ],
)
def test_glob_collapses_and_stays_in_segments(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_to_regex(pattern).match(path)) is matches


def test_glob_of_many_stars_answers_at_once(tmp_path: Path) -> None:
    (tmp_path / ("a" * 200)).write_text("")  # Python's re tries every way of placing the a's
    out = in_child(tmp_path, "glob", pattern="*a*a*a*a*a*a*a*a*a*a*a*a*b")
    assert (
        out["content"] == "No paths match '*a*a*a*a*a*a*a*a*a*a*a*a*b' (patterns without '/' "
        "match only the top level; try '**/*a*a*a*a*a*a*a*a*a*a*a*a*b')."
    )
    assert out["cpu"] < 0.5


def test_glob_is_bounded_in_time_too(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("")
    out = Glob(SearchLimits(total=0.0)).run({"pattern": "**/*.txt"}, ToolContext(tmp_path))
    assert out.content.split("\n") == [
        "No paths match '**/*.txt'.",
        "[listing stopped after 0 s (the limit); narrow the pattern]",
    ]

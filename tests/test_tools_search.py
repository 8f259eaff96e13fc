"""glob and grep over a real temporary tree; the glob pattern language on its own; context tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.tools.base import CompactRequest, ToolContext, ToolOutput
from agent_cli.tools.context_tools import SCHEDULED
from agent_cli.tools.registry import default_tools
from agent_cli.tools.search import GLOB_MAX_RESULTS, GREP_MAX_MATCHES, glob_to_regex

REGISTRY = default_tools()


def run(ctx: ToolContext, name: str, **args: Any) -> ToolOutput:
    return REGISTRY.run(name, args, ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "proj"
    files = {
        "README.md": "# demo\nTODO: write docs\n",
        "src/app.py": "def main():\n    return 'TODO'\n",
        "src/pkg/util.py": "def helper(x):\n    return x * 2\n",
        "src/pkg/data.json": '{"todo": false}\n',
        "tests/test_app.py": "from src.app import main\n",
        ".git/config": "TODO in git\n",
        "node_modules/lib/index.py": "TODO in node_modules\n",
        ".venv/lib/site.py": "TODO in venv\n",
        "src/__pycache__/app.cpython-311.py": "TODO cached\n",
        ".transcripts/s1/session.jsonl": "TODO transcript\n",
    }
    for i, (rel, text) in enumerate(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))  # later entries are newer
    return ToolContext(root=root)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/pkg/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/pkg/deep/a.py", True),
        ("src/**/*.py", "lib/a.py", False),
        ("src/**", "src/pkg/a.py", True),
        ("test_?.py", "test_a.py", True),
        ("test_?.py", "test_ab.py", False),
        ("[ab].txt", "a.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("a.py", "a_py", False),
        ("*.py", "a.pyc", False),
        ("src/*/util.py", "src/pkg/util.py", True),
        ("src/*/util.py", "src/a/b/util.py", False),
        ("[unclosed", "[unclosed", True),
    ],
)
def test_glob_pattern_language(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_to_regex(pattern).match(path)) is matches


def test_glob_newest_first_and_skips(ctx: ToolContext) -> None:
    out = run(ctx, "glob", pattern="**/*.py")
    assert out == ToolOutput("tests/test_app.py\nsrc/pkg/util.py\nsrc/app.py")


def test_glob_lists_directories_with_slash(ctx: ToolContext) -> None:
    assert set(run(ctx, "glob", pattern="src/*").content.split("\n")) == {"src/app.py", "src/pkg/"}


def test_glob_top_level_hint(ctx: ToolContext) -> None:
    out = run(ctx, "glob", pattern="*.py")
    assert not out.is_error
    assert "try '**/*.py'" in out.content


def test_glob_caps_with_a_note(tmp_path: Path) -> None:
    for i in range(GLOB_MAX_RESULTS + 50):
        (tmp_path / f"f{i:04d}.txt").write_text("")
        os.utime(tmp_path / f"f{i:04d}.txt", (i, i))
    lines = run(ToolContext(root=tmp_path), "glob", pattern="*.txt").content.split("\n")
    assert len(lines) == GLOB_MAX_RESULTS + 1
    assert lines[0] == f"f{GLOB_MAX_RESULTS + 49:04d}.txt"  # the newest
    assert (
        lines[-1] == f"[{GLOB_MAX_RESULTS} of {GLOB_MAX_RESULTS + 50} matches shown, newest first; "
        "narrow the pattern to see others]"
    )


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("../*", "relative to the project root"), ("/etc/*", "relative to the project root")],
)
def test_glob_refuses_leaving_the_root(ctx: ToolContext, pattern: str, expected: str) -> None:
    out = run(ctx, "glob", pattern=pattern)
    assert out.is_error and expected in out.content


def test_glob_does_not_follow_directory_symlinks_out(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x")
    (ctx.root / "escape").symlink_to(outside)
    assert "secret" not in run(ctx, "glob", pattern="**/*.py").content
    named = run(ctx, "glob", pattern="escape/*")  # the symlink named as the folder to start from
    assert named.is_error and "secret" not in named.content and "outside" in named.content


def test_grep_tree_output_and_skips(ctx: ToolContext) -> None:
    out = run(ctx, "grep", pattern="TODO")
    assert out == ToolOutput("README.md:2:TODO: write docs\nsrc/app.py:2:    return 'TODO'")


def test_grep_case_insensitive_flag_and_single_file(ctx: ToolContext) -> None:
    assert run(ctx, "grep", pattern="(?i)todo", path="src/pkg/data.json").content == (
        'src/pkg/data.json:1:{"todo": false}'
    )


def test_grep_no_matches_is_not_an_error(ctx: ToolContext) -> None:
    out = run(ctx, "grep", pattern="nowhere to be found", path="src")
    assert out == ToolOutput("No matches for 'nowhere to be found' in src (3 files searched).")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"pattern": "foo("}, "bad regex 'foo(': missing ) at position 4"),
        ({"pattern": "[a-"}, "bad regex"),
        ({"pattern": ""}, "argument 'pattern' is empty"),
        ({}, "missing required argument 'pattern'"),
        ({"pattern": "x", "path": "nope"}, "path not found: nope"),
        ({"pattern": "x", "path": "../"}, "path is outside the project root"),
    ],
)
def test_grep_errors(ctx: ToolContext, args: dict[str, Any], expected: str) -> None:
    out = run(ctx, "grep", **args)
    assert out.is_error
    assert expected in out.content


def test_grep_skips_binary_and_big_files(ctx: ToolContext) -> None:
    (ctx.root / "blob.bin").write_bytes(b"needle\x00\x01")
    (ctx.root / "big.log").write_text("needle\n" + "x" * (3 * 1024 * 1024))
    (ctx.root / "small.txt").write_text("a needle here\n")
    out = run(ctx, "grep", pattern="needle").content.split("\n")
    assert out[0] == "small.txt:1:a needle here"
    assert out[1].startswith("[skipped 1 file over 2 MiB: big.log")
    assert len(out) == 2
    single = run(ctx, "grep", pattern="needle", path="blob.bin")
    assert single.is_error and "binary" in single.content


def test_grep_non_utf8_file_still_searched(ctx: ToolContext) -> None:
    (ctx.root / "latin.txt").write_bytes(b"caf\xe9 needle\n")
    assert run(ctx, "grep", pattern="needle", path="latin.txt").content == "latin.txt:1:caf\ufffd needle"


def test_grep_line_numbers_agree_with_read_file(tmp_path: Path) -> None:
    (tmp_path / "odd.txt").write_text("a\fb\u2028c\r\nneedle\n", newline="")
    ctx = ToolContext(root=tmp_path)
    assert run(ctx, "grep", pattern="needle").content == "odd.txt:2:needle"
    assert run(ctx, "read_file", path="odd.txt", offset=2).content == "     2\tneedle"


def test_grep_caps_matches(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * (GREP_MAX_MATCHES * 3))
    lines = run(ToolContext(root=tmp_path), "grep", pattern="hit").content.split("\n")
    assert len(lines) == GREP_MAX_MATCHES + 1
    assert lines[GREP_MAX_MATCHES - 1] == f"many.txt:{GREP_MAX_MATCHES}:hit"
    assert lines[-1].startswith(f"[stopped at {GREP_MAX_MATCHES} matching lines; more may exist")


def test_grep_stops_when_cancelled(ctx: ToolContext) -> None:
    ctx.cancel.set()
    out = run(ctx, "grep", pattern="TODO")
    assert "[cancelled: the search is incomplete]" in out.content


# --- compact / recall ----------------------------------------------------------------------------


def test_recall_without_an_engine_says_so(ctx: ToolContext) -> None:
    out = run(ctx, "recall", query="x")
    assert out.is_error and "context engine is not available" in out.content


def test_compact_returns_the_wish_as_a_value(ctx: ToolContext) -> None:
    wish = CompactRequest("the parser")
    assert run(ctx, "compact", focus="the parser") == ToolOutput(SCHEDULED, compact=wish)
    assert run(ctx, "compact") == ToolOutput(SCHEDULED, compact=CompactRequest(None))
    assert run(ctx, "compact", focus=3).is_error  # a bad focus is the model's to fix


def test_recall_searches_through_the_context_it_was_given(tmp_path: Path) -> None:
    asked: list[str] = []

    def recall(query: str) -> str:
        asked.append(query)
        return "passage"

    wired = ToolContext(root=tmp_path, recall=recall)
    assert run(wired, "recall", query="parse_args") == ToolOutput("passage")
    assert run(wired, "recall").is_error
    assert asked == ["parse_args"]


def test_registry_order_and_specs() -> None:
    assert REGISTRY.names() == [
        "read_file",
        "write_file",
        "edit_file",
        "bash",
        "glob",
        "grep",
        "compact",
        "recall",
        "web_fetch",
        "bash_output",
        "kill_shell",
        "todo_write",
        "remember",
    ]
    for spec in REGISTRY.specs():
        assert spec.input_schema["type"] == "object"
        assert spec.description
        for required in spec.input_schema.get("required", []):
            assert required in spec.input_schema["properties"]


def test_one_file_searched_is_said_so(ctx: ToolContext) -> None:
    out = run(ctx, "grep", pattern="absent", path="tests")
    assert out == ToolOutput("No matches for 'absent' in tests (1 file searched).")

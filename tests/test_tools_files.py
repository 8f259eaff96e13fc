"""read_file, write_file, edit_file and path resolution, run for real in a temporary project."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.files import MAX_LINE_CHARS, MAX_OUTPUT_BYTES
from agent_cli.tools.read_window import MAX_COUNT_BYTES
from agent_cli.tools.registry import default_tools

REGISTRY = default_tools()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "proj"
    root.mkdir()
    return ToolContext(root=root)


def run(ctx: ToolContext, name: str, **args: Any) -> ToolOutput:
    return REGISTRY.run(name, args, ctx)


def ok(ctx: ToolContext, name: str, **args: Any) -> str:
    out = run(ctx, name, **args)
    assert not out.is_error, out.content
    return out.content


def err(ctx: ToolContext, name: str, **args: Any) -> str:
    out = run(ctx, name, **args)
    assert out.is_error, out.content
    return out.content


# --- read_file -------------------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    (ctx.root / "a.txt").write_text("alpha\nbeta\n")
    assert ok(ctx, "read_file", path="a.txt") == "     1\talpha\n     2\tbeta"


@pytest.mark.parametrize(
    ("offset", "limit", "first", "last", "note"),
    [
        (None, None, 1, 2000, "[lines 1-2000 of 3000 shown; call read_file with offset=2001 to read on]"),
        (2001, None, 2001, 3000, None),
        (10, 5, 10, 14, "[lines 10-14 of 3000 shown; call read_file with offset=15 to read on]"),
        (3000, 10, 3000, 3000, None),
    ],
)
def test_read_window_and_continuation_note(
    ctx: ToolContext, offset: int | None, limit: int | None, first: int, last: int, note: str | None
) -> None:
    (ctx.root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    args: dict[str, Any] = {"path": "big.txt"}
    if offset is not None:
        args["offset"] = offset
    if limit is not None:
        args["limit"] = limit
    lines = ok(ctx, "read_file", **args).split("\n")
    body = lines[:-1] if note else lines
    assert body[0] == f"{first:6d}\tline {first}"
    assert body[-1] == f"{last:6d}\tline {last}"
    assert len(body) == last - first + 1
    assert (lines[-1] == note) if note else not lines[-1].startswith("[")


def test_read_caps_output_bytes_and_says_how_to_continue(ctx: ToolContext) -> None:
    (ctx.root / "wide.txt").write_text(("w" * 199 + "\n") * 1500)  # 300 KB, under the line limit
    out = ok(ctx, "read_file", path="wide.txt")
    assert len(out.encode()) <= MAX_OUTPUT_BYTES + 200
    note = out.split("\n")[-1]
    shown = len(out.split("\n")) - 1
    assert note == f"[lines 1-{shown} of 1500 shown; call read_file with offset={shown + 1} to read on]"
    # Following the note reads on exactly where the cut was.
    nxt = ok(ctx, "read_file", path="wide.txt", offset=shown + 1)
    assert nxt.startswith(f"{shown + 1:6d}\t")


def _bytes_read() -> int:
    """What this process has read through read() so far (Linux's rchar)."""
    io = Path("/proc/self/io").read_text()
    return int(next(line.split()[1] for line in io.splitlines() if line.startswith("rchar:")))


def test_read_huge_file_streams_and_counts_a_bounded_part(ctx: ToolContext) -> None:
    # 50 MB: the window is small, and only MAX_COUNT_BYTES of the rest is read to count its lines
    # (a file a writer keeps growing was counted to its end: 32 s for limit=3).
    with (ctx.root / "huge.log").open("w") as f:
        chunk = "".join(f"entry {i}\n" for i in range(100_000))
        for _ in range(60):
            f.write(chunk)
    before = _bytes_read()
    out = ok(ctx, "read_file", path="huge.log", limit=3)
    read = _bytes_read() - before
    assert read < MAX_COUNT_BYTES + 4 * 1024 * 1024, f"{read:,} bytes read for 3 lines"  # before: 50 MB
    note = out.split("\n")[-1]
    assert re.fullmatch(
        r"\[lines 1-3 of more than [\d,]+ shown; call read_file with offset=4 to read on\]", note
    )
    assert out.split("\n")[:3] == ["     1\tentry 0", "     2\tentry 1", "     3\tentry 2"]


def test_read_counts_every_line_of_a_file_within_the_bound(ctx: ToolContext) -> None:
    (ctx.root / "mid.log").write_text("".join(f"entry {i}\n" for i in range(200_000)) + "last, no newline")
    out = ok(ctx, "read_file", path="mid.log", limit=3)
    assert out.split("\n")[-1] == "[lines 1-3 of 200001 shown; call read_file with offset=4 to read on]"


def test_read_cuts_an_enormous_line(ctx: ToolContext) -> None:
    (ctx.root / "min.js").write_text("x" * 1_000_000 + "\nsecond\n")
    out = ok(ctx, "read_file", path="min.js")
    first, second = out.split("\n")
    assert first.startswith("     1\t" + "x" * MAX_LINE_CHARS + " [... line cut")
    assert second == "     2\tsecond"


@pytest.mark.parametrize(
    ("setup", "path", "expected"),
    [
        (lambda r: (r / "config.yaml").write_text("x"), "config.yml", "Did you mean: config.yaml"),
        (lambda r: None, "nothing.txt", "file not found: nothing.txt"),
        (lambda r: None, "no/such/dir.txt", "does not exist either"),
        (lambda r: (r / "sub").mkdir(), "sub", "is a directory"),
        (
            lambda r: (r / "b.bin").write_bytes(b"PK\x03\x04\x00\x01"),
            "b.bin",
            "binary file (NUL byte at offset 4)",
        ),
        (
            lambda r: (r / "l1.txt").write_bytes(b"ok line\ncaf\xe9\n"),
            "l1.txt",
            "not valid UTF-8 (byte offset 11, line 2)",
        ),
    ],
)
def test_read_errors(ctx: ToolContext, setup: Any, path: str, expected: str) -> None:
    setup(ctx.root)
    assert expected in err(ctx, "read_file", path=path)


def test_read_empty_file_is_a_note_not_an_error(ctx: ToolContext) -> None:
    (ctx.root / "empty.txt").write_text("")
    assert "empty" in ok(ctx, "read_file", path="empty.txt")


def test_read_offset_past_end(ctx: ToolContext) -> None:
    (ctx.root / "a.txt").write_text("1\n2\n")
    assert "past the end of a.txt, which has 2 lines" in err(ctx, "read_file", path="a.txt", offset=5)


def test_read_crlf_lines_are_shown_without_cr(ctx: ToolContext) -> None:
    (ctx.root / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert ok(ctx, "read_file", path="w.txt") == "     1\ta\n     2\tb"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "missing required argument 'path'"),
        ({"path": ""}, "argument 'path' is empty"),
        ({"path": 3}, "argument 'path' must be a string"),
        ({"path": "a.txt", "offset": 0}, "'offset' must be at least 1"),
        ({"path": "a.txt", "limit": "many"}, "'limit' must be a number"),
    ],
)
def test_read_bad_arguments(ctx: ToolContext, args: dict[str, Any], expected: str) -> None:
    (ctx.root / "a.txt").write_text("x\n")
    assert expected in err(ctx, "read_file", **args)


# --- outside the root ------------------------------------------------------------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    target = tmp_path / "secret.txt"
    target.write_text("TOP SECRET\n")
    return target


@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink_file", "symlink_dir"])
def test_paths_outside_root_are_refused(ctx: ToolContext, secret: Path, tool: str, how: str) -> None:
    if how == "dotdot":
        path = "../secret.txt"
    elif how == "absolute":
        path = str(secret)
    elif how == "symlink_file":
        (ctx.root / "link.txt").symlink_to(secret)
        path = "link.txt"
    else:
        (ctx.root / "linkdir").symlink_to(secret.parent)
        path = "linkdir/secret.txt"
    args: dict[str, Any] = {"path": path, "content": "pwned", "old_string": "TOP", "new_string": "X"}
    message = err(ctx, tool, **args)
    assert "path is outside the project root" in message
    assert secret.read_text() == "TOP SECRET\n"


def test_outside_root_allowed_when_configured(ctx: ToolContext, secret: Path) -> None:
    ctx.allow_outside_root = True
    assert "TOP SECRET" in ok(ctx, "read_file", path="../secret.txt")


def test_symlink_inside_root_is_fine(ctx: ToolContext) -> None:
    (ctx.root / "real.txt").write_text("inside\n")
    (ctx.root / "alias.txt").symlink_to(ctx.root / "real.txt")
    assert "inside" in ok(ctx, "read_file", path="alias.txt")


# --- write_file ------------------------------------------------------------------------------------


def test_write_creates_parents_then_overwrites(ctx: ToolContext) -> None:
    assert ok(ctx, "write_file", path="a/b/c.py", content="x = 1\ny = 2\n") == (
        "Created a/b/c.py: 2 lines, 12 bytes."
    )
    assert ok(ctx, "write_file", path="a/b/c.py", content="z") == (
        "Overwrote a/b/c.py: 1 line, 1 byte (was 2 lines)."
    )
    assert (ctx.root / "a/b/c.py").read_bytes() == b"z"


def test_write_keeps_bytes_exactly(ctx: ToolContext) -> None:
    ok(ctx, "write_file", path="crlf.txt", content="a\r\nb\r\nünï\n")
    assert (ctx.root / "crlf.txt").read_bytes() == "a\r\nb\r\nünï\n".encode()


def test_write_empty_content_is_allowed(ctx: ToolContext) -> None:
    ok(ctx, "write_file", path="empty", content="")
    assert (ctx.root / "empty").read_bytes() == b""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "x"}, "missing required argument 'content'"),
        ({"path": "x", "content": ["a"]}, "'content' must be a string, got an array"),
        ({"content": "a"}, "missing required argument 'path'"),
        ({"path": ".", "content": "a"}, "is a directory"),
    ],
)
def test_write_bad_arguments(ctx: ToolContext, args: dict[str, Any], expected: str) -> None:
    assert expected in err(ctx, "write_file", **args)


# --- edit_file -------------------------------------------------------------------------------------

SOURCE = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"


def test_edit_unique_replacement_with_snippet(ctx: ToolContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    out = ok(ctx, "edit_file", path="m.py", old_string="b():\n    return 1", new_string="b():\n    return 2")
    assert (ctx.root / "m.py").read_text() == SOURCE.replace("return 1\n", "return 2\n").replace(
        "return 2\n\n\n", "return 1\n\n\n"
    )
    assert "     6\t    return 2" in out
    assert out.startswith("Replaced 1 occurrence in m.py")


def test_edit_non_unique_names_count_and_lines(ctx: ToolContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    message = err(ctx, "edit_file", path="m.py", old_string="return 1", new_string="return 2")
    assert "occurs 2 times in m.py (at lines 2, 6)" in message
    assert "replace_all" in message
    assert (ctx.root / "m.py").read_text() == SOURCE


def test_edit_replace_all(ctx: ToolContext) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    out = ok(ctx, "edit_file", path="m.py", old_string="return 1", new_string="return 2", replace_all=True)
    assert out.startswith("Replaced 2 occurrences")
    assert (ctx.root / "m.py").read_text().count("return 2") == 2


@pytest.mark.parametrize(
    ("old", "expected"),
    [
        ("def a():\n  return 1", "differs only in whitespace starts at line 1"),
        ("return 3", "Read the file again"),
        ("     2\t    return 1", "line-number prefixes"),
    ],
)
def test_edit_zero_matches_with_hints(ctx: ToolContext, old: str, expected: str) -> None:
    (ctx.root / "m.py").write_text(SOURCE)
    message = err(ctx, "edit_file", path="m.py", old_string=old, new_string="x")
    assert "old_string not found in m.py" in message
    assert expected in message
    assert (ctx.root / "m.py").read_text() == SOURCE


def test_edit_crlf_file_with_lf_old_string(ctx: ToolContext) -> None:
    (ctx.root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ok(ctx, "edit_file", path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert (ctx.root / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("setup", "args", "expected"),
    [
        (None, {"old_string": "a", "new_string": "a"}, "identical"),
        (None, {"old_string": "", "new_string": "a"}, "old_string is empty"),
        (None, {"new_string": "a"}, "missing required argument 'old_string'"),
        (None, {"old_string": "a"}, "missing required argument 'new_string'"),
        (None, {"old_string": "a", "new_string": "b", "replace_all": "maybe"}, "true or false"),
        ("missing", {"old_string": "a", "new_string": "b"}, "use write_file"),
        ("binary", {"old_string": "a", "new_string": "b"}, "binary"),
        ("latin1", {"old_string": "a", "new_string": "b"}, "not valid UTF-8 (byte offset 3)"),
    ],
)
def test_edit_errors(ctx: ToolContext, setup: str | None, args: dict[str, Any], expected: str) -> None:
    target = ctx.root / "f.txt"
    if setup == "binary":
        target.write_bytes(b"a\x00b")
    elif setup == "latin1":
        target.write_bytes(b"caf\xe9 a")
    elif setup is None:
        target.write_text("a b c")
    before = target.read_bytes() if target.exists() else None
    assert expected in err(ctx, "edit_file", path="f.txt", **args)
    assert (target.read_bytes() if target.exists() else None) == before


_texts = st.text(alphabet=st.sampled_from("ab \n\t"), max_size=40)


@settings(max_examples=150, deadline=None)
@given(text=_texts, old=_texts.filter(lambda s: s != ""), new=_texts)
def test_edit_property_matches_str_replace(
    tmp_path_factory: pytest.TempPathFactory, text: str, old: str, new: str
) -> None:
    root = tmp_path_factory.mktemp("prop")
    ctx = ToolContext(root=root)
    (root / "f.txt").write_text(text, newline="")
    out = run(ctx, "edit_file", path="f.txt", old_string=old, new_string=new)
    after = (root / "f.txt").read_bytes().decode()
    count = text.count(old)
    if old == new or count != 1:
        assert out.is_error and after == text
    else:
        assert not out.is_error and after == text.replace(old, new, 1)


def test_write_then_read_round_trip_keeps_mode(ctx: ToolContext) -> None:
    script = ctx.root / "run.sh"
    script.write_text("#!/bin/sh\necho 1\n")
    script.chmod(0o755)
    ok(ctx, "edit_file", path="run.sh", old_string="echo 1", new_string="echo 2")
    assert os.access(script, os.X_OK)
    assert ok(ctx, "read_file", path="run.sh").endswith("     2\techo 2")


@pytest.mark.parametrize("sent", ['{"path": "a.txt', "[1, 2]", "path=a.txt"])
def test_arguments_that_are_not_a_json_object_are_named_as_such(ctx: ToolContext, sent: str) -> None:
    said = REGISTRY.run("read_file", {"_raw": sent}, ctx)
    assert said.is_error and "not a JSON object" in said.content and repr(sent) in said.content
    assert "missing required argument" not in said.content

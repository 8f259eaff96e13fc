"""What the REPL shows after a tool call, rendered into a StringIO console: a command's first lines
and a count of the rest (as Claude Code shows them, the whole output one Ctrl+O away), their control
characters written out; and the call's own line writing out invisible characters as the approval
question does."""

from __future__ import annotations

from io import StringIO

import pytest
from rich.console import Console

from agent_cli.core.events import ToolCallEvent, ToolProgress, ToolResultEvent
from agent_cli.ui.live_output import output_head
from agent_cli.ui.render import Renderer


def console(width: int = 80) -> tuple[Console, StringIO]:
    out = StringIO()
    return Console(file=out, width=width, force_terminal=False, color_system=None, highlight=False), out


def shown(out: StringIO) -> list[str]:
    return [line.rstrip() for line in out.getvalue().splitlines()]


def run_command(renderer: Renderer, command: str, output: str, status: str = "exit 0") -> None:
    """One bash call as the loop reports it: the call, its last progress (how it ended), its result."""
    failed = status != "exit 0"
    renderer.handle(ToolCallEvent(id="c1", name="bash", input={"command": command}))
    code = status.removeprefix("exit ")
    renderer.handle(
        ToolProgress(id="c1", name="bash", lines=(), elapsed=0.3, size=len(output), status=status)
    )
    content = f"{output}[exit code {code}]"
    renderer.handle(ToolResultEvent(id="c1", name="bash", content=content, is_error=failed, duration=0.3))


@pytest.mark.parametrize(
    ("content", "head", "more"),
    [
        ("a\nb\n[exit code 0]", ("a", "b"), 0),
        ("(no output)\n[exit code 0]", ("(no output)",), 0),
        ("1\n2\n3\n4\n5\n[exit code 0]", ("1", "2", "3", "4", "5"), 0),  # not "+1 lines"
        ("1\n2\n3\n4\n5\n6\n[exit code 0]", ("1", "2", "3", "4"), 2),
        ("10%\r50%\r90%\ndone\n[exit code 0]", ("90%", "done"), 0),  # what a terminal leaves
        ("x\n[exit code 0]\n[a background process still holds the output open]", ("x",), 0),
        ("[only a bracket]", ("[only a bracket]",), 0),
    ],
)
def test_output_head(content: str, head: tuple[str, ...], more: int) -> None:
    assert output_head(content, 4) == (head, more)


def test_a_finished_command_shows_its_first_lines_and_counts_the_rest() -> None:
    con, out = console()
    output = "".join(f"line {i}\n" for i in range(1, 21))
    run_command(Renderer(con), "seq 20", output)
    rows = shown(out)
    assert rows[0].startswith("✓ bash seq 20")
    assert rows[1:6] == [
        "  │ line 1",
        "  │ line 2",
        "  │ line 3",
        "  │ line 4",
        "  │ … +16 lines (ctrl+o shows the last output)",
    ]
    assert rows[6].startswith("  exit 0 · 0.3s")
    assert "line 5" not in out.getvalue() and "[exit code" not in out.getvalue()


def test_a_short_output_is_shown_whole_and_long_lines_stay_one_row() -> None:
    con, out = console(width=40)
    run_command(Renderer(con), "make", "ok\n" + "y" * 300 + "\n")
    rows = shown(out)
    assert rows[1] == "  │ ok" and rows[2].startswith("  │ yyy") and rows[2].endswith("…")
    assert len(rows[2]) <= 40 and "lines (ctrl+o" not in out.getvalue()


def test_a_command_s_lines_never_reach_the_terminal_with_their_controls() -> None:
    con, out = console()
    spoof = "\x1b[31mred\x1b[0m\n\x1b]52;c;ZXZpbA==\x07\n\u202egnp.exe\nhidden\rshown over it\n"
    run_command(Renderer(con), "cat notes", spoof)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\r" not in text
    assert "\\x1b[31mred\\x1b[0m" in text and "\\x1b]52;c;ZXZpbA==\\x07" in text and "\\u202egnp.exe" in text
    assert "shown over it" in text and "hidden" not in text  # a carriage return: what a terminal leaves


def test_a_failed_command_shows_its_lines_once() -> None:
    con, out = console()
    run_command(Renderer(con), "pytest -q", "E   assert 1 == 2\n1 failed\n", status="exit 1")
    rows = shown(out)
    assert rows[0].startswith("✗ bash pytest -q")
    assert rows[1:3] == ["  │ E   assert 1 == 2", "  │ 1 failed"]
    assert out.getvalue().count("assert 1 == 2") == 1  # not again as the error's first line
    assert rows[3].startswith("  exit 1")


def test_a_tool_without_a_live_view_shows_no_output_lines() -> None:
    con, out = console()
    r = Renderer(con)
    r.handle(ToolCallEvent(id="r", name="read_file", input={"path": "a.py"}))
    r.handle(
        ToolResultEvent(
            id="r", name="read_file", content="1\tx = 1\n2\ty = 2\n", is_error=False, duration=0.01
        )
    )
    assert shown(out) == ["✓ read_file a.py · 0.01s"]


def test_the_line_after_an_approved_call_writes_out_what_the_question_wrote_out() -> None:
    """The approval question shows U+200B and U+00A0 written out; the ✓ line after it showed them
    raw (an NBSP even became a plain space): the same command must read the same in both."""
    from agent_cli.tools.registry import default_tools
    from agent_cli.ui.approval_view import approval_text

    command = "ls\u00a0-la\u200b \u2028x\ufeffy"
    tools = default_tools()
    question = approval_text(
        "bash", {"command": command}, "", view=tools.view("bash"), approval="command", fancy=False, width=100
    ).plain
    written = "ls\\xa0-la\\u200b \\u2028x\\ufeffy"
    assert written in question
    con, out = console(width=100)
    run_command(Renderer(con), command, "done\n")
    first = shown(out)[0]
    assert first.startswith(f"✓ bash {written} · ")
    assert not any(ch in out.getvalue() for ch in "\u00a0\u200b\u2028\ufeff")

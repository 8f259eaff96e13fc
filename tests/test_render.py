"""Rendering into a StringIO console: streaming Markdown commits, tool lines, panels, tables."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agent_cli.core.events import (
    AssistantText,
    AssistantTextDelta,
    CompactEvent,
    ErrorEvent,
    ResultEvent,
    RetryEvent,
    StatusEvent,
    ThinkingText,
    ThinkingTextDelta,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from agent_cli.core.messages import Usage
from agent_cli.ui.commands import help_rows
from agent_cli.ui.markdown_blocks import MarkdownStream, split_blocks
from agent_cli.ui.render import Renderer
from agent_cli.ui.reports import context_report, cost_rows, format_context_line
from agent_cli.ui.widgets import context_table, cost_table, help_table


def console(width: int = 80, terminal: bool = False) -> tuple[Console, StringIO]:
    out = StringIO()
    return Console(file=out, width=width, force_terminal=terminal, color_system=None, highlight=False), out


def plain(text: str) -> str:
    """Output without trailing padding, for comparisons."""
    return "\n".join(line.rstrip() for line in text.splitlines())


# ---- the block splitter (pure) ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "blocks", "tail"),
    [
        ("", [], ""),
        ("one line, no newline", [], "one line, no newline"),
        ("para\n", [], "para\n"),
        ("para\n\n", [], "para\n\n"),  # the next block has not begun: maybe a continuation
        ("para\n\nnext", ["para"], "next"),
        ("a\nb\n\nc\n", ["a\nb"], "c\n"),
        ("\n\n\nhello\n\nworld\n\n", ["hello"], "world\n\n"),
        ("- a\n\n  still item a\n\nz", ["- a\n\n  still item a"], "z"),  # indented: a continuation
        ("```py\nx = 1\n\ny = 2\n```\nafter", ["```py\nx = 1\n\ny = 2\n```"], "after"),
        ("```py\nx = 1\n\n", [], "```py\nx = 1\n\n"),  # blank lines inside an open fence
        ("intro:\n```\ncode\n```\n", ["intro:\n```\ncode\n```"], ""),
        ("````\n```\nnested\n```\n````\nz", ["````\n```\nnested\n```\n````"], "z"),
        ("~~~\n```\n~~~\n", ["~~~\n```\n~~~"], ""),
        ("use ```x``` inline\n\nnext", ["use ```x``` inline"], "next"),  # not a fence
        ("```\nnot closed ``` here\n", [], "```\nnot closed ``` here\n"),
    ],
)
def test_split_blocks(text: str, blocks: list[str], tail: str) -> None:
    assert split_blocks(text) == (blocks, tail)


LINES = st.sampled_from(
    ["", "", "text line", "- item", "  indented", "```py", "```", "~~~", "# Head", "1. one", "| a | b |"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, max_size=30), st.lists(st.integers(1, 15), min_size=1, max_size=40))
def test_any_chunking_gives_the_same_blocks_and_loses_nothing(lines: list[str], cuts: list[int]) -> None:
    text = "\n".join(lines) + "\n"
    whole = MarkdownStream()
    expected = whole.feed(text)
    expected_rest = whole.finish()

    stream = MarkdownStream()
    got: list[str] = []
    pos = 0
    i = 0
    while pos < len(text):
        size = cuts[i % len(cuts)]
        got += stream.feed(text[pos : pos + size])
        pos += size
        i += 1
    assert got == expected
    assert stream.finish() == expected_rest
    # Nothing lost, nothing doubled: the non-blank lines come out in order.
    out = "\n".join([*got, expected_rest])
    assert [ln for ln in out.split("\n") if ln.strip()] == [ln for ln in lines if ln.strip()]


# ---- streaming through the Renderer ----------------------------------------------------


def test_finished_blocks_are_committed_as_they_complete_and_the_tail_is_not() -> None:
    con, out = console()
    r = Renderer(con, fancy=True)  # Markdown path; Live stays silent on a non-terminal console
    r.handle(StatusEvent(text="waiting for model"))
    r.handle(AssistantTextDelta(text="# Title\n\nFirst para"))
    assert "Title" in out.getvalue()
    assert "First" not in out.getvalue()  # still being written: only in the live tail
    r.handle(AssistantTextDelta(text="graph goes on.\n\n```python\nprint('x')\n"))
    assert "First paragraph goes on." in out.getvalue()
    assert "print" not in out.getvalue()  # the fence is open
    r.handle(AssistantTextDelta(text="```\nlast words"))
    assert "print('x')" in out.getvalue()
    assert "last words" not in out.getvalue()
    r.handle(AssistantText(text="(the whole message, already shown)"))
    text = plain(out.getvalue())
    assert "last words" in text
    assert "already shown" not in text
    for word in ("Title", "First paragraph goes on.", "print('x')", "last words"):
        assert text.count(word) == 1, word


def test_markdown_blocks_are_separated_by_one_blank_line() -> None:
    con, out = console()
    r = Renderer(con, fancy=True)
    r.handle(AssistantTextDelta(text="para one\n\n- a\n- b\n\npara two\n"))
    r.handle(ResultEvent(text="", stop="end_turn", iterations=1))
    assert plain(out.getvalue()) == "para one\n\n • a\n • b\n\npara two"


def test_plain_mode_writes_text_as_it_comes_without_markdown() -> None:
    con, out = console()
    r = Renderer(con)  # not a terminal: plain
    assert not r.fancy
    r.handle(StatusEvent(text="waiting for model"))
    r.handle(AssistantTextDelta(text="**bold** and "))
    assert out.getvalue() == "**bold** and "
    r.handle(AssistantTextDelta(text="more"))
    r.handle(AssistantText(text="**bold** and more"))
    assert out.getvalue() == "**bold** and more\n"


def test_no_color_on_a_terminal_is_plain() -> None:
    out = StringIO()
    con = Console(file=out, force_terminal=True, no_color=True, width=80)
    assert not Renderer(con).fancy


def test_text_without_deltas_is_rendered_whole() -> None:
    con, out = console()
    r = Renderer(con, fancy=True)
    r.handle(AssistantText(text="# Done\n\nAll **good**."))
    assert plain(out.getvalue()).split("\n")[-1] == "All good."


def test_a_tool_call_ends_the_streamed_text_first() -> None:
    con, out = console()
    r = Renderer(con, fancy=True)
    r.handle(AssistantTextDelta(text="Let me look"))
    r.handle(ToolCallEvent(id="t1", name="read_file", input={"path": "src/app.py"}))
    r.handle(ToolResultEvent(id="t1", name="read_file", content="1: x", is_error=False, duration=0.0213))
    assert plain(out.getvalue()) == "Let me look\n✓ read_file src/app.py · 0.02s"


# ---- tool lines, panels, one-liners -------------------------------------------------


@pytest.mark.parametrize(
    ("call", "result", "expected"),
    [
        (
            ToolCallEvent(id="a", name="read_file", input={"path": "src/app.py"}),
            ToolResultEvent(id="a", name="read_file", content="ok", is_error=False, duration=0.02),
            "✓ read_file src/app.py · 0.02s",
        ),
        (
            ToolCallEvent(id="a", name="bash", input={"command": "pytest -q\n  --tb=short"}),
            ToolResultEvent(
                id="a",
                name="bash",
                content="\nExit code 1: tests failed\nmore detail",
                is_error=True,
                duration=1.5,
            ),
            "✗ bash pytest -q --tb=short · 1.50s\n  Exit code 1: tests failed",
        ),
        (
            ToolCallEvent(id="a", name="grep", input={"pattern": "TODO", "path": "src"}),
            ToolResultEvent(id="a", name="grep", content="", is_error=False, duration=0.1),
            "✓ grep 'TODO' in src · 0.10s",
        ),
        (
            ToolCallEvent(id="a", name="compact", input={"focus": "the parser"}),
            ToolResultEvent(id="a", name="compact", content="", is_error=False, duration=0.0),
            '✓ compact "the parser" · 0.00s',
        ),
        (
            ToolCallEvent(id="a", name="mystery", input={}),
            ToolResultEvent(id="a", name="mystery", content="", is_error=False, duration=3.14159),
            "✓ mystery · 3.14s",
        ),
    ],
)
def test_tool_lines(call: ToolCallEvent, result: ToolResultEvent, expected: str) -> None:
    con, out = console()
    r = Renderer(con)
    r.handle(call)
    r.handle(result)
    assert plain(out.getvalue()) == expected


def test_long_tool_arguments_are_cut_to_the_line() -> None:
    con, out = console(width=60)
    r = Renderer(con)
    r.handle(ToolCallEvent(id="a", name="bash", input={"command": "echo " + "x" * 200}))
    r.handle(ToolResultEvent(id="a", name="bash", content="", is_error=False, duration=0.5))
    line = plain(out.getvalue())
    assert "\n" not in line and len(line) <= 60 and "…" in line


def panel_lines(text: str) -> list[str]:
    """The rows between a panel's top and bottom borders."""
    rows = text.splitlines()
    top = next(i for i, row in enumerate(rows) if row.startswith("╭"))
    bottom = next(i for i, row in enumerate(rows) if row.startswith("╰"))
    return rows[top + 1 : bottom]


@pytest.mark.parametrize("layer", ["summarize", "manual"])
@pytest.mark.parametrize("width", [80, 100])
def test_a_compaction_with_a_long_record_is_a_panel_of_three_lines(layer: str, width: int) -> None:
    """A 73-line record once filled the screen: the panel says what shrank, where it went and how
    to read the record, in three lines, and prints none of the record."""
    con, out = console(width=width)
    record = "Condensed record of the earlier conversation: intro\n\n" + "\n".join(
        f"## section {i}\nline {i} of the record" for i in range(40)
    )
    Renderer(con).handle(
        CompactEvent(
            layer=layer,  # type: ignore[arg-type]
            trigger="auto" if layer == "summarize" else "manual",
            messages_before=48,
            messages_after=9,
            tokens_before=152_310,
            tokens_after=41_200,
            summary=record,
            transcript=".transcripts/s1/span-001-auto.jsonl",
            duration=4.2,
        )
    )
    text = plain(out.getvalue())
    body = panel_lines(text)
    assert len(body) <= 3, text
    assert f"context compacted · layer {layer}" in text
    assert "152,310 → 41,200 (−72%)" in text and "48 → 9" in text
    assert ".transcripts/s1/span-001-auto.jsonl" in text
    assert "/record" in text
    assert "section" not in text and "line 0" not in text  # the record is for /record


@pytest.mark.parametrize(
    ("layer", "detail", "expected"),
    [
        (
            "cap",
            'bash {"command": "make"} · id toolu_1',
            '⟳ cut bash {"command": "make"} · id toolu_1 · 40,000 tokens freed',
        ),
        (
            "clear",
            "3 old tool results: read_file a.py, …",
            "⟳ cleared 3 old tool results: read_file a.py, … · 40,000 tokens freed",
        ),
    ],
)
def test_the_free_layers_are_one_dim_line_each(layer: str, detail: str, expected: str) -> None:
    con, out = console(width=160)
    event = CompactEvent(
        layer=layer,  # type: ignore[arg-type]
        trigger="auto",
        messages_before=3,
        messages_after=3,
        tokens_before=50_000,
        tokens_after=10_000,
        transcript="/p/.transcripts/s/span-001-clear.jsonl",
        detail=detail,
    )
    Renderer(con).handle(event)
    text = plain(out.getvalue())
    assert text.count("\n") == 0 and text.startswith(expected) and "recall brings the full text back" in text
    assert "context compacted" not in text  # no panel


@pytest.mark.parametrize(
    ("stand_in", "degraded", "note"),
    [
        (True, True, "a digest stands in while the model writes the record"),
        (True, False, "the model's record took the digest's place"),
        (False, True, "degraded: the summary fell back to a digest"),
    ],
)
def test_a_stand_in_says_what_it_is(stand_in: bool, degraded: bool, note: str) -> None:
    con, out = console(width=120)
    event = CompactEvent(
        layer="summarize",
        trigger="auto",
        messages_before=30,
        messages_after=2,
        tokens_before=50_000,
        tokens_after=3_000,
        degraded=degraded,
        stand_in=stand_in,
        ahead=stand_in and not degraded,
    )
    Renderer(con).handle(event)
    text = plain(out.getvalue())
    assert note in text and text.count(note) == 1 and len(panel_lines(text)) <= 3


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (RetryEvent(attempt=2, delay=3.0, reason="overloaded (529)"), "… retry 2 in 3.0s: overloaded (529)"),
        (WarningEvent(message="unknown model 'x'"), "! unknown model 'x'"),
        (ErrorEvent(message="the API key was rejected", kind="AuthError"), "✗ the API key was rejected"),
        (
            ResultEvent(text="", stop="max_iterations", iterations=100),
            "the turn stopped at the iteration limit; send a message to go on",
        ),
        (ResultEvent(text="done", stop="end_turn", iterations=1), ""),
    ],
)
def test_one_liners(event: object, expected: str) -> None:
    con, out = console()
    Renderer(con).handle(event)  # type: ignore[arg-type]  # each case is an Event
    assert plain(out.getvalue()) == expected


def test_spinner_and_live_stop_at_the_end_of_a_turn_on_a_terminal() -> None:
    con, out = console(terminal=True)
    r = Renderer(con, refresh_per_second=50)
    assert r.fancy
    r.handle(StatusEvent(text="waiting for model"))
    assert r.live
    r.handle(AssistantTextDelta(text="hello\n\nwor"))
    r.handle(AssistantText(text="hello\n\nworld"))
    assert not r.live
    r.handle(ResultEvent(text="hello\n\nworld", stop="end_turn", iterations=1))
    # The final screen holds each block once, outside the (erased) live area.
    final = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "hello" in final and "world" in final


def test_approval_shows_the_call_and_what_always_allows() -> None:
    con, out = console()
    r = Renderer(con)
    r.approval("bash", {"command": "rm -rf build"}, "this exact bash command: rm -rf build")
    text = plain(out.getvalue())
    assert text == "? bash rm -rf build\n  always = this exact bash command: rm -rf build"


# ---- tables -----------------------------------------------------------------------------


def test_context_table() -> None:
    report = context_report(
        "claude-sonnet-4-5",
        [
            ("system prompt", 2_000),
            ("tool specs", 3_000),
            ("condensed records", 1_000),
            ("messages", 30_000),
            ("tool results", 5_200),
        ],
        window=200_000,
        trigger_at=131_200,
        trigger_ratio=0.8,
        reserve=36_000,
    )
    con, out = console(width=100)
    con.print(context_table(report))
    text = plain(out.getvalue())
    assert re.search(r"system prompt\s+2,000\s+1\.0%", text)
    assert re.search(r"tool results\s+5,200\s+2\.6%", text)
    assert re.search(r"output reserve\s+36,000\s+18\.0%", text)
    assert re.search(r"free\s+122,800\s+61\.4%", text)
    assert re.search(r"used\s+41,200\s+20\.6%", text)
    assert "auto-compaction fires at 131,200 tokens (80% of the budget), 90,000 from here" in report.note


def test_cost_table() -> None:
    usage = [
        ("claude-sonnet-4-5", Usage(10_000, 2_000, 50_000, 5_000, reasoning_tokens=700)),
        ("my-local-model", Usage(1_000, 100)),
    ]
    con, out = console(width=110)
    con.print(cost_table(cost_rows(usage)))
    text = plain(out.getvalue())
    # 10k*3 + 2k*15 + 50k*0.3 + 5k*3.75 = 93,750 per million = $0.09375
    assert re.search(r"claude-sonnet-4-5\s+10,000\s+2,000\s+700\s+50,000\s+5,000\s+\$0\.0938", text)
    assert re.search(r"my-local-model\s+1,000\s+100\s+0\s+0\s+0\s+\?", text)
    assert re.search(r"total\s+11,000\s+2,100\s+700\s+50,000\s+5,000\s+\?", text)


def test_help_table_shows_arguments_literally() -> None:
    con, out = console(width=100)
    con.print(help_table(help_rows()))
    text = plain(out.getvalue())
    assert "/compact [focus]" in text and "/resume [id]" in text and "/exit" in text


FULL_TOOLBAR = "claude-sonnet-4-5 · context 41,200 / 200,000 (20%) · auto-compact at 153k (80% of budget)"


@pytest.mark.parametrize(
    ("tokens", "width", "expected"),
    [
        (41_200, None, FULL_TOOLBAR),
        (None, None, "claude-sonnet-4-5 · context … · auto-compact at 153k (80% of budget)"),
        (41_200, 100, FULL_TOOLBAR),
        (41_200, 80, "claude-sonnet-4-5 · 41k/200k (20%) · compacts at 153k"),
        (41_200, 60, "claude-sonnet-4-5 · 41k/200k (20%) · compacts at 153k"),  # a narrow terminal
        (41_200, 30, "41k/200k (20%)"),
    ],
)
def test_toolbar_line(tokens: int | None, width: int | None, expected: str) -> None:
    assert format_context_line("claude-sonnet-4-5", tokens, 200_000, 153_600, 0.8, width) == expected


def test_a_retry_after_partial_text_says_the_partial_answer_is_discarded() -> None:
    con, out = console()
    r = Renderer(con)
    r.handle(AssistantTextDelta(text="half an ans"))
    r.handle(RetryEvent(attempt=1, delay=0.5, reason="connection dropped"))
    r.handle(AssistantTextDelta(text="whole answer"))
    r.handle(AssistantText(text="whole answer"))
    r.handle(RetryEvent(attempt=1, delay=0.5, reason="overloaded"))  # nothing streamed since: no note
    assert plain(out.getvalue()) == (
        "half an ans\n… retry 1 in 0.5s: connection dropped (the partial answer above is discarded)\n"
        "whole answer\n… retry 1 in 0.5s: overloaded"
    )


def test_the_message_is_completed_when_the_stream_fell_short() -> None:
    con, out = console()
    r = Renderer(con, fancy=True)
    r.handle(AssistantTextDelta(text="hello\n\nwor"))
    r.handle(AssistantText(text="hello\n\nworld"))
    assert plain(out.getvalue()) == "hello\n\nworld"


def test_a_call_that_never_ran_shows_no_duration_and_a_long_error_is_cut_with_an_ellipsis() -> None:
    con, out = console(width=60)
    r = Renderer(con)
    r.handle(ToolCallEvent(id="a", name="write_file", input={"path": "x.txt", "content": "hi"}))
    declined = "Error: the user declined this call; " + "x" * 100
    r.handle(ToolResultEvent(id="a", name="write_file", content=declined, is_error=True, duration=0.0))
    head, error = plain(out.getvalue()).splitlines()
    assert head == "✗ write_file x.txt"
    assert error.endswith("…") and len(error) == 58


def test_markdown_lines_carry_no_trailing_padding_on_a_terminal() -> None:
    con, out = console(width=60, terminal=True)
    r = Renderer(con, fancy=True)
    r.handle(AssistantText(text="# Title\n\nA paragraph.\n\n- one\n- two"))
    lines = out.getvalue().splitlines()
    assert "A paragraph." in lines and " • one" in lines
    assert all(line == line.rstrip(" ") for line in lines)


def test_the_tool_spinner_comes_back_after_the_approval_prompt() -> None:
    con, _ = console(terminal=True)
    r = Renderer(con, refresh_per_second=50)
    r.handle(ToolCallEvent(id="a", name="bash", input={"command": "sleep 5"}))
    assert r.live
    r.approval("bash", {"command": "sleep 5"}, "bash commands starting with `sleep`")
    assert not r.live  # the prompt has the terminal
    r.resume()
    assert r.live and r.spinner == "bash sleep 5"
    r.handle(ToolResultEvent(id="a", name="bash", content="", is_error=False, duration=5.0))
    assert not r.live


def test_thinking_leaves_one_line_per_block_and_never_floods() -> None:
    con, out = console(width=60)
    renderer = Renderer(con)
    long_thought = "I should read the parser first, then the tests.\n" + "more reasoning " * 200
    for piece in (long_thought[i : i + 40] for i in range(0, len(long_thought), 40)):
        renderer.handle(ThinkingTextDelta(text=piece))
    renderer.handle(ThinkingText(text=long_thought))
    renderer.handle(ThinkingText(text=""))  # an omitted block shows nothing
    renderer.end_turn()
    shown = out.getvalue()
    assert shown.count("∴") == 1 and "∴ I should read the parser first, then the tests." in shown
    assert "more reasoning more reasoning more reasoning" not in shown  # the body stays off the screen
    assert all(len(line) <= 60 for line in shown.splitlines())


def test_a_line_wraps_at_words_and_a_huge_text_is_left_to_the_terminal() -> None:
    con, out = console(width=40)
    Renderer(con).line("auto-compaction fires at 51,200 tokens; /compact [focus] runs it now")
    assert plain(out.getvalue()).splitlines() == [
        "auto-compaction fires at 51,200 tokens;",
        "/compact [focus] runs it now",
    ]
    con, out = console(width=40)
    Renderer(con).line("word " * 50_000)  # 250,000 characters: wrapping it would take about a second
    assert len(out.getvalue().splitlines()) == 1

"""Hostile text through the renderer: nothing from the model or a tool reaches the terminal raw.

Every escape the issue names (a line erase and carriage return that redraw the approval line, OSC 52
clipboard writes, window titles, clear-screen, a C1 CSI, bidi overrides) is sent through each path
that shows outside text, on a plain console and on a terminal console with Markdown, and the bytes
written must hold no ESC, no C1 control and no bidi control; the escape is shown written out instead.
"""

from __future__ import annotations

import re
from io import StringIO

import pytest
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
from agent_cli.ui.render import Renderer

HOSTILE = "x\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\x1b[2K\r\x9b31m\u202eevil\x7f"
# What no output may hold: ESC and BEL and the other C0 controls (CSI sequences the console itself writes
# are removed first), C1 controls, DEL, bidi controls.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# What rich itself writes on a terminal: styles, the cursor hidden and shown, and the Live display's
# redraw (CR, erase line, cursor up). The hostile text's own sequences are other ones (OSC, clear screen).
RICH_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[\d*A|\r")


def consoles() -> list[tuple[str, Console, StringIO]]:
    found = []
    for name, terminal in (("plain", False), ("terminal", True)):
        out = StringIO()
        found.append(
            (
                name,
                Console(
                    file=out,
                    width=100,
                    force_terminal=terminal,
                    color_system=("truecolor" if terminal else None),
                    highlight=False,
                ),
                out,
            )
        )
    return found


def raw_left(output: str, own: bool) -> list[str]:
    """The control characters in `output` that the renderer did not write itself."""
    if own:
        output = RICH_OWN.sub("", output)
    return sorted({repr(c) for c in RAW.findall(output)})


EVENTS = {
    "streamed text": [
        AssistantTextDelta(text=f"Here: {HOSTILE}\n\n"),
        AssistantTextDelta(text=f"- {HOSTILE}\n"),
        AssistantText(text=f"Here: {HOSTILE}\n\n- {HOSTILE}\n"),
    ],
    "whole text": [AssistantText(text=f"# {HOSTILE}\n\n```\n{HOSTILE}\n```\n[a]({HOSTILE})")],
    "thinking": [ThinkingTextDelta(text=HOSTILE), ThinkingText(text=HOSTILE)],
    "tool call": [
        ToolCallEvent(id="t", name="bash", input={"command": f"ls {HOSTILE}"}),
        ToolResultEvent(id="t", name="bash", content="ok", is_error=False, duration=0.1),
    ],
    "bash error line": [
        ToolCallEvent(id="t", name="bash", input={"command": "false"}),
        ToolResultEvent(id="t", name="bash", content=f"{HOSTILE}\nmore", is_error=True, duration=0.1),
    ],
    "unknown tool name": [
        ToolCallEvent(id="t", name=f"t{HOSTILE}", input={}),
        ToolResultEvent(id="t", name=f"t{HOSTILE}", content="unknown tool", is_error=True, duration=0.0),
    ],
    "compaction panel": [
        CompactEvent(
            layer="summarize",
            trigger="auto",
            messages_before=9,
            messages_after=2,
            tokens_before=900,
            tokens_after=100,
            summary=f"## Goal\n{HOSTILE}",
            transcript=f"/t/{HOSTILE}",
        )
    ],
    "manual compaction": [
        CompactEvent(
            layer="manual",
            trigger="user",
            messages_before=9,
            messages_after=2,
            tokens_before=900,
            tokens_after=100,
            summary=f"{HOSTILE}\n{HOSTILE}",  # not shown: /record shows it
            transcript=f"{HOSTILE}/span-001-manual.jsonl",
        )
    ],
    "clear line": [
        CompactEvent(
            layer="clear",
            trigger="auto",
            messages_before=9,
            messages_after=9,
            tokens_before=900,
            tokens_after=100,
            detail=HOSTILE,
        )
    ],
    "warning": [WarningEvent(message=f"provider said {HOSTILE}")],
    "error": [ErrorEvent(message=f"provider said {HOSTILE}", kind="ProviderError")],
    "retry": [RetryEvent(attempt=1, delay=0.5, reason=f"HTTP 500: {HOSTILE}")],
    "status": [StatusEvent(text=HOSTILE)],
}


@pytest.mark.parametrize("path", list(EVENTS))
@pytest.mark.parametrize("where", ["plain", "terminal"])
def test_no_escape_reaches_the_terminal(path: str, where: str) -> None:
    _, con, out = next(c for c in consoles() if c[0] == where)
    renderer = Renderer(con, refresh_per_second=50)
    for event in EVENTS[path]:
        renderer.handle(event)
    renderer.handle(ResultEvent(text="", stop="end_turn", iterations=1))
    shown = out.getvalue()
    assert raw_left(shown, where == "terminal") == []
    if path != "status":  # a status only lives in the spinner, which a plain console has not
        assert "\\x1b" in shown or "\\x1b" in RICH_OWN.sub("", shown)


def test_markdown_links_show_their_target_and_are_no_terminal_hyperlinks() -> None:
    _, con, out = consoles()[1]
    Renderer(con).handle(AssistantText(text="see [the docs](https://evil.example/steal)"))
    shown = out.getvalue()
    assert "\x1b]8;" not in shown  # no OSC 8 hyperlink hiding where it goes
    assert "https://evil.example/steal" in shown


def test_the_approval_spoof_shows_the_whole_command() -> None:
    """The issue's spoof: `rm -f victim.txt` then an erase-line and CR that redraw it as `? bash ls -la`."""
    for _, con, out in consoles():
        command = "rm -f victim.txt \x1b[2K\r? bash ls -la"
        Renderer(con).approval("bash", {"command": command}, f"this exact bash command: {command}")
        shown = RICH_OWN.sub("", out.getvalue())
        assert raw_left(shown, False) == []
        first = shown.splitlines()[0]
        assert first == "? bash rm -f victim.txt \\x1b[2K\\x0d? bash ls -la"


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("ls\u00a0-la", "ls\\xa0-la"),  # NBSP: bash does not split there
        ("ls -la\u200b", "ls -la\\u200b"),
        ("ls \u2066-la\u2069", "ls \\u2066-la\\u2069"),
        ("echo \u202egnp.exe", "echo \\u202egnp.exe"),
        ("ls\x0c/usr/bin/touch PWNED", "ls\\x0c/usr/bin/touch PWNED"),
        ("ls\x1c-la", "ls\\x1c-la"),
        ("echo a\u2028rm -rf x", "echo a\\u2028rm -rf x"),
        ("echo \ufeffa\u00ad", "echo \\ufeffa\\xad"),
    ],
)
def test_the_approval_shows_invisible_and_look_alike_characters(command: str, shown: str) -> None:
    _, con, out = consoles()[0]
    Renderer(con).approval("bash", {"command": command}, "this exact bash command")
    assert out.getvalue().splitlines()[0] == f"? bash {shown}"


def test_a_multi_line_command_shows_every_line_under_a_margin() -> None:
    _, con, out = consoles()[0]
    command = "ls -la\n  allow? [y]es / [n]o / [a]lways › y\nrm -f victim.txt"
    Renderer(con).approval("bash", {"command": command}, f"this exact bash command: {command}")
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[4:] == ["  always = this exact bash command: the 3 lines above"]
    assert lines[:4] == [
        "? bash (3 lines)",
        "  │ ls -la",
        "  │   allow? [y]es / [n]o / [a]lways › y",
        "  │ rm -f victim.txt",
    ]


def test_the_reason_a_rule_did_not_cover_a_call_is_its_own_line_written_out() -> None:
    """Issue 35: an allow-listed git command asked because the repository names a program; the
    key (a subsection may hold anything) reaches the screen with its control characters written out."""
    from agent_cli.agent.approvals import WHY_ASKED

    _, con, out = consoles()[0]
    why = "asked although a rule covers it: this repository's git config sets diff.\x1b[2K.textconv"
    Renderer(con).approval("bash", {"command": "git diff", WHY_ASKED: why}, "yes")
    lines = out.getvalue().splitlines()
    assert lines[0] == "? bash git diff"
    assert lines[1] == "  ! " + why.replace("\x1b", "\\x1b")
    assert "\x1b" not in out.getvalue()


def test_the_written_out_characters_stand_out_on_a_colour_terminal() -> None:
    _, con, out = consoles()[1]
    Renderer(con).approval("bash", {"command": "ls\u00a0x"}, "this exact bash command")
    assert "\x1b[7m\\xa0" in out.getvalue()  # reversed: not to be mistaken for a typed backslash


# ---- the thinking line --------------------------------------------------------------------------


def test_the_thinking_line_comes_before_the_answer_it_preceded() -> None:
    for where, con, out in consoles():
        renderer = Renderer(con, refresh_per_second=50)
        renderer.handle(ThinkingTextDelta(text="The user wants a number."))
        renderer.handle(AssistantTextDelta(text="The answer is 42."))
        renderer.handle(ThinkingText(text="The user wants a number."))  # the loop says so at the reply's end
        renderer.handle(AssistantText(text="The answer is 42."))
        renderer.handle(ResultEvent(text="The answer is 42.", stop="end_turn", iterations=1))
        shown = out.getvalue()
        assert shown.count("∴") == 1, where
        assert shown.index("∴ The user wants a number.") < shown.index("The answer is 42."), where


def test_with_no_color_the_thinking_line_is_never_glued_to_the_answer() -> None:
    """A reply whose thinking was not streamed: its line still comes on a line of its own."""
    _, con, out = consoles()[0]
    renderer = Renderer(con)
    renderer.handle(AssistantTextDelta(text="The answer is 42."))
    renderer.handle(ThinkingText(text="Checked twice."))
    renderer.handle(AssistantText(text="The answer is 42."))
    renderer.handle(ResultEvent(text="The answer is 42.", stop="end_turn", iterations=1))
    assert out.getvalue().splitlines()[:2] == ["The answer is 42.", "∴ Checked twice."]


def test_thinking_before_a_tool_call_still_shows_once() -> None:
    _, con, out = consoles()[0]
    renderer = Renderer(con)
    renderer.handle(ThinkingTextDelta(text="Read app.py first."))
    renderer.handle(ThinkingText(text="Read app.py first."))
    renderer.handle(ToolCallEvent(id="t", name="read_file", input={"path": "app.py"}))
    renderer.handle(ToolResultEvent(id="t", name="read_file", content="x", is_error=False, duration=0.1))
    renderer.handle(ThinkingTextDelta(text="It prints hi."))
    renderer.handle(AssistantTextDelta(text="It prints hi."))
    renderer.handle(ThinkingText(text="It prints hi."))
    renderer.handle(AssistantText(text="It prints hi."))
    renderer.handle(ResultEvent(text="It prints hi.", stop="end_turn", iterations=2))
    lines = out.getvalue().splitlines()
    assert lines == ["∴ Read app.py first.", "✓ read_file app.py · 0.10s", "∴ It prints hi.", "It prints hi."]


def test_a_file_tools_approval_shows_the_exact_path() -> None:
    _, con, out = consoles()[0]
    path = "src/a  b\u00a0c\n? bash ls" + "/x" * 60
    Renderer(con).approval("write_file", {"path": path, "content": "hi"}, "write_file calls")
    shown = "? write_file src/a  b\\xa0c\\x0a? bash ls" + "/x" * 60 + "  (2 chars)"
    assert out.getvalue().split("\n")[0] == shown


def test_the_sessions_own_question_reads_as_a_question_and_a_call_cannot_pose_as_one() -> None:
    from agent_cli.agent.approvals import RESUME_UNSIGNED
    from agent_cli.ui.approval import ApprovalPrompt

    _, con, out = consoles()[0]
    renderer = Renderer(con)
    prompt = ApprovalPrompt(lambda: renderer, lambda keys: "yes")
    assert prompt.ask(RESUME_UNSIGNED, {"question": "Resume session 1?", "session": "1"}, None) == "yes"
    lines = out.getvalue().splitlines()
    assert lines[0] == "? Resume session 1?"
    assert lines[1] == "  always = the same as yes (this is a question, not a tool call)"
    # A tool call carrying a "question" argument is still shown as the call it is.
    _, con, out = consoles()[0]
    ApprovalPrompt(lambda: Renderer(con), lambda keys: "continue").ask(
        "bash", {"command": "rm -f victim.txt", "question": "Resume session 1?"}, "this exact bash command"
    )
    assert out.getvalue().splitlines()[0] == "? bash rm -f victim.txt"

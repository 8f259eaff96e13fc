"""A tool's metadata lives on the tool: nothing outside `tools/` keys knowledge on a tool's name.

The approvers and the UI ask the session's `ToolRegistry` (a tool's `approval` and `view`); the
store is handed the name of the tool that searches it. What is left are words that are not a tool's
name at all (the `/compact` command, the "compact" event and error kinds, the program bash) and the
one place the engine's text to the model cites a tool by name for how to page a cut file.
"""

from __future__ import annotations

import ast
from pathlib import Path

from agent_cli.tools.base import CallView
from agent_cli.tools.registry import default_tools
from agent_cli.ui.reports import describe_call

PKG = Path(__file__).resolve().parent.parent / "agent_cli"

# (module, name): a string equal to a tool's name that means something else there.
OTHER_MEANINGS = {
    ("ui/commands.py", "compact"),  # the /compact command
    ("ui/transcript_views.py", "compact"),  # the compact event's type
    ("core/events.py", "compact"),  # the compact event's type, and an error kind
    ("agent/loop.py", "compact"),  # the error kind of /compact with nothing to compact
    ("context/layers.py", "compact"),  # the archive's label for L2's spans
    ("agent/programs.py", "bash"),  # the program, in the list of shells
    ("hooks_user/process.py", "bash"),  # the program that runs a hook's command
    ("context/cap.py", "read_file"),  # the file readers whose cuts the marker pages by line
}


def test_no_module_outside_tools_writes_a_tools_name() -> None:
    names = set(default_tools().names())
    found = set()
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(("tools/", "testing/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in names:
                found.add((rel, node.value))
    assert found <= OTHER_MEANINGS, sorted(found - OTHER_MEANINGS)


def test_every_tool_says_how_it_asks_and_how_a_call_reads() -> None:
    tools = default_tools()
    for name in tools.names():
        tool = tools.get(name)
        assert tool is not None and tool.approval in ("never", "ask", "command", "host")
        assert isinstance(tool.view, CallView)
        props = tool.spec.input_schema.get("properties", {})
        # What a call shows is one of the tool's own arguments.
        assert tool.view.main is None or tool.view.main in props, name
        assert all(arg in props for arg in tool.view.sized), name
        if tool.approval == "command":
            assert "command" in props, name  # the allow-list reads the command argument
        if tool.approval == "host":
            assert "url" in props, name  # asked per host: the approvers read the url argument


def test_a_name_no_tool_has_asks_and_shows_its_first_string() -> None:
    tools = default_tools()
    assert tools.approval("mcp__github__create_issue") == "ask"
    assert describe_call(tools.view("mcp__github__create_issue"), {"n": 3, "title": "a bug"}) == "a bug"

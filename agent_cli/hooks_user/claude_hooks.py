"""The hooks of Claude Code's settings files, run on our events with Claude Code's stdin.

`claude_specs` turns the hooks read from `~/.claude/settings.json` and the project's
`.claude/settings*.json` (config.claude_settings) into `HookSpec`s of the "claude" dialect: they
run beside the TOML ones, at the same points, in the order of the files (the user's first), and
a project's wait for the same approval as a project's TOML hooks (`trust.py`). What differs is
what they are told: `claude_fields` writes an event's fields as Claude Code sends them (no
`event` key; `tool_use_id` and `permission_mode`, which ours are not sent; `tool_name` and
`tool_input` under Claude Code's names, `file_path` absolute; PreCompact's focus as
`custom_instructions`), and the subject a matcher sees is the tool's Claude
Code name (`Bash`, `Edit`, `mcp__server__tool`). What a run means is read the same way for
both (outcome.py, Claude Code's exit codes and JSON).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from agent_cli.config.claude_settings import ClaudeHook
from agent_cli.hooks_user.config import HookEventName, HookSpec
from agent_cli.tools.claude_names import claude_input, claude_name

__all__ = ["CLAUDE_ONLY", "TOOL_EVENTS", "claude_fields", "claude_specs", "claude_subject"]

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
# Fields only Claude Code's hooks are sent (the TOML hooks' stdin stays as it was).
CLAUDE_ONLY = frozenset({"tool_use_id", "permission_mode"})


def claude_specs(hooks: Sequence[ClaudeHook]) -> tuple[HookSpec, ...]:
    """The hooks as specs to run (their events are ours: the reader was given our list)."""
    return tuple(
        HookSpec(
            cast(HookEventName, h.event),
            h.command,
            h.matcher,
            h.timeout,
            h.project,
            h.where,
            dialect="claude",
        )
        for h in hooks
    )


def claude_subject(event: str, subject: str) -> str:
    """What a Claude Code matcher is matched against: a tool's Claude Code name, else the same."""
    return claude_name(subject) if event in TOOL_EVENTS else subject


def claude_fields(fields: Mapping[str, object], root: Path) -> dict[str, object]:
    """An event's JSON (common fields and the event's own) as Claude Code writes it."""
    out = {k: v for k, v in fields.items() if k != "event"}
    tool = fields.get("tool_name")
    if isinstance(tool, str):
        out["tool_name"] = claude_name(tool)
        given = fields.get("tool_input")
        if isinstance(given, Mapping):
            out["tool_input"] = claude_input(tool, given, root)
    if fields.get("hook_event_name") == "PreCompact":
        out["custom_instructions"] = fields.get("focus") or ""
    return out

"""Claude Code's settings files in a session: their hooks beside ours, their rules around the approver.

    claude_files(root, env, toml_hooks)  the files read (config.claude_settings), their hooks as
                                         specs after ours, and the start-up lines: each key not
                                         supported, named once in one line; each rule not applied;
                                         a project file that could not be read
    permission_lines(settings, files)    what /permissions lists: the mode, approvals.allow, and
                                         every rule with its file (and why it is not applied)

The user's `~/.claude/settings.json` is trusted like the user's config, so a file that cannot be
read, or a malformed entry in it, is a ConfigError (a guard the user wrote must not vanish
unsaid); a project's is a notice, and nothing of the malformed entry applies. A project's hooks
wait for the approval a project's TOML hooks wait for (`hooks_user.trust`): the question lists
them with their file, and the fingerprint covers the file. A project's deny and ask rules apply at
once (they only narrow what runs); its allow rules never do (`agent.claude_rules`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.agent.claude_rules import inert_reason
from agent_cli.config.claude_settings import ClaudeSettings, read_claude_settings
from agent_cli.config.settings import Settings
from agent_cli.core.errors import ConfigError
from agent_cli.hooks_user.claude_hooks import claude_specs
from agent_cli.hooks_user.config import EVENTS, HookSpec

__all__ = ["ClaudeFiles", "claude_files", "permission_lines"]


@dataclass(frozen=True, slots=True)
class ClaudeFiles:
    settings: ClaudeSettings
    hooks: tuple[HookSpec, ...]  # ours (TOML) first, then the files', in order
    notices: list[str] = field(default_factory=list)


def claude_files(root: Path, env: Mapping[str, str], toml_hooks: Sequence[HookSpec]) -> ClaudeFiles:
    """Read the files; raises ConfigError for the first problem of the user's own."""
    found = read_claude_settings(root, env, hook_events=EVENTS)
    notices: list[str] = []
    for f in found.files:
        if f.problems and not f.project:
            raise ConfigError(f"{f.problems[0]} (Claude Code's settings file, which agent-cli reads too)")
        notices.extend(f"{p} (not applied)" for p in f.problems)
    line = found.unsupported_line()
    if line is not None:
        notices.append(line)
    inert = [f"{r.text} ({r.source}): {why}" for r in found.rules if (why := inert_reason(r)) is not None]
    if inert:
        notices.append("permission rules not applied: " + "; ".join(inert))
    return ClaudeFiles(found, (*toml_hooks, *claude_specs(found.hooks)), notices)


def permission_lines(settings: Settings, files: ClaudeSettings) -> list[str]:
    """The approval mode, agent-cli's allow-list and Claude Code's rules, one line each."""
    lines = [f"mode: {settings.approvals.mode}" + (" (--yes)" if settings.approvals.yes else "")]
    lines += [f"allow (approvals.allow in your config): {prefix}" for prefix in settings.approvals.allow]
    for kind in ("deny", "ask", "allow"):
        for rule in files.rules:
            if rule.kind != kind:
                continue
            why = inert_reason(rule)
            lines.append(f"{kind}: {rule.text}  ({rule.source})" + (f"  not applied: {why}" if why else ""))
    return lines

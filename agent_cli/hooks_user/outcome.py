"""What one hook run means, by Claude Code's conventions (pure: a `HookRun` in, a value out).

- exit 0: go on. Its stdout, for SessionStart and UserPromptSubmit, is added to the model's
  context; for the other events it is shown to the user (dim). A JSON object on stdout says more:
  `{"decision": "block", "reason": "..."}` blocks as exit 2 does, and so do
  `hookSpecificOutput.permissionDecision: "deny"` (its `permissionDecisionReason` the reason) and
  `"continue": false` (`stopReason`); `additionalContext` (top level, or under
  `hookSpecificOutput` as Claude Code writes it) is context for the model (for PreCompact:
  appended to the summary instruction); `systemMessage` is shown to the user. A permissionDecision
  of "allow" or "ask" changes nothing (the call was approved, or asked, before hooks run: a hook
  never widens what runs), and `updatedInput` is not applied (the user is told).
- exit 2: block; the reason is the hook's stderr.
- any other exit, a timeout, a command that cannot start: a warning; the agent goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, TypeAlias

from agent_cli.hooks_user.config import HookSpec
from agent_cli.hooks_user.process import HookRun

__all__ = ["BLOCK_EXIT", "CONTEXT_EVENTS", "Action", "HookOutcome", "interpret", "label"]

BLOCK_EXIT = 2
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})  # whose stdout is the model's
Action: TypeAlias = Literal["go", "block", "warn"]
LABEL_CHARS = 60


@dataclass(frozen=True, slots=True)
class HookOutcome:
    action: Action
    reason: str = ""  # block: why (the hook's stderr or JSON reason); warn: what went wrong
    context: str = ""  # for the model: SessionStart / UserPromptSubmit stdout, additionalContext
    shown: str = ""  # for the user, dim: another event's stdout


def label(spec: HookSpec) -> str:
    """How a hook is named in a line to the user: its event and its command, shortened."""
    command = " ".join(spec.command.split())
    short = command if len(command) <= LABEL_CHARS else command[: LABEL_CHARS - 1] + "…"
    return f"{spec.event} hook `{short}`"


def interpret(spec: HookSpec, run: HookRun) -> HookOutcome:
    if run.failed:
        return HookOutcome("warn", f"{label(spec)} {run.failed}")
    if run.timed_out:
        return HookOutcome("warn", f"{label(spec)} timed out after {spec.timeout:g} s and was stopped")
    if run.exit_code == BLOCK_EXIT:
        return HookOutcome("block", run.stderr.strip())
    if run.exit_code != 0:
        said = _first_line(run.stderr) or _first_line(run.stdout)
        return HookOutcome(
            "warn", f"{label(spec)} exited with {run.exit_code}" + (f": {said}" if said else "")
        )
    answer = _json_object(run.stdout)
    if answer is None:
        out = run.stdout.strip()
        if spec.event in CONTEXT_EVENTS:
            return HookOutcome("go", context=out)
        return HookOutcome("go", shown=out)
    inner = answer.get("hookSpecificOutput")
    specific = inner if isinstance(inner, dict) else {}
    if answer.get("decision") == "block":
        return HookOutcome("block", str(answer.get("reason") or ""))
    if specific.get("permissionDecision") == "deny":
        return HookOutcome("block", str(specific.get("permissionDecisionReason") or ""))
    if answer.get("continue") is False:
        return HookOutcome("block", str(answer.get("stopReason") or answer.get("reason") or ""))
    message = answer.get("systemMessage")
    shown = message if isinstance(message, str) else ""
    if "updatedInput" in specific:
        note = "its updatedInput is not supported: the call runs as the model wrote it"
        shown = "\n".join(t for t in (shown, f"{label(spec)}: {note}") if t)
    return HookOutcome("go", context=_additional_context(answer), shown=shown)


def _additional_context(answer: dict[str, object]) -> str:
    text = answer.get("additionalContext")
    inner = answer.get("hookSpecificOutput")
    if text is None and isinstance(inner, dict):
        text = inner.get("additionalContext")
    return text if isinstance(text, str) else ""


def _json_object(stdout: str) -> dict[str, object] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""

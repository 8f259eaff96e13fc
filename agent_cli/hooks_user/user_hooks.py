"""`UserHooks`: the loop's hook surface, running the user's hook commands at each point.

Every point builds the event's JSON (always `event`, `hook_event_name`, `session_id`, `cwd`,
`transcript_path`, then the event's own fields; a hook from Claude Code's settings files gets it
as Claude Code writes it, `claude_hooks.py`), runs the matching hooks one after another
(`process.run_hook`) and reads each run (`outcome.interpret`): the first that blocks decides. What
they print for the user and what went wrong become events, put on the session's side queue
(agent/side_events.py) for the loop to show, so a failing hook is a warning line and the session goes on.

    SessionStart      source                                  stdout -> context of the first prompt
    UserPromptSubmit  prompt                                  stdout -> context; block drops it
    PreToolUse        tool_name, tool_input                   block -> the call is a tool error
    PostToolUse       tool_name, tool_input, tool_response    block -> its reason follows the result
    PreCompact        trigger, layer, focus                   block skips an automatic one;
                                                              additionalContext -> the instruction
    PostCompact       trigger, layer, record, archived, tokens_before, tokens_after
    Stop              reply
    SessionEnd        reason
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from agent_cli.agent.hooks import Hooks, PromptVerdict
from agent_cli.agent.side_events import HookEvent, SideEvents
from agent_cli.context.protocol import OPEN, CompactGate, skippable
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger, Event, HookOutput, WarningEvent
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.hooks_user.claude_hooks import CLAUDE_ONLY, claude_fields, claude_subject
from agent_cli.hooks_user.config import HookEventName, HookSpec
from agent_cli.hooks_user.outcome import HookOutcome, interpret
from agent_cli.hooks_user.process import run_hook
from agent_cli.tools.confine import Confinement

__all__ = ["SessionPlace", "UserHooks"]


class SessionPlace(Protocol):
    """Which session the hooks are told of (the session follows /resume)."""

    @property
    def id(self) -> str: ...

    @property
    def transcript_path(self) -> Path: ...


class UserHooks(Hooks):
    def __init__(
        self,
        specs: Sequence[HookSpec],
        *,
        root: Path,
        env: Mapping[str, str],
        sandbox: Confinement | None = None,
        permission_mode: Callable[[], str] = lambda: "default",
        side: SideEvents | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self._permission_mode = permission_mode  # the approval mode now (Claude Code's hooks are told)
        self._sandbox = sandbox  # the session's, when on: a project's hooks (and `sandbox = true`) run in it
        self._root = root
        self._env = dict(env)
        self._place: SessionPlace | None = None
        self._side = side or SideEvents()  # where what the hooks have to show goes

    @property
    def side(self) -> SideEvents:
        """The queue what the hooks have to show goes to (the loop that runs them reads it)."""
        return self._side

    def follow(self, place: SessionPlace) -> None:
        """Tell the hooks of this session's id and log from now on."""
        self._place = place

    # ---- the points ------------------------------------------------------

    def on_session_start(self, source: str) -> str:
        return self._context(self._fire("SessionStart", source, {"source": source}))

    def on_user_prompt(self, prompt: str) -> PromptVerdict:
        done = self._fire("UserPromptSubmit", "", {"prompt": prompt})
        blocked = _blocked(done)
        if blocked is not None:
            return PromptVerdict(
                blocked=f"a UserPromptSubmit hook dropped the prompt: {blocked or 'no reason given'}"
            )
        return PromptVerdict(context=self._context(done))

    def on_before_tool(self, use: ToolUse) -> str | None:
        fields = {"tool_name": use.name, "tool_input": dict(use.input), "tool_use_id": use.id}
        done = self._fire("PreToolUse", use.name, fields)
        blocked = _blocked(done)
        if blocked is None:
            return None
        return blocked or f"a PreToolUse hook refused this {use.name} call"

    def on_post_tool(self, use: ToolUse, result: ToolResult) -> ToolResult:
        response = {"content": result.content, "is_error": result.is_error}
        fields = {
            "tool_name": use.name,
            "tool_input": dict(use.input),
            "tool_response": response,
            "tool_use_id": use.id,
        }
        done = self._fire("PostToolUse", use.name, fields)
        notes = [o.reason for o in done if o.action == "block" and o.reason] + [
            o.context for o in done if o.context
        ]
        if not notes:
            return result
        said = "\n".join(f"[PostToolUse hook] {n}" for n in notes)
        return ToolResult(result.tool_use_id, f"{result.content}\n\n{said}", result.is_error, result.images)

    def on_pre_compact(self, layer: CompactLayer, trigger: CompactTrigger, focus: str | None) -> CompactGate:
        word = _trigger_word(trigger)
        done = self._fire("PreCompact", word, {"trigger": word, "layer": layer, "focus": focus})
        extra = "\n\n".join(o.context for o in done if o.context.strip())
        blocked = _blocked(done)
        if blocked is not None:
            if skippable(trigger):
                why = f": {blocked}" if blocked else ""
                self._say(HookOutput(hook="PreCompact", text=f"compaction skipped this turn{why}"))
                return CompactGate(skip=True)
            note = "a PreCompact hook asked to skip a requested compaction; it goes on"
            self._say(WarningEvent(message=note + (f" ({blocked})" if blocked else "")))
        return CompactGate(extra=extra) if extra else OPEN

    def on_compact(self, event: CompactEvent) -> None:
        if event.layer.on_arrival:  # PostCompact is for what left the context (L0 cuts on the way in)
            return
        archived = event.transcript or ""
        if archived and not Path(archived).is_absolute():
            archived = str(self._root / archived)
        fields = {
            "trigger": _trigger_word(event.trigger),
            "layer": event.layer,
            "record": event.summary or "",
            "archived": archived,
            "tokens_before": event.tokens_before,
            "tokens_after": event.tokens_after,
        }
        self._notify(self._fire("PostCompact", _trigger_word(event.trigger), fields))

    def on_stop(self, reply: str, active: bool = False) -> str | None:
        """A Stop hook that blocks (exit 2, `decision: "block"`) keeps the model going: its reason."""
        done = self._fire("Stop", "", {"reply": reply, "stop_hook_active": active})
        reason = _blocked(done)
        if reason is None:
            return None
        return reason or "a Stop hook asked to go on"

    def on_session_end(self) -> None:
        self._notify(self._fire("SessionEnd", "", {"reason": "exit"}))

    def _say(self, event: Event) -> None:
        self._side.put(HookEvent(event))

    # ---- running them ----------------------------------------------------

    def _fire(self, event: HookEventName, subject: str, fields: Mapping[str, object]) -> list[HookOutcome]:
        """Run the hooks of `event` that match `subject`, in order, until one blocks."""
        chosen = [s for s in self.specs if s.event == event and s.matches(_subject(s, event, subject))]
        if not chosen:
            return []
        ours = self._common(event) | dict(fields)
        payloads = {"agent": _payload({k: v for k, v in ours.items() if k not in CLAUDE_ONLY})}
        if any(s.dialect == "claude" for s in chosen):
            payloads["claude"] = _payload(claude_fields(ours, self._root))
        done: list[HookOutcome] = []
        for spec in chosen:
            box = self._sandbox if spec.confined else None
            payload = payloads[spec.dialect]
            ran = run_hook(spec.command, payload, self._root, spec.timeout, self._env, sandbox=box)
            outcome = interpret(spec, ran)
            done.append(outcome)
            if outcome.action == "warn":
                self._say(WarningEvent(message=outcome.reason))
            elif outcome.shown:
                self._say(HookOutput(hook=event, text=outcome.shown))
            if outcome.action == "block":
                break
        return done

    def _common(self, event: str) -> dict[str, object]:
        place = self._place
        return {
            "event": event,
            "hook_event_name": event,
            "session_id": place.id if place is not None else "",
            "cwd": str(self._root),
            "transcript_path": str(place.transcript_path) if place is not None else "",
            "permission_mode": self._permission_mode(),
        }

    def _context(self, done: list[HookOutcome]) -> str:
        """What the hooks give the model; a block where nothing can be blocked is said, not obeyed."""
        self._notify(done)
        return "\n\n".join(o.context for o in done if o.action == "go" and o.context.strip())

    def _notify(self, done: list[HookOutcome]) -> None:
        for o in done:
            if o.action == "block":
                self._say(WarningEvent(message=f"a hook asked to block, which this event cannot: {o.reason}"))


def _subject(spec: HookSpec, event: str, subject: str) -> str:
    """What the hook's matcher sees: Claude Code's hooks know our tools by Claude Code's names."""
    return claude_subject(event, subject) if spec.dialect == "claude" else subject


def _blocked(done: list[HookOutcome]) -> str | None:
    """The reason of the run that blocked (possibly ""), or None when none did."""
    return next((o.reason for o in done if o.action == "block"), None)


def _trigger_word(trigger: CompactTrigger) -> str:
    """Claude Code's two words: what the user or the model asked for is "manual", the rest "auto"."""
    return "manual" if trigger in ("manual", "tool") else "auto"


def _payload(fields: Mapping[str, object]) -> bytes:
    """The event as one JSON object, UTF-8 (lone surrogates written as JSON escapes)."""
    try:
        return json.dumps(fields, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(fields, ensure_ascii=True).encode("ascii")

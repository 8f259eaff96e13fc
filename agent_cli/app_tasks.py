"""How a sub-agent (the task tool's child, agent/subagent.py) is made from its parent session's parts.

    TaskFactory(...)(description, depth, quiet, task) -> Child

A child is an `AgentLoop` like the session's, made of the same kinds of parts, not a second loop:
the model the session talks to now (a provider, counter and summary call of its own, from the
session's `Assembly`), a context engine of its own with the session's context settings (its own
window and budget), its log and archive in the session's folder (`tasks/<id>/`, which the session's
recall searches), the system prompt with the pins' section as the session has it now, and the
session's tools with its own task tool in place of the session's (none at the depth limit).

What runs stays what the session allows: the session's approver (its mode, rules and the user's
answers), or for a `quiet` child (a background task, where nothing can be asked) the headless one
built from the same settings, which refuses what would ask. The user's hooks see its tool calls
and requests (a PreToolUse hook still blocks), not its prompt or its end. Its file changes are
recorded in the session's own log and snapshots, so `/rewind` to the prompt whose turn started it
undoes them.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from agent_cli.agent.approvals import Approver
from agent_cli.agent.file_watch import FileWatch
from agent_cli.agent.hooks import Hooks, PromptVerdict
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.subagent import Child, TaskTool
from agent_cli.app_assembly import Assembly
from agent_cli.config.settings import Settings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.protocol import CompactGate
from agent_cli.core.events import CompactEvent, CompactLayer, CompactTrigger
from agent_cli.core.messages import ToolResult, ToolUse
from agent_cli.core.requests import Request
from agent_cli.session import AgentSession
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.tools.base import Tool, ToolRegistry

__all__ = ["ChildHooks", "TaskFactory"]


class ChildHooks(Hooks):
    """The session's hooks as a child sees them: its tool calls, requests and compactions go to
    them; its prompt, its end and the session's start and end do not (they are the session's)."""

    def __init__(self, hooks: Hooks) -> None:
        self._hooks = hooks

    def on_user_prompt(self, prompt: str) -> PromptVerdict:
        return PromptVerdict()

    def on_pre_request(self, request: Request) -> None:
        self._hooks.on_pre_request(request)

    def on_before_tool(self, use: ToolUse) -> str | None:
        return self._hooks.on_before_tool(use)

    def on_pre_tool(self, use: ToolUse) -> None:
        self._hooks.on_pre_tool(use)

    def on_post_tool(self, use: ToolUse, result: ToolResult) -> ToolResult:
        return self._hooks.on_post_tool(use, result)

    def on_pre_compact(self, layer: CompactLayer, trigger: CompactTrigger, focus: str | None) -> CompactGate:
        return self._hooks.on_pre_compact(layer, trigger, focus)

    def on_compact(self, event: CompactEvent) -> None:
        self._hooks.on_compact(event)


class TaskFactory:
    """Makes the session's children (agent.subagent.ChildMaker)."""

    def __init__(
        self,
        *,
        settings: Settings,
        assembly: Assembly,
        session: AgentSession,
        loop: AgentLoop,
        hooks: Hooks,
        redactor: Redactor,
        approver: Approver,
        quiet_approver: Callable[[], Approver],
    ) -> None:
        self._settings = settings
        self._assembly = assembly
        self._session = session
        self._loop = loop
        self._hooks = ChildHooks(hooks)
        self._redactor = redactor
        self._approver = approver
        self._quiet_approver = quiet_approver
        self._quiet: Approver | None = None
        self._lock = threading.Lock()

    def __call__(self, description: str, depth: int, quiet: bool, task: Tool | None) -> Child:
        session = self._session
        parent = session.log
        model = self._assembly.for_model(session.model)
        meta = {"task": description, "parent": session.id, "depth": str(depth), "model": model.model}
        log = SessionLog.create_task(parent.dir, redactor=self._redactor, meta=meta)
        try:
            engine = ContextEngine(
                settings=self._settings.context,
                window=model.window,
                max_output=model.max_output,
                counter=model.counter,
                archive=self._assembly.archive(log),
                summarize=model.summarize,
                gate=self._hooks.on_pre_compact,
                price=model.cache_price,
            )
            context = dataclasses.replace(
                self._loop.tool_context,
                cancel=threading.Event(),
                recall=engine.recall,
                save_text=lambda label, text: engine.archive.shown(engine.archive.write_output(label, text)),
            )
            loop = AgentLoop(
                provider=model.provider,
                tools=_child_tools(session.tools, task),
                context=engine,
                system=self._loop.frame_parts.system,
                log=log,
                approver=self._approver_for(quiet),
                tool_context=context,
                hooks=self._hooks,
                max_iterations=self._settings.tools.max_iterations,
                retry=self._assembly.retry,
                redact=self._redactor.redact,
                summary_model=model.summary_model,
                # Its file changes go to the session's log and snapshots: /rewind undoes them.
                watch=FileWatch(session.project_root, self._assembly.snapshots(parent), parent),
            )
            loop.edit_frame(lambda parts: parts.set_pinned(self._loop.frame_parts.pinned), "pins")
        except BaseException:
            log.close()
            raise
        try:
            shown = log.dir.relative_to(session.project_root).as_posix()
        except ValueError:
            shown = str(log.dir)
        return Child(loop, shown, log.close)

    def _approver_for(self, quiet: bool) -> Approver:
        if not quiet:
            return self._approver
        with self._lock:
            if self._quiet is None:
                self._quiet = self._quiet_approver()
            return self._quiet


def _child_tools(tools: ToolRegistry, task: Tool | None) -> ToolRegistry:
    """The session's tools as they stand (an MCP server's and those revealed included), with the
    child's own task tool where the session's is, or without one at the depth limit: in the same
    order, so the tools' part of a request's prefix is the session's when the specs are the same."""
    offered: list[Tool] = []
    for name in tools.names():
        tool = tools.get(name)
        tool = task if isinstance(tool, TaskTool) else tool
        if tool is not None:
            offered.append(tool)
    child = ToolRegistry(offered)
    for held in tools.deferred():
        child.defer(held)
    return child

"""The user's own tool runs: what runs through the session's tools without the model.

Three things run this way: the files a prompt's `@path` words attach, a `!command` the user
typed, and a goal's check. Nothing is asked (the user typed it, or approved the goal), and
each output is capped by L0 as a tool's result is, so a long one is archived whole and cut
to head + tail before it reaches the conversation.

    UserRuns(loop, engine)
      .attach(prompt, root, images)   `@path`: each file read as read_file reads it, each folder listed
      .shell(command)                 `!command`: its output joins the conversation as the user's message
      .check(command)                 a goal's check: run in the session's sandbox, its verdict
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.agent.attachments import Attached, attach, shell_message
from agent_cli.agent.goal_run import CHECK_TIMEOUT, check_result
from agent_cli.agent.loop import AgentLoop
from agent_cli.context.engine import ContextEngine
from agent_cli.core.goals import CheckResult
from agent_cli.core.messages import ToolResult, ToolUse, new_id
from agent_cli.tools.base import ToolOutput
from agent_cli.tools.registry import BASH

__all__ = ["UserRuns"]


class UserRuns:
    """Runs for the user through `loop`'s tools, capped by `engine`'s L0. Both are the session's
    own for its whole life (a model switch or a resume resets them in place)."""

    def __init__(self, loop: AgentLoop, engine: ContextEngine) -> None:
        self._loop = loop
        self._engine = engine

    def attach(self, prompt: str, *, root: Path, images: bool) -> Attached:
        """What the prompt's `@path` words attach: each file read as `read_file` reads it, each
        folder listed, then capped by L0 as a tool's result (archived whole when cut)."""
        if "@" not in prompt:
            return Attached((), ())
        return attach(
            prompt,
            lambda name, args: self._for_user(ToolUse(new_id("attach"), name, dict(args))),
            root=root,
            images=images,
        )

    def shell(self, command: str) -> ToolOutput:
        """`!command`: run in the project's shell now, no model and nothing asked (the user typed it);
        what it printed joins the conversation as the user's own message, capped by L0."""
        use = ToolUse(new_id("shell"), BASH, {"command": command})
        output = self._for_user(use)
        self._loop.add_user_message(shell_message(command, output.content))
        return output

    def check(self, command: str) -> CheckResult:
        """The goal's check: run as the user's `!command` is (unasked) but in the session's sandbox,
        its output capped by L0 like a tool's (archived whole when cut)."""
        use = ToolUse(new_id("goal"), BASH, {"command": command, "timeout": CHECK_TIMEOUT})
        output = self._loop.use_tool(use, sandboxed=True)
        capped, _ = self._engine.ingest(use, ToolResult(use.id, output.content, output.is_error))
        return check_result(ToolOutput(capped.content, is_error=output.is_error))

    def _for_user(self, use: ToolUse) -> ToolOutput:
        output = self._loop.use_tool(use)
        if output.is_error:
            return output
        capped, _ = self._engine.ingest(use, ToolResult(use.id, output.content, images=output.images))
        return ToolOutput(capped.content, images=capped.images)

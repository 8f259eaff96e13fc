"""SessionView: what the shells read of a running session, and nothing they change.

Its ids and paths (the log, the transcript hooks are told of), the model and the
summary writer, the window and the thresholds in force, the tools offered, the
history, the usage of every model call, and /context's breakdown. AgentSession
(session.py) is a SessionView: it holds the parts these read (the loop, the
engine, the log, the model's parts) and is the only one that changes them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.subagent import SubAgents
from agent_cli.config.settings import Settings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.notices import Breakdown
from agent_cli.context.thresholds import Thresholds
from agent_cli.core.messages import Message, Usage
from agent_cli.session_parts import ModelParts
from agent_cli.store.session_log import SessionLog
from agent_cli.tools.base import ToolRegistry

__all__ = ["SessionView"]


class SessionView:
    # The parts read here; AgentSession sets them (and changes them on /model, /resume).
    settings: Settings
    tasks: SubAgents
    _loop: AgentLoop
    _engine: ContextEngine
    _log: SessionLog
    _model: ModelParts
    _redact: Callable[[str], str]

    @property
    def id(self) -> str:
        return self._log.id

    @property
    def log(self) -> SessionLog:
        """The session's log (a sub-agent's file changes are recorded in it, for /rewind)."""
        return self._log

    @property
    def log_dir(self) -> Path:
        return self._log.dir

    @property
    def transcript_path(self) -> Path:
        """The session's log (what hooks are told as `transcript_path`)."""
        return self._log.path

    @property
    def project_root(self) -> Path:
        return self.settings.project_root

    @property
    def provider_name(self) -> str:
        return self.settings.provider.name

    @property
    def model(self) -> str:
        return self._model.model

    @property
    def summary_model(self) -> str:
        """The model that writes the context's summaries (the session's own unless configured)."""
        return self._model.summary_model or self._model.model

    @property
    def window(self) -> int:
        """The context window in force: the model's, or the smaller one learned from the provider's
        refusals. The toolbar, /model and /context all say this one."""
        return self._engine.window

    @property
    def max_output(self) -> int:
        """Tokens a reply may take (less than the model's maximum in a small window)."""
        return self._engine.max_output

    @property
    def thresholds(self) -> Thresholds:
        return self._engine.thresholds

    @property
    def tools(self) -> ToolRegistry:
        """The tools offered to the model, each with how it asks and how a call is shown."""
        return self._loop.tools

    @property
    def engine(self) -> ContextEngine:
        """The context engine this session runs; the session resets it on clear, switch and resume."""
        return self._engine

    @property
    def history(self) -> tuple[Message, ...]:
        return tuple(self._loop.history)

    @property
    def usage_log(self) -> tuple[tuple[str, Usage], ...]:
        """(model, usage) of every model call so far, summary calls and sub-agents' calls included."""
        return (*self._loop.usage_log, *self.tasks.usage())

    def redact(self, text: str) -> str:
        """`text` with the configured keys and credential shapes replaced, as the session log stores it."""
        return self._redact(text)

    def context_tokens(self) -> int:
        return self._loop.context_tokens()

    def breakdown(self) -> Breakdown:
        return self._engine.breakdown(self._loop.history, self._loop.frame)

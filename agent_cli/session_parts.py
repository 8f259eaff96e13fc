"""What a session is built from and given anew: a model's parts, how to get them, its extensions.

`AgentSession` (session.py) asks `Parts` for a model's provider, counter and summary call when the
user switches model, and for another session's log when they resume one; `Extensions` is what runs
besides its own tools (the MCP servers). The composition root (app.py) implements both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from agent_cli.billing.prices import CachePrice
from agent_cli.context.summary_request import Summarize
from agent_cli.context.thresholds import Counter
from agent_cli.core.events import WarningEvent
from agent_cli.core.messages import Message
from agent_cli.providers.base import Provider
from agent_cli.store.archive import Archive
from agent_cli.store.session_log import SessionLog
from agent_cli.store.snapshots import SnapshotStore
from agent_cli.tools.base import ToolRegistry

__all__ = ["Extensions", "ModelParts", "Parts"]


class Extensions(Protocol):
    """What the session runs besides its own tools (the MCP servers, mcp_client.servers.McpServers)."""

    def report(self) -> list[str]:
        """The servers, their state and their tools, as lines safe for a terminal."""
        ...

    def connecting(self) -> list[str]:
        """The servers still connecting (their tools are not offered yet)."""
        ...

    def join(self, model: ModelParts, tools: ToolRegistry) -> list[str]:
        """Wait until every server connected or failed and offer the tools found (once); a line
        for each one that failed."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ModelParts:
    """What talking to one model takes: its provider, counter and summary call, and its limits.
    `summary_model` writes the summaries: `model` itself unless `context.summary_model` names another."""

    model: str
    provider: Provider
    counter: Counter
    summarize: Summarize
    window: int
    max_output: int
    warning: WarningEvent | None = None
    summary_model: str = ""
    images: bool = True  # the model takes images (the model table's word)
    cache_price: CachePrice = field(default_factory=CachePrice)  # its prompt cache (`model_info.cache_price`)


class Parts(Protocol):
    """How the session gets new parts when the user switches model or session (see app.py)."""

    def for_model(self, model: str) -> ModelParts: ...

    def counter(self, model: str) -> Counter:
        """A fresh counter for `model`: its own vocabulary, nothing learned or anchored yet."""
        ...

    def reopen(self, session_id: str, model: str) -> tuple[SessionLog, list[Message], tuple[str, ...]]:
        """The log of an earlier session, opened for appending, its repaired working history, and
        a line for each thing in it this version could not read (a newer version's)."""
        ...

    def archive(self, log: SessionLog) -> Archive: ...

    def snapshots(self, log: SessionLog) -> SnapshotStore:
        """Where the session's file snapshots are kept (for /rewind), secrets refused."""
        ...

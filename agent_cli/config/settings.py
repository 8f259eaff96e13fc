"""Typed settings: what the config file, env vars and flags resolve to.

Pure data with defaults; `config.py` loads and validates it. Every field here
is documented (default and why) in `config.example.toml`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent_cli.sandbox.policy import SandboxMode

if TYPE_CHECKING:
    from agent_cli.config.raw_tables import RawTable

__all__ = [
    "ApprovalSettings",
    "ContextSettings",
    "ProviderSettings",
    "SandboxSettings",
    "Settings",
    "ToolSettings",
    "UiSettings",
]

ProviderName = Literal["anthropic", "openai"]
Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
Display = Literal["summarized", "omitted"]
Summarizer = Literal["model", "native"]
# Claude Code's names: ask (default), accept edits, plan (read-only tools only), auto (inside the
# sandbox, what stays in the project runs unasked: agent/auto_mode.py), bypass (--yes).
PermissionMode = Literal["default", "acceptEdits", "plan", "auto", "bypassPermissions"]
Wire = Literal["responses", "chat"]


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    name: ProviderName = "anthropic"
    model: str = ""  # empty: the provider's default model
    api_key: str | None = None  # from ANTHROPIC_API_KEY / OPENAI_API_KEY unless set here
    base_url: str | None = None  # from ANTHROPIC_BASE_URL / OPENAI_BASE_URL unless set here
    max_retries: int = 6
    timeout: float = 1800.0  # the whole reply, streamed or not: a drip or a ping-only stream ends here
    streaming: bool = True  # false: whole replies (for a proxy or server that breaks streams)
    stall_timeout: float = 90.0  # a stream that sends nothing this long has stalled (retried twice)
    max_output_tokens: int | None = None  # None: the model table's max output, capped at 32k
    prompt_caching: bool = True
    effort: Effort | None = None  # how hard the model thinks; None: the model's own default
    display: Display = "summarized"  # what of its thinking the model returns (for progress between tools)
    wire: Wire | None = None  # OpenAI; None: the Responses API on OpenAI's endpoint, else Chat Completions


@dataclass(frozen=True, slots=True)
class ContextSettings:
    context_window: int | None = None  # None: from the model table
    # The budget the layers work to, in tokens, whatever the window (0: the whole window). On a
    # 1M-token model a request costs money, time and quality long before it stops fitting.
    working_budget: int = 64_000
    trigger_ratio: float = 0.90  # L2 fires at this share of the budget (window - output reserve)
    target_ratio: float = 0.45  # after compacting, the request is at most this share of the budget
    emergency_ratio: float = 0.95  # L4 fires above this share of the budget
    clear_ratio: float = 0.50  # L1 (clear old tool results) may start above this share
    # Above this share L2's record is prepared in the background and swapped in once it is ready
    # (no turn waits on a summary); at or above trigger_ratio it is made at the trigger, as it waits.
    prepare_ratio: float = 0.65
    # Past the trigger, while its record is still being made, a request may grow to this share of the
    # budget and go as it is (the record is swapped in at a later request); above it, the turn waits.
    # At or below trigger_ratio (the default): every turn waits.
    hold_ratio: float = 0.80
    # Where a turn would wait for a record (past the hold line, not ready or never started): a digest
    # stands in at once and the model's record, made in the background, takes its place as soon as
    # it is ready. False: the turn waits for the record. (Not with summarizer = "native": a
    # provider's record is carried after the history it was made for.)
    digest_stands_in: bool = True
    clear_protect_tokens: int = 25_000  # newest tool results kept verbatim by L1
    clear_min_batch_tokens: int = 20_000  # L1 acts only when it frees at least this much
    tool_result_max_tokens: int = 20_000  # L0: larger tool results are cut to head + tail
    keep_tail_tokens: int = 12_000  # L2 keeps this much recent conversation verbatim (clamped)
    # What L2 keeps (its record, the user's messages, the verbatim tail) sits at least this far below
    # the trigger, so a compaction frees at least this much (binds on a small window only; 0: off).
    min_freed_tokens: int = 14_000
    user_messages_tokens: int = 8_000  # L2 keeps the user's own messages verbatim up to this
    summary_max_tokens: int = 4_000  # cap on the summary's length
    # The model that writes summaries, served by the session's provider and key ("": the session's own
    # model, and it follows /model). Another model reads none of the session model's cached prefix.
    summary_model: str = ""
    # Who writes L2/L3's record: "model" (our summary request, to the session's model or summary_model)
    # or "native" (the provider's own compaction where the model supports it: Anthropic's on-demand
    # compaction, OpenAI's /responses/compact; elsewhere "model", with a warning said once).
    summarizer: Summarizer = "model"
    summarize_timeout: float = 180.0  # seconds before the summary call counts as failed
    max_failures: int = 2  # consecutive failed compactions before stopping to tell the user
    summary_failures_to_latch: int = 2  # failed summaries in a row before records are built by code
    latch_compactions: int = 5  # compactions by code before the model is asked to summarize again
    recall_max_chars: int = 12_000  # cap on what one recall returns


@dataclass(frozen=True, slots=True)
class ToolSettings:
    bash_timeout: float = 120.0
    allow_outside_root: bool = False
    max_iterations: int = 100
    max_task_depth: int = 2  # sub-agents (the task tool) inside sub-agents, at most; 0: no task tool


@dataclass(frozen=True, slots=True)
class ApprovalSettings:
    yes: bool = False  # approve every tool call (--yes)
    mode: PermissionMode = "default"  # the approval mode a session starts in (--permission-mode)
    allow: tuple[str, ...] = ()  # bash command prefixes that run without asking


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """What a sandboxed command may reach (agent_cli/sandbox/, docs/sandbox.md). Only `hidden` may
    come from a project file: the others would widen the sandbox."""

    mode: SandboxMode = "workspace-write"  # --sandbox; where bubblewrap fails here, every command is asked
    network: bool = False
    writable: tuple[str, ...] = ()  # paths writable besides the project and the temp dir
    hidden: tuple[str, ...] = ()  # paths unreadable besides the credentials hidden by default
    # The session's processes (its cgroup's pids.max, the agent's own threads counted, root's too):
    # a fork bomb stops here, not at the machine's limit (tools/process_cap.py).
    max_processes: int = 1024


@dataclass(frozen=True, slots=True)
class WebSettings:
    """What web_fetch may reach (agent_cli/web/). `allow_hosts` (the user's config only) are fetched
    without asking, even on the user's own network; `deny_hosts` are never fetched (a project file
    may add to them); a `.example.com` entry covers the names under it."""

    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    search: bool = True  # offer the provider's own web search where the model has one (server-side)


@dataclass(frozen=True, slots=True)
class UiSettings:
    """What the REPL shows. Only the user's own config sets it: a project file may not run a command."""

    statusline: str = ""  # a shell command: its first line under the toolbar ("": none); ui/status_line.py


@dataclass(frozen=True, slots=True)
class Settings:
    provider: ProviderSettings = field(default_factory=ProviderSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    approvals: ApprovalSettings = field(default_factory=ApprovalSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    web: WebSettings = field(default_factory=WebSettings)
    ui: UiSettings = field(default_factory=UiSettings)
    project_root: Path = field(default_factory=Path.cwd)
    sources: tuple[str, ...] = ()  # config files that were read, for /context and errors
    notices: tuple[str, ...] = ()  # for the user's eyes at start-up: what the project file chose
    tables: tuple[RawTable, ...] = ()  # `[mcp]` and `[hooks]` as written, for their owners to validate

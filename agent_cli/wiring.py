"""Builds a working session from settings: provider, context engine, tools, session log, loop.

The one place that knows how the parts fit together; `cli.py` parses flags
and calls in here. Errors a user can fix (config, missing key, unknown
session) surface as one line on stderr with exit code 2, never a traceback.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from agent_cli import __version__
from agent_cli.config.load import Flags, load_settings
from agent_cli.config.settings import Settings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.policy import output_for_window
from agent_cli.core.approvals import Approver, AutoApprover, HeadlessApprover
from agent_cli.core.errors import AgentError, ConfigError
from agent_cli.core.events import WarningEvent
from agent_cli.core.loop import AgentLoop
from agent_cli.core.messages import Message, Usage
from agent_cli.core.summary_call import ProviderSummarizer
from agent_cli.prompt.instructions import load_project_instructions
from agent_cli.prompt.system import build_system_prompt
from agent_cli.providers.base import Provider
from agent_cli.providers.factory import DEFAULT_MODELS, create_provider
from agent_cli.providers.models import UNKNOWN_WINDOW, lookup
from agent_cli.providers.retry import RetryPolicy
from agent_cli.store.archive import TranscriptStore
from agent_cli.store.crash_log import internal_error
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import (
    SessionLog,
    latest_session_id,
    load_session,
    read_records,
    resolve_session_id,
)
from agent_cli.tokens.counter import TokenCounter
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import default_tools

__all__ = [
    "Built",
    "CliArgs",
    "build",
    "model_limits",
    "resume_into",
    "run_cli",
    "switch_model",
    "transcripts_command",
]

OUTPUT_FORMATS = ("text", "json", "stream-json")
MAX_OUTPUT_CAP = 32_000


@dataclass(frozen=True, slots=True)
class CliArgs:
    prompt: str | None = None
    provider: str | None = None
    model: str | None = None
    context_window: int | None = None
    config: Path | None = None
    yes: bool = False
    output_format: str = "text"
    continue_session: bool = False
    resume: str | None = None


@dataclass(slots=True)
class Built:
    settings: Settings
    loop: AgentLoop
    session: SessionLog
    engine: ContextEngine
    window: int
    model: str
    warnings: list[WarningEvent]
    make_provider: Callable[[str], Provider]
    redactor: Redactor
    meta: dict[str, str]


def _fail(message: str, code: int = 2) -> int:
    print(f"agent: {message}", file=sys.stderr)
    return code


def run_cli(args: CliArgs, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
    if args.output_format not in OUTPUT_FORMATS:
        return _fail(
            f"--output-format must be one of {', '.join(OUTPUT_FORMATS)} (got {args.output_format!r})"
        )
    if args.continue_session and args.resume:
        return _fail("use either --continue or --resume, not both")
    if args.prompt is not None and not args.prompt.strip():
        return _fail("-p needs a prompt: agent -p 'what to do'")
    interactive = args.prompt is None
    if interactive and not sys.stdin.isatty():  # `echo "fix the tests" | agent`: one headless task
        piped = sys.stdin.read().strip()
        if not piped:
            return _fail("stdin is empty: pipe a prompt in (echo 'task' | agent) or run agent in a terminal")
        args, interactive = replace(args, prompt=piped), False
    elif interactive and not sys.stdout.isatty():  # `agent > file`: nobody would see the prompt
        return _fail("stdout is not a terminal; for output to a file or a pipe use agent -p PROMPT")
    try:
        built = build(
            args, env=dict(os.environ) if env is None else env, cwd=cwd or Path.cwd()
        )
    except ConfigError as exc:
        return _fail(str(exc))
    except AgentError as exc:
        return _fail(str(exc), 1)
    except OSError as exc:  # the project's .transcripts/ cannot be created or read
        return _fail(f"cannot open the session log: {exc}", 1)
    if interactive:
        from agent_cli.ui.repl import run_repl

        return run_repl(built)
    return _headless(built, args)


def _headless(built: Built, args: CliArgs) -> int:
    from agent_cli.ui.headless import OutputFormat, render_headless

    fmt: OutputFormat = args.output_format  # type: ignore[assignment]  # checked by run_cli
    assert args.prompt is not None
    try:
        return render_headless(itertools.chain(built.warnings, built.loop.run(args.prompt)), fmt)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `agent -p ... | head`: the reader left; nothing more to say
        sys.stderr.close()
        return 1
    except AgentError as exc:
        return _fail(str(exc), 1)
    except Exception as exc:  # a bug: one line here, the traceback in the crash log
        return _fail(internal_error(exc), 1)
    finally:
        built.session.close()


def build(args: CliArgs, *, env: dict[str, str], cwd: Path) -> Built:
    flags = Flags(provider=args.provider, model=args.model, context_window=args.context_window, yes=args.yes)
    settings = load_settings(config_path=args.config, env=env, flags=flags, cwd=cwd)
    root = settings.project_root
    pset = settings.provider
    model = pset.model or DEFAULT_MODELS[pset.name]

    def make_provider(name: str) -> Provider:
        return create_provider(replace(pset, model=name))

    provider = make_provider(model)
    window, max_output, warning = model_limits(settings, model)
    warnings = [warning] if warning else []

    keys = (pset.api_key, env.get("ANTHROPIC_API_KEY"), env.get("OPENAI_API_KEY"), *secret_env_values(env))
    redactor = Redactor([k for k in keys if k])
    meta = {"provider": pset.name, "model": model, "cwd": str(root), "version": __version__}
    history: list[Message] = []
    if args.continue_session or args.resume:
        session_id = resolve_session_id(root, args.resume) if args.resume else latest_session_id(root)
        if session_id is None:
            raise ConfigError(f"no earlier session in {root} to continue (sessions live in .transcripts/)")
        session, history = _reopen(root, session_id, redactor, meta)
    else:
        session = SessionLog.create(root, redactor=redactor, meta=meta)

    policy = RetryPolicy(max_retries=pset.max_retries)
    loop_ref: list[AgentLoop] = []
    summarizer = ProviderSummarizer(
        lambda: loop_ref[0].provider,
        policy=policy,
        timeout=settings.context.summarize_timeout,
        on_request=lambda req: loop_ref[0].hooks.on_pre_request(req) if loop_ref else None,
    )
    engine = ContextEngine(
        settings=settings.context,
        window=window,
        max_output=max_output,
        counter=TokenCounter(model, pset.name),
        store=TranscriptStore(session.dir, redactor=redactor),
        summarize=summarizer,
    )
    # The REPL replaces this with an approver that asks the user (repl.Repl.install_approver).
    allow = settings.approvals.allow
    approver: Approver = AutoApprover() if settings.approvals.yes else HeadlessApprover(allow)
    tool_ctx = ToolContext(
        root=root,
        allow_outside_root=settings.tools.allow_outside_root,
        bash_timeout=settings.tools.bash_timeout,
    )
    system = build_system_prompt(root, instructions=load_project_instructions(root))
    loop = AgentLoop(
        provider=provider,
        tools=default_tools(),
        context=engine,
        system=system,
        session=session,
        approver=approver,
        tool_context=tool_ctx,
        max_iterations=settings.tools.max_iterations,
        retry=policy,
        redact=redactor.redact,
        history=history,
        session_id=session.id,
    )
    loop_ref.append(loop)
    if history:
        _restore_anchor(loop, engine, session.path)
    return Built(settings, loop, session, engine, window, model, warnings, make_provider, redactor, meta)


_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSW|CREDENTIAL|AUTH|PRIVATE", re.IGNORECASE)
_NOT_SECRET_NAME = re.compile(r"_(SOCK|PATH|FILE|DIR|HOME|URL|HOST|PORT)$", re.IGNORECASE)


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names say they are secrets (AWS_SECRET_ACCESS_KEY,
    GITHUB_TOKEN, DB_PASSWORD ...): a tool printing the environment must not put them on disk."""
    return [
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and not _NOT_SECRET_NAME.search(name)
        and len(value) >= 8 and not value.startswith(("/", "~"))
    ]


def model_limits(settings: Settings, model: str) -> tuple[int, int, WarningEvent | None]:
    """(context window, max output tokens, a warning) for `model` under these settings.

    The window comes from the config or flag, else the model table, else a
    conservative default with a warning. Replies may take the model's max
    output (capped at 32k) but never more than a quarter of a small window.
    """
    info = lookup(model)
    warning = None
    if settings.context.context_window:
        window = settings.context.context_window
    elif info is not None:
        window = info.context_window
    else:
        window = UNKNOWN_WINDOW
        warning = WarningEvent(
            message=f"unknown model {model!r}: assuming a {UNKNOWN_WINDOW:,}-token window; "
            "set --context-window or context.context_window"
        )
    max_output = settings.provider.max_output_tokens or min(info.max_output if info else 8192, MAX_OUTPUT_CAP)
    return window, output_for_window(max_output, window), warning


def switch_model(built: Built, model: str) -> WarningEvent | None:
    """`/model NAME`: talk to another model from the next request on, with its window and output limit."""
    window, max_output, warning = model_limits(built.settings, model)
    built.loop.set_provider(built.make_provider(model))
    built.engine.counter = TokenCounter(model, built.settings.provider.name)  # its own vocabulary and anchor
    built.engine.retarget(window, max_output)
    built.window, built.model = window, model
    return warning


def _reopen(
    root: Path, session_id: str, redactor: Redactor, meta: dict[str, str]
) -> tuple[SessionLog, list[Message]]:
    """Open an earlier session for appending; the log records who resumed it and the repaired history."""
    loaded = load_session(root, session_id)
    session = SessionLog.open(root, session_id, redactor=redactor)
    try:
        session.log_meta(meta)
        session.log_history(loaded.messages, "resume")
    except BaseException:
        session.close()
        raise
    return session, list(loaded.messages)


def _restore_anchor(loop: AgentLoop, engine: ContextEngine, log: Path) -> None:
    """Count a resumed history from the provider's last report, as if the session had not stopped.

    The last usage event was reported for the history up to the last assistant
    message; with that prefix anchored, only what came after is counted locally.
    """
    records, _ = read_records(log)
    usage = next(
        (
            Usage.from_json(r["event"]["usage"])
            for r in reversed(records)
            if r.get("kind") == "event" and (r.get("event") or {}).get("type") == "usage"
        ),
        None,
    )
    replies = [i for i, m in enumerate(loop.history) if m.role == "assistant"]
    if usage is not None and replies:
        engine.observe(loop.frame, loop.history[: replies[-1]], usage)


def resume_into(built: Built, session_id: str) -> None:
    """Switch a running REPL to another session of this project (`/resume ID`)."""
    root = built.settings.project_root
    session, history = _reopen(root, resolve_session_id(root, session_id), built.redactor, built.meta)
    built.session.close()
    built.session = session
    built.loop.session = session
    built.loop.session_id = session.id
    built.loop.history = history
    built.engine.store = TranscriptStore(session.dir, redactor=built.redactor)
    built.engine.counter = TokenCounter(built.model, built.settings.provider.name)
    built.engine.retarget(built.window, built.engine.max_output)
    _restore_anchor(built.loop, built.engine, session.path)


def transcripts_command(action: str, arg: str | None, *, cwd: Path | None = None) -> int:
    import agent_cli.ui.transcript_views as view
    from agent_cli.store.session_log import list_sessions

    root = cwd or Path.cwd()
    try:
        if action == "list":
            sessions = list_sessions(root)
            if not sessions:
                return _fail(f"no sessions in {root / '.transcripts'}", 1)
            print(view.format_list(sessions))
        elif action == "show":
            assert arg is not None
            print(view.format_show(root, resolve_session_id(root, arg)))
        else:
            assert arg is not None
            hits = view.search(root, arg)
            if not hits:
                return _fail(f"no match for {arg!r}", 1)
            print(view.format_search(hits))
    except ConfigError as exc:
        return _fail(str(exc))
    return 0

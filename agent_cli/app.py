"""The composition root: builds an AgentSession from settings.

    open_session(settings, env=..., resume=..., ask=...) -> AgentSession

It makes every part (provider, token counter, summary call, context engine,
archive, tools, session log, loop) and hands them over; afterwards the
session changes them only through their own methods. `Assembly` is how the
session gets new parts later (another model, another session). Nothing here
prints or reads the process environment: the caller passes `env`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from agent_cli import __version__
from agent_cli.agent.approvals import (
    RESUME_UNSIGNED,
    Approver,
    Asker,
    HeadlessApprover,
    InteractiveApprover,
)
from agent_cli.agent.file_watch import FileWatch
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.loop import AgentLoop
from agent_cli.agent.modes import ModalApprover, ModeState
from agent_cli.agent.native_summary import NativeSummarizer, choose_summarizer
from agent_cli.agent.summary_call import ProviderSummarizer, Writer
from agent_cli.config.settings import ProviderSettings, Settings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.protocol import Frame
from agent_cli.context.thresholds import Counter, compute_thresholds, output_for_window
from agent_cli.core.errors import ConfigError
from agent_cli.core.events import WarningEvent
from agent_cli.core.messages import Message
from agent_cli.core.thinking import strip_thinking
from agent_cli.extensions import offer_mcp_tools, start_mcp_servers
from agent_cli.hooks_user.config import load_hooks
from agent_cli.hooks_user.trust import hooks_to_run
from agent_cli.hooks_user.user_hooks import UserHooks
from agent_cli.prompt.instructions import read_project_instructions
from agent_cli.prompt.system import build_system_prompt
from agent_cli.providers.base import Provider
from agent_cli.providers.factory import create_provider, query_limits
from agent_cli.providers.models import UNKNOWN_WINDOW, ModelInfo, family_limits
from agent_cli.providers.native_support import native_compaction_gap
from agent_cli.providers.registry import PROVIDERS, wire_for
from agent_cli.providers.resolve import ModelChoice, resolve_model, resolve_writer
from agent_cli.providers.retry import RetryPolicy
from agent_cli.session import AgentSession, ModelParts
from agent_cli.store.archive import Archive
from agent_cli.store.layout import check_private_dir, ensure_transcripts_dir, transcripts_dir
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import continue_candidates, load_session, resolve_session_id
from agent_cli.store.signing import SIGNATURE_KEY, SessionSigner
from agent_cli.store.snapshots import SnapshotStore
from agent_cli.tokens.counter import TokenCounter
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.context_tools import Recall
from agent_cli.tools.registry import default_tools

__all__ = [
    "Assembly",
    "ProviderFactory",
    "model_limits",
    "open_session",
    "secret_env_values",
]

MAX_OUTPUT_CAP = 32_000
SUMMARY_RETRIES = 2
LATEST = ""  # `resume=LATEST`: the session written last (--continue)

# The test seam for providers: a function of the provider settings, their model resolved.
ProviderFactory = Callable[[ProviderSettings], Provider]


def open_session(
    settings: Settings,
    *,
    env: Mapping[str, str],
    resume: str | None = None,
    ask: Asker | None = None,
    make_provider: ProviderFactory | None = None,
    pins: Sequence[str] = (),
) -> AgentSession:
    """A new session, or an earlier one (`resume`: an id or prefix, or LATEST) reopened, with `pins`
    (--pin) beside the ones it had.

    `ask` is the user's answer to an approval question (the REPL's); without it
    the session runs headless: allow-listed commands run, the rest is refused.
    Raises ConfigError for what the user can fix, OSError when `.transcripts/`
    cannot be written.
    """
    pset = settings.provider
    provider_keys = [env.get(entry.api_key_env) for entry in PROVIDERS.values()]
    keys = (pset.api_key, *provider_keys, *secret_env_values(env))
    redactor = Redactor([k for k in keys if k])
    root = settings.project_root
    approvals = ProjectApprovals.for_user(env, root)
    hook_specs, hook_notices = hooks_to_run(
        load_hooks(settings.tables), approvals, ask=ask, yes=settings.approvals.yes
    )
    hooks = UserHooks(hook_specs, root=root, env=env)  # the user's commands on the loop's events
    tools = default_tools()
    instructions = read_project_instructions(root)
    notices = [*settings.notices, *instructions.notices, *hook_notices]
    system = build_system_prompt(root, instructions=instructions.text)
    signer = SessionSigner.for_user(env)
    if signer.problem:
        notices.append(f"{signer.problem}: this session is not signed, so --continue will pass over it")
    assembly = Assembly(
        settings, hooks, redactor, make_provider, lambda: Frame(system, tools.specs()), signer=signer, ask=ask
    )
    model = assembly.for_model(pset.model)  # empty: the provider's default, as resolve_model says
    servers, mcp_notes = start_mcp_servers(settings, env, ask, approvals)
    notices.extend(mcp_notes)
    try:
        if servers is not None:
            offer_mcp_tools(settings, model, tools, servers)
        history: list[Message] = []
        if resume is not None:
            check_private_dir(transcripts_dir(root))  # a planted link or another's folder: one line
            if resume:
                session_id = resolve_session_id(root, resume)
            else:
                session_id, skipped = _latest_signed(root, signer)
                notices.extend(skipped)
            log, history = assembly.reopen(session_id, model.model)
        else:
            ensure_transcripts_dir(root)
            log = SessionLog.create(root, redactor=redactor, meta=assembly.meta(model.model, new=True))
        engine = ContextEngine(
            settings=settings.context,
            window=model.window,
            max_output=model.max_output,
            counter=model.counter,
            archive=assembly.archive(log),
            summarize=model.summarize,
            gate=hooks.on_pre_compact,
        )
        tool_context = ToolContext(
            root=root,
            allow_outside_root=settings.tools.allow_outside_root,
            bash_timeout=settings.tools.bash_timeout,
            recall=engine.recall,
            secret_spans=redactor.spans,
        )
        mode = ModeState(settings.approvals.mode)
        watch = FileWatch(root, assembly.snapshots(log), log)  # for /rewind: what the tools change
        loop = AgentLoop(
            provider=model.provider,
            tools=tools,
            context=engine,
            system=system,
            log=log,
            approver=_approver(settings, ask, tools, mode),
            tool_context=tool_context,
            hooks=hooks,
            max_iterations=settings.tools.max_iterations,
            retry=assembly.retry,
            redact=redactor.redact,
            history=history,
            summary_model=model.summary_model,
            watch=watch,
        )
        warnings = [WarningEvent(message=n) for n in notices] + ([model.warning] if model.warning else [])
        session = AgentSession(
            settings=settings,
            loop=loop,
            engine=engine,
            log=log,
            parts=assembly,
            model=model,
            warnings=warnings,
            redact=redactor.redact,
            extensions=servers,
            pins=pins,
            watch=watch,
            mode=mode,
        )
        hooks.follow(session)
    except BaseException:
        if servers is not None:
            servers.close()
        raise
    return session


def _latest_signed(root: Path, signer: SessionSigner) -> tuple[str, list[str]]:
    """The session --continue takes: the last one written that this user signed; and a line about
    the later ones passed over (planted by the repository, or older than signed sessions)."""
    passed: list[str] = []
    for session_id, meta in continue_candidates(root):
        if signer.signed(meta):
            return session_id, [_passed_over(passed)] if passed else []
        passed.append(session_id)
    if passed:
        raise ConfigError(f"no session of yours in {root} to continue: {_passed_over(passed)}")
    raise ConfigError(f"no earlier session in {root} to continue (sessions live in .transcripts/)")


def _passed_over(ids: list[str]) -> str:
    shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
    them = "it" if len(ids) == 1 else "one"
    return (
        f"--continue passed over {len(ids)} unsigned session{'s' if len(ids) > 1 else ''} ({shown}): not "
        f"started by you here, or older than signed sessions; to take {them}, agent --resume ID in the REPL"
    )


def _approver(settings: Settings, ask: Asker | None, tools: ToolRegistry, mode: ModeState) -> Approver:
    """The approval mode first (agent.modes), then the user's answers, or headless the allow-list."""
    allow = settings.approvals.allow
    inner: Approver
    if ask is None:
        inner = HeadlessApprover(allow, approval_of=tools.approval)
    else:
        inner = InteractiveApprover(ask, allow, approval_of=tools.approval)
    return ModalApprover(inner, mode, approval_of=tools.approval, effect_of=tools.effect)


class Assembly:
    """The parts a session needs, made the same way at start-up and on /model or /resume."""

    def __init__(
        self,
        settings: Settings,
        hooks: Hooks,
        redactor: Redactor,
        make_provider: ProviderFactory | None,
        frame: Callable[[], Frame],
        *,
        signer: SessionSigner | None = None,
        ask: Asker | None = None,
    ) -> None:
        self.settings = settings
        self._frame = frame  # the frame as it stands: extension tools join it once they are found
        self.signer = signer or SessionSigner(None)
        self._ask = ask
        self.retry = RetryPolicy(max_retries=settings.provider.max_retries)
        self._hooks = hooks
        self._redactor = redactor
        self._make_provider = make_provider
        self._choices: dict[str, ModelChoice] = {}  # each model resolved once, by name
        self._said: set[str] = set()  # one-line warnings already said this session

    def meta(self, model: str, *, new: bool = False) -> dict[str, str]:
        """The session log's meta record: who ran it, with what; `new`: signed as the user's."""
        pset = self.settings.provider
        root = str(self.settings.project_root)
        frame = self._frame().digest()
        meta = {"provider": pset.name, "model": model, "cwd": root, "version": __version__, "frame": frame}
        signature = self.signer.new_signature() if new else None
        return {**meta, SIGNATURE_KEY: signature} if signature else meta

    def _choice(self, model: str) -> ModelChoice:
        choice = self._choices.get(model)
        if choice is None:
            choice = resolve_model(self.settings.provider, model)
            self._choices[model] = self._choices[choice.name] = choice
        return choice

    def for_model(self, model: str) -> ModelParts:
        """The parts for `model` (empty: the provider's default model), and its summary writer.

        Raises ConfigError when `context.summary_model` names no model this provider serves."""
        choice = self._choice(model)
        writer = resolve_writer(self.settings.provider, self.settings.context.summary_model, choice)
        provider = self._provider(choice)
        summarize: ProviderSummarizer | NativeSummarizer
        summarize = self._summarizer(provider if writer is choice else self._provider(writer), writer, choice)
        native_warning = None
        if self.settings.context.summarizer == "native":
            summarize, native_warning = self._native(summarize, provider, choice)
        asked = None
        if choice.info is None and not self.settings.context.context_window:
            asked = query_limits(replace(self.settings.provider, model=choice.name), choice.name)
        window, max_output, warning = model_limits(self.settings, choice, asked=asked)
        if writer is not choice and writer.info is not None and writer.info.lifecycle == "deprecated":
            note = f"summary_model {_lifecycle_note(writer.info)}"
            warning = WarningEvent(message=f"{warning.message}; {note}" if warning else note)
        if native_warning is not None and native_warning not in self._said:  # said once
            self._said.add(native_warning)
            warning = WarningEvent(
                message=f"{warning.message}; {native_warning}" if warning else native_warning
            )
        counter = self.counter(choice.name)
        return ModelParts(
            choice.name, provider, counter, summarize, window, max_output, warning, summary_model=writer.name
        )

    def _provider(self, choice: ModelChoice) -> Provider:
        pset = replace(self.settings.provider, model=choice.name)
        made = self._make_provider
        return create_provider(pset, choice) if made is None else made(pset)

    def _summarizer(self, provider: Provider, writer: ModelChoice, model: ModelChoice) -> ProviderSummarizer:
        """The summary call, through `provider` to `writer`: sized for the writer when it is not `model`."""
        limits = None
        if writer is not model and writer.info is not None:  # resolve_writer admits table models only
            info = writer.info
            window = info.input_limit
            reply = output_for_window(min(info.max_output, MAX_OUTPUT_CAP), window)
            budget = compute_thresholds(self.settings.context, window, reply).budget
            counter = self.counter(writer.name) if writer.tokenizer != model.tokenizer else None
            limits = Writer(budget=budget, max_output=info.max_output, counter=counter)
        return ProviderSummarizer(
            provider,
            # A summary retries a transient error at most twice: the digest is its fallback.
            policy=replace(self.retry, max_retries=min(self.retry.max_retries, SUMMARY_RETRIES)),
            timeout=self.settings.context.summarize_timeout,
            on_request=self._hooks.on_pre_request,
            writer=limits,
        )

    def _native(
        self, ordinary: ProviderSummarizer, provider: Provider, choice: ModelChoice
    ) -> tuple[ProviderSummarizer | NativeSummarizer, str | None]:
        """The provider's own compaction as the summary call, where `choice` has one (else why not)."""
        pset = replace(self.settings.provider, model=choice.name)
        gap = native_compaction_gap(pset.name, wire_for(pset), choice.name)
        return choose_summarizer(ordinary, provider, gap, lambda p: self._summarizer(p, choice, choice))

    def counter(self, model: str) -> Counter:
        return TokenCounter(model, self._choice(model).tokenizer)

    def reopen(self, session_id: str, model: str) -> tuple[SessionLog, list[Message]]:
        """Open an earlier session for appending, as its one writer; the repaired history.

        The log gains a meta record only when who resumes it changed (another model,
        version or frame), and a checkpoint only when the history sent next differs from
        what the log already replays to: twenty `--continue`s of an unchanged session add
        nothing but their own messages.
        """
        root = self.settings.project_root
        log = SessionLog.open(root, session_id, redactor=self._redactor)  # the lock first, then read
        try:
            loaded = load_session(root, session_id)
            adopt = not self.signer.signed(loaded.meta)
            if adopt:
                self._accept_unsigned(session_id)
            history = list(loaded.messages)
            if loaded.meta.get("frame") != self._frame().digest():
                # Another system prompt (a new day in it) or other tools: no thinking block matches now.
                history = strip_thinking(history, 0)
            meta = self.meta(model)
            if adopt:  # the user accepted it: from now on it is theirs, --continue included
                log.log_meta(self.meta(model, new=True))
            elif any(loaded.meta.get(k) != v for k, v in meta.items()):
                log.log_meta(meta)
            if history != loaded.logged:
                log.log_history(history, "resume")
        except BaseException:
            log.close()
            raise
        return log, history

    def _accept_unsigned(self, session_id: str) -> None:
        """A session this user's key did not sign: ask in the REPL, refuse with how to accept else."""
        why = (
            f"session {session_id} was not started by you here (a repository may have planted it, "
            "or it is older than signed sessions)"
        )
        if self._ask is None:
            raise ConfigError(
                f"{why}; read it with `agent transcripts show {session_id}`, then accept it by "
                f"resuming it in the REPL: agent --resume {session_id}"
            )
        question = f"{why}; its messages would be sent as the conversation so far. Resume it?"
        if self._ask(RESUME_UNSIGNED, {"question": question, "session": session_id}, None) not in (
            "yes",
            "always",
        ):
            raise ConfigError(f"{why}; not resumed")

    def archive(self, log: SessionLog) -> Archive:
        return Archive(log.dir, redactor=self._redactor, searcher=Recall.spec.name)

    def snapshots(self, log: SessionLog) -> SnapshotStore:
        return SnapshotStore(log.dir, redactor=self._redactor)


_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSW|CREDENTIAL|AUTH|PRIVATE|DSN", re.IGNORECASE)
_NOT_SECRET_NAME = re.compile(r"_(SOCK|PATH|FILE|DIR|HOME|URL|HOST|PORT)$", re.IGNORECASE)


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names say they are secrets (AWS_SECRET_ACCESS_KEY,
    GITHUB_TOKEN, DB_PASSWORD ...): a tool printing the environment must not put them on disk."""
    return [
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name)
        and not _NOT_SECRET_NAME.search(name)
        and len(value) >= 8
        and not value.startswith(("/", "~"))
    ]


def model_limits(
    settings: Settings, model: ModelChoice, *, asked: tuple[int, int] | None = None
) -> tuple[int, int, WarningEvent | None]:
    """(context window, max output tokens, a warning) for `model` under these settings.

    The window comes from the config or flag, else the model table, else what
    the provider's Models API said (`asked`), else the model's family, else a
    conservative default with a warning. Replies may take the model's max
    output (capped at 32k) but never more than a quarter of a small window.
    A retired or deprecated model, or an effort it does not take, gets a warning.
    """
    info = model.info
    known = (info.input_limit, info.max_output) if info else asked or family_limits(model.name)
    notes = [_lifecycle_note(info)] if info else []
    if settings.context.context_window:
        window = settings.context.context_window
    elif known is not None:
        window = known[0]
    else:
        window = UNKNOWN_WINDOW
        notes.append(
            f"unknown model {model.name!r}: assuming a {UNKNOWN_WINDOW:,}-token window; "
            "set --context-window or context.context_window"
        )
    effort = settings.provider.effort
    if info is not None and effort and effort not in info.accepts.efforts:
        takes = ", ".join(info.accepts.efforts) or "none"
        notes.append(f"{model.name} does not take effort {effort!r} (it takes: {takes}); its default is used")
    max_output = settings.provider.max_output_tokens or min(known[1] if known else 8192, MAX_OUTPUT_CAP)
    text = "; ".join(n for n in notes if n)
    return window, output_for_window(max_output, window), WarningEvent(message=text) if text else None


def _lifecycle_note(info: ModelInfo) -> str:
    if info.lifecycle == "retired":
        return f"{info.name} was retired on {info.shutdown}; its requests fail (try {info.replacement})"
    if info.lifecycle == "deprecated":
        return f"{info.name} shuts down on {info.shutdown} (its replacement: {info.replacement})"
    return ""

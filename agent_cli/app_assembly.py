"""How a session's parts are made: at start-up, and again on /model or /resume.

    Assembly(settings, hooks, redactor, make_provider, frame).for_model(name) -> ModelParts

For a model: its provider, its token counter, the summary call (through the model that writes the
summaries, sized for it), the window and output size (`model_limits`) and a warning to say once.
For a session: its log reopened as its one writer (an unsigned one accepted or refused), its
archive and its file snapshots. `open_session` (app.py) uses it for the first parts; the session
asks it for the rest (session_parts.Parts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agent_cli import __version__
from agent_cli.agent.approvals import RESUME_UNSIGNED, Asker
from agent_cli.agent.hooks import Hooks
from agent_cli.agent.native_summary import NativeSummarizer, choose_summarizer
from agent_cli.agent.summary_call import ProviderSummarizer, Writer
from agent_cli.config.settings import ProviderSettings, Settings
from agent_cli.context.protocol import Frame
from agent_cli.context.thresholds import Counter, compute_thresholds, output_for_window
from agent_cli.core.errors import ConfigError
from agent_cli.core.events import WarningEvent
from agent_cli.core.messages import Message
from agent_cli.core.thinking import strip_thinking
from agent_cli.providers.base import Provider
from agent_cli.providers.factory import create_provider, query_limits
from agent_cli.providers.model_info import cache_price
from agent_cli.providers.model_names import family_limits
from agent_cli.providers.models import UNKNOWN_WINDOW, ModelInfo
from agent_cli.providers.native_support import native_compaction_gap
from agent_cli.providers.registry import wire_for
from agent_cli.providers.resolve import ModelChoice, resolve_model, resolve_writer
from agent_cli.providers.retry import RetryPolicy
from agent_cli.session_parts import ModelParts
from agent_cli.store.archive import Archive
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import load_session
from agent_cli.store.signing import SIGNATURE_KEY, SessionSigner
from agent_cli.store.snapshots import SnapshotStore
from agent_cli.tokens.counter import FrameMemory, TokenCounter
from agent_cli.tools.context_tools import Recall

__all__ = ["MAX_OUTPUT_CAP", "Assembly", "ProviderFactory", "model_limits"]

MAX_OUTPUT_CAP = 32_000
SUMMARY_RETRIES = 2

# The test seam for providers: a function of the provider settings, their model resolved.
ProviderFactory = Callable[[ProviderSettings], Provider]


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
        frames: FrameMemory | None = None,
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
        self._frames = frames  # frames' counts kept between runs (store/frame_counts.py)

    def meta(self, model: str, *, signed_as: str | None = None) -> dict[str, str]:
        """The session log's meta record: who ran it, with what; `signed_as`: signed as the user's
        session of that id in this project."""
        pset = self.settings.provider
        root = str(self.settings.project_root)
        frame = self._frame().digest()
        meta = {"provider": pset.name, "model": model, "cwd": root, "version": __version__, "frame": frame}
        signature = (
            None if signed_as is None else self.signer.new_signature(signed_as, self.settings.project_root)
        )
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
        # The one place the engine's cache price is chosen: the wire this session speaks, the model.
        price = cache_price(wire_for(replace(self.settings.provider, model=choice.name)), choice.info)
        return ModelParts(
            choice.name, provider, counter, summarize, window, max_output, warning,
            summary_model=writer.name, images=choice.accepts.images, cache_price=price,
        )

    def _provider(self, choice: ModelChoice) -> Provider:
        pset = replace(self.settings.provider, model=choice.name)
        made = self._make_provider
        search = self.settings.web.search
        return create_provider(pset, choice, web_search=search) if made is None else made(pset)

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
        return TokenCounter(model, self._choice(model).tokenizer, frames=self._frames)

    def reopen(self, session_id: str, model: str) -> tuple[SessionLog, list[Message], tuple[str, ...]]:
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
            adopt = not self.signer.signed(loaded.meta, session_id, root)
            if adopt:
                self._accept_unsigned(session_id)
            history = list(loaded.messages)
            if loaded.meta.get("frame") != self._frame().digest():
                # Another system prompt (a new day in it) or other tools: no thinking block matches now.
                history = strip_thinking(history, 0)
            meta = self.meta(model)
            if adopt:  # the user accepted it: from now on it is theirs, --continue included
                log.log_meta(self.meta(model, signed_as=session_id))
            elif any(loaded.meta.get(k) != v for k, v in meta.items()):
                log.log_meta(meta)
            if history != loaded.logged:
                log.log_history(history, "resume")
        except BaseException:
            log.close()
            raise
        return log, history, loaded.notes

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

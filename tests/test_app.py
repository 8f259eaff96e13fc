"""Building a session from settings: resume keeps the provider's count, /model retargets the engine."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from agent_cli.app import LATEST, open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.config.settings import ProviderSettings, Settings
from agent_cli.context.engine_state import CompactionState
from agent_cli.context.summary_request import COMPACTION_TAG
from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent, UsageEvent
from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.signing import SIGNATURE_KEY, SessionSigner
from agent_cli.testing.scripted import ScriptedProvider, Step, say
from agent_cli.tokens.counter import TokenCounter

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test-wiring-0000", "HOME": "/nonexistent-home"}


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    dirs = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state")}
    return {**ENV, **dirs, **more}


def _signed(env: dict[str, str], model: str, project: Path) -> Callable[[str], dict[str, str]]:
    """A meta record as this user's agent writes it (signed), for a log made by hand
    in `project` (a function of the new session's id, which the signature names)."""
    signer = SessionSigner.for_user(env)

    def meta(session_id: str) -> dict[str, str]:
        signature = signer.new_signature(session_id, project)
        assert signature is not None
        return {"model": model, SIGNATURE_KEY: signature}

    return meta


def test_a_resumed_session_counts_from_the_last_report(tmp_path: Path) -> None:
    env = _env(tmp_path)
    log = SessionLog.create(tmp_path, redactor=Redactor(), meta=_signed(env, "claude-sonnet-4-5", tmp_path))
    asked = Message.user("what is in a.py? " + "context " * 2_000)
    answered = Message.assistant("a.py defines add().")
    log.log_message(asked)
    log.log_message(answered)
    reported = Usage(input_tokens=50_000, output_tokens=9)
    log.log_event(
        UsageEvent(model="claude-sonnet-4-5", usage=reported, context_tokens=50_000, context_window=200_000)
    )
    log.close()
    settings = load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-4-5"), cwd=tmp_path)
    session = open_session(settings, env=env, resume=LATEST)
    assert [m.id for m in session.history] == [asked.id, answered.id]
    # A local count of the whole history would be about 2.5k tokens; anchored on the report for the
    # prefix, only the short reply after it is counted locally.
    tail = TokenCounter("claude-sonnet-4-5", tokenizer_for("claude-sonnet-4-5", "anthropic")).count_message(
        answered
    )
    assert 50_000 < session.context_tokens() <= 50_000 + 2 * tail
    session.close()


def test_switching_model_retargets_window_output_and_counter(tmp_path: Path) -> None:
    env = _env(tmp_path, OPENAI_API_KEY="sk-test-wiring-0000")
    settings = load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-4-5"), cwd=tmp_path)
    made: list[str | None] = []

    def provider(pset):  # type: ignore[no-untyped-def]
        made.append(pset.model)
        return ScriptedProvider([], model=pset.model or "")

    session = open_session(settings, env=env, make_provider=provider)
    assert session.window == 200_000
    warning = session.switch_model("claude-haiku-3-5-unknown-xyz")
    assert warning is not None and session.window == 32_000 and session.thresholds.window == 32_000
    assert session.max_output <= 32_000 // 4
    assert made == ["claude-sonnet-4-5", "claude-haiku-3-5-unknown-xyz"]
    session.close()


def _session(tmp_path: Path, script: list[Step] | None = None):  # type: ignore[no-untyped-def]
    env = _env(tmp_path)
    settings = load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-4-6"), cwd=tmp_path)
    make = lambda p: ScriptedProvider(list(script or []), model=p.model or "")  # noqa: E731 - a one-line factory
    return open_session(settings, env=env, make_provider=make)


def test_clear_turns_automatic_compaction_and_the_summarizer_back_on(tmp_path: Path) -> None:
    session = _session(tmp_path)
    engine = session.engine
    engine.stop_automatic()  # as the loop guard leaves it
    assert not session.breakdown().auto_compact and engine.state != CompactionState()
    session.clear()
    assert session.breakdown().auto_compact and engine.state == CompactionState()
    session.close()


def test_resume_takes_the_models_own_output_limit_not_one_learned_in_the_old_session(tmp_path: Path) -> None:
    meta = _signed(_env(tmp_path), "claude-sonnet-4-6", tmp_path)
    other = SessionLog.create(tmp_path, redactor=Redactor(), meta=meta)
    other.log_message(Message.user("earlier"))
    other.close()
    # The provider refuses the first request as too long for a window of 20,000, then answers.
    session = _session(tmp_path, [ContextOverflowError("too long", tokens=40_000, limit=20_000), say("ok")])
    full = session.max_output
    list(session.run("x " * 30_000))
    assert session.max_output < full  # learned from the error: this session's provider is smaller
    # The toolbar (the engine's lines) and /model (the session's window) say the same window.
    assert session.window == session.thresholds.window == 20_000
    session.resume(other.id)
    assert session.max_output == full and session.thresholds.window == session.window > 20_000
    session.close()


def test_an_unknown_claude_model_asks_the_models_api_then_falls_back_to_its_family(tmp_path: Path) -> None:
    from agent_cli.testing.fakeserver import FakeModelServer

    with FakeModelServer(models={"claude-opus-6": (400_000, 64_000)}) as server:
        env = _env(tmp_path, ANTHROPIC_BASE_URL=server.anthropic_base_url)
        for model, window in (("claude-opus-6", 400_000), ("claude-sonnet-6", 1_000_000)):
            settings = load_settings(config_path=None, env=env, flags=Flags(model=model), cwd=tmp_path)
            session = open_session(settings, env=env)
            assert session.window == window and not session.warnings  # the family's, not 32k
            session.close()
        asked = [r.path for r in server.model_lookups]
        assert asked == ["/v1/models/claude-opus-6", "/v1/models/claude-sonnet-6"]


def test_secret_env_values_take_a_dsn_and_leave_paths_and_short_values() -> None:
    from agent_cli.app import secret_env_values

    env = {
        "SENTRY_DSN": "https://abcdef0123456789@o1.ingest.sentry.io/42",
        "GITHUB_TOKEN": "ghp_not_a_real_token_but_long_enough",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
        "DB_PASSWORD": "short",
        "EDITOR": "vim-with-a-long-name",
    }
    assert sorted(secret_env_values(env)) == sorted([env["SENTRY_DSN"], env["GITHUB_TOKEN"]])


def test_the_engine_weighs_the_sessions_provider_and_model_cache_price(tmp_path: Path) -> None:
    """Issue 37, item 2: the engine is built with the price of the cache the session's wire and model
    have (`model_info.cache_price`, chosen in `Assembly.for_model`), and /model brings the new one."""
    env = _env(tmp_path, OPENAI_API_KEY="sk-test-wiring-0000")
    flags = Flags(provider="openai", model="gpt-6.2-sol")
    settings = load_settings(config_path=None, env=env, flags=flags, cwd=tmp_path)
    make = lambda p: ScriptedProvider([], model=p.model or "")  # noqa: E731 - a one-line factory
    session = open_session(settings, env=env, make_provider=make)
    price = session.engine.price
    assert (price.read, price.write, price.marks) == (0.05, 1.25, False)  # OpenAI's automatic cache
    session.switch_model("gpt-5.6-sol")  # before the write price: new tokens at the input price
    assert (session.engine.price.read, session.engine.price.write) == (0.1, 1.0)
    session.close()
    anthropic = open_session(
        load_settings(config_path=None, env=env, flags=Flags(model="claude-sonnet-5-5"), cwd=tmp_path),
        env=env,
        make_provider=make,
    )
    assert anthropic.engine.price.marks and anthropic.engine.price.read == 0.1  # breakpoints
    anthropic.close()


def is_summary(request: Request) -> bool:
    last = request.messages[-1].text if request.messages else ""
    return request.options.tool_choice == "none" or COMPACTION_TAG in last


RECORD = "RECORD-OF-THE-MODEL"


class Models:
    """Scripted providers for each model a test's sessions talk to, each request kept by model
    (`asked`); a summary call waits until `release` is set, then answers with the model's record."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked: dict[str, list[Request]] = {}

    def answer(self, request: Request) -> Completion:
        if is_summary(request):
            self.release.wait(60)
            return say(f"## Done\n{RECORD}: the notes were read.")
        return say("Noted.")

    def make(self, pset: ProviderSettings) -> ScriptedProvider:
        provider = ScriptedProvider([self.answer] * 200, model=pset.model or "")
        self.asked[provider.model] = provider.requests
        return provider


def end_owing(settings: Settings, env: dict[str, str], models: Models) -> None:
    """A run (32k window) that ends while a digest stands in, its record not come: owed in the log."""
    first = open_session(settings, env=env, make_provider=models.make)
    try:
        for n in range(40):
            events = list(first.run(f"note {n}: " + f"fact {n} " * 1_500))
            if any(isinstance(e, CompactEvent) and e.stand_in for e in events):
                break
        else:
            raise AssertionError("no digest stood in")
        list(first.end())
    finally:
        first.close()
        models.release.set()  # (the first run's call: its agent has gone)


def test_a_record_owed_across_runs_is_made_by_the_model_switched_to_before_its_first_request(
    tmp_path: Path,
) -> None:
    """/model right after --continue, while the log owes a record: the first request carries the
    record, written by the new model. Before the fix the switch forgot it and the digest stayed."""
    env = _env(tmp_path)
    flags = Flags(model="claude-sonnet-4-6", context_window=32_000)
    settings = load_settings(config_path=None, env=env, flags=flags, cwd=tmp_path)
    models = Models()
    end_owing(settings, env, models)
    again = open_session(settings, env=env, resume=LATEST, make_provider=models.make)
    assert RECORD not in again.history[0].text  # the digest leads, its record owed
    again.switch_model("claude-opus-4-6")
    list(again.run("go on"))
    again.close()
    opus = models.asked["claude-opus-4-6"]
    assert [is_summary(q) for q in opus[:2]] == [True, False]  # the record first, by the new model
    assert RECORD in opus[1].messages[0].text

"""context.summary_model: another model of the same provider writes the summaries.

The setting is read from files, env and `--summary-model`; a name the provider cannot serve is one
config line (exit 2); the summary request goes to the writer, made valid for it (no thinking bound
to the session's model, its own output limit, sized for its window and tokens) while the turns stay
on the session's model; /cost attributes the summary call to the writer; /model keeps them apart
or together as configured. The same through the real SDKs against the fake is in
test_summary_writer_live.py.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_cli.app import LATEST, open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ConfigError
from agent_cli.core.events import UsageEvent
from agent_cli.core.messages import Message, TextBlock, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.core.thought_blocks import ThinkingBlock
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.providers.models import lookup
from agent_cli.providers.resolve import resolve_model, resolve_writer
from agent_cli.session import AgentSession
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.signing import SIGNATURE_KEY, SessionSigner
from agent_cli.testing.scripted import ScriptedProvider
from agent_cli.tokens.counter import TokenCounter
from agent_cli.ui.reports import cost_rows
from tests.e2e import agent_cmd, agent_env

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test-writer-0000", "OPENAI_API_KEY": "sk-test-writer-0000"}
RECORD = "## Goal and requests\nkeep going\n## Work state\nDone: the survey. Next step: go on."
SUMMARY_USAGE = Usage(input_tokens=3_000, output_tokens=400)


def _env(tmp_path: Path) -> dict[str, str]:
    return {**ENV, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state")}


def _summary(request: Request) -> Completion:
    return Completion(Message.assistant(RECORD), "end_turn", SUMMARY_USAGE)


def _thinking_reply(request: Request) -> Completion:
    blocks = (ThinkingBlock("", "sig-of-the-session-model"), TextBlock("a.py defines add()."))
    return Completion(Message("assistant", blocks), "end_turn", Usage(5_000, 50))


@dataclass
class Providers:
    """The test seam for providers: one scripted provider per model, each answering as it is asked."""

    made: list[str] = field(default_factory=list)
    by_model: dict[str, ScriptedProvider] = field(default_factory=dict)

    def __call__(self, pset: ProviderSettings) -> ScriptedProvider:
        self.made.append(pset.model)
        provider = self.by_model.setdefault(
            pset.model, ScriptedProvider([], name=pset.name, model=pset.model)
        )
        return provider

    def script(self, model: str, *steps: object) -> None:
        self.by_model.setdefault(model, ScriptedProvider([], model=model)).script.extend(steps)  # type: ignore[arg-type]


def _open(tmp_path: Path, providers: Providers, *, model: str, writer: str | None) -> AgentSession:
    env = _env(tmp_path)
    flags = Flags(model=model, summary_model=writer)
    settings = load_settings(config_path=None, env=env, flags=flags, cwd=tmp_path)
    return open_session(settings, env=env, make_provider=providers)


# ---- the setting ---------------------------------------------------------------------------------


def test_the_setting_comes_from_the_file_and_the_flag_overrides_it(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text('[context]\nsummary_model = "claude-haiku-5-5"\n')
    env = _env(tmp_path)
    from_file = load_settings(config_path=config, env=env, flags=Flags(), cwd=tmp_path)
    assert from_file.context.summary_model == "claude-haiku-5-5"
    flagged = load_settings(
        config_path=config, env=env, flags=Flags(summary_model="claude-opus-5-5"), cwd=tmp_path
    )
    assert flagged.context.summary_model == "claude-opus-5-5"
    assert load_settings(config_path=None, env=env, flags=Flags(), cwd=tmp_path).context.summary_model == ""


def test_another_provider_on_the_command_line_drops_the_files_writer(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text('[provider]\nname = "anthropic"\n[context]\nsummary_model = "claude-haiku-5-5"\n')
    settings = load_settings(
        config_path=config, env=_env(tmp_path), flags=Flags(provider="openai"), cwd=tmp_path
    )
    assert settings.provider.name == "openai" and settings.context.summary_model == ""


def test_a_project_file_that_picks_the_writer_says_so(tmp_path: Path) -> None:
    (tmp_path / ".agent").mkdir()
    (tmp_path / ".agent" / "config.toml").write_text('[context]\nsummary_model = "claude-fable-5-1"\n')
    settings = load_settings(config_path=None, env=_env(tmp_path), flags=Flags(), cwd=tmp_path)
    assert any('summary_model "claude-fable-5-1"' in n for n in settings.notices), settings.notices


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("claude-haiku-9-9", "'claude-haiku-9-9' is not in the model table"),
        ("gpt-6-luna", "gpt-6-luna is an openai model and this session talks to the anthropic API"),
        ("claude-3-5-haiku", "was retired on 2026-02-19"),
    ],
)
def test_a_writer_the_provider_cannot_serve_is_one_config_line(name: str, said: str) -> None:
    pset = ProviderSettings(name="anthropic", model="claude-sonnet-5-5")
    with pytest.raises(ConfigError) as caught:
        resolve_writer(pset, name, resolve_model(pset))
    message = str(caught.value)
    assert message.startswith("config error: context.summary_model: ") and said in message, message
    assert "\n" not in message
    assert "retired" in message or "(such as claude-haiku-5-5)" in message  # what would do instead


def test_empty_or_the_same_model_spelled_otherwise_is_the_sessions_own() -> None:
    pset = ProviderSettings(name="anthropic", model="claude-sonnet-5-5")
    main = resolve_model(pset)
    assert resolve_writer(pset, "", main) is main
    assert resolve_writer(pset, "anthropic/claude-sonnet-5-5-20261001", main) is main
    writer = resolve_writer(pset, "claude-haiku-5-5", main)
    assert writer.name == "claude-haiku-5-5" and writer.info is lookup("claude-haiku-5-5")


def test_an_unknown_writer_exits_2_with_one_line(tmp_path: Path) -> None:
    env = agent_env(tmp_path / "home")
    env.update(ANTHROPIC_API_KEY="sk-ant-test-writer-0000")
    done = subprocess.run(
        agent_cmd("-p", "hello", "--summary-model", "claude-haiku-9-9"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "context.summary_model" in lines[0] and "Traceback" not in done.stderr
    assert "sk-ant-test-writer-0000" not in done.stderr + done.stdout


# ---- the summary request goes to the writer --------------------------------------------------------


def test_turns_go_to_the_session_model_and_the_summary_to_the_writer(tmp_path: Path) -> None:
    providers = Providers()
    providers.script("claude-sonnet-5-5", _thinking_reply)
    providers.script("claude-haiku-5-5", _summary)
    session = _open(tmp_path, providers, model="claude-sonnet-5-5", writer="claude-haiku-5-5")
    assert session.model == "claude-sonnet-5-5" and session.summary_model == "claude-haiku-5-5"
    list(session.run("what is in a.py?"))
    events = list(session.compact())
    main, writer = providers.by_model["claude-sonnet-5-5"], providers.by_model["claude-haiku-5-5"]
    assert len(main.requests) == 1 and len(writer.requests) == 1
    (sent,) = writer.requests
    # The main requests' tool_choice, so the cached conversation is read (the writer's own cache here).
    assert sent.options.tool_choice == main.requests[0].options.tool_choice
    assert sent.messages[-1].role == "user"
    # The session model's thinking is bound to it: the writer gets the text without it.
    assert not any(m.thoughts for m in sent.messages)
    assert any("a.py defines add()." in m.text for m in sent.messages)
    assert sent.max_tokens <= 128_000
    assert session.usage_log == (("claude-sonnet-5-5", Usage(5_000, 50)), ("claude-haiku-5-5", SUMMARY_USAGE))
    assert any(getattr(e, "usage", None) == SUMMARY_USAGE for e in events)
    rows = {r.model: r for r in cost_rows(session.usage_log)}
    assert list(rows) == ["claude-haiku-5-5", "claude-sonnet-5-5", "total"]
    assert rows["claude-haiku-5-5"].dollars == pytest.approx((3_000 * 0.10 + 400 * 0.50) / 1e6)
    session.close()


def test_without_the_setting_the_session_model_writes_and_is_billed(tmp_path: Path) -> None:
    providers = Providers()
    providers.script("claude-sonnet-5-5", _thinking_reply, _summary)
    session = _open(tmp_path, providers, model="claude-sonnet-5-5", writer=None)
    list(session.run("what is in a.py?"))
    list(session.compact())
    assert providers.made == ["claude-sonnet-5-5"]  # one provider: the summary reads its cached prefix
    summary = providers.by_model["claude-sonnet-5-5"].requests[1]
    assert any(m.thoughts for m in summary.messages)  # its own thinking goes back, byte for byte
    assert [m for m, _ in session.usage_log] == ["claude-sonnet-5-5", "claude-sonnet-5-5"]
    session.close()


def test_model_switches_keep_an_unset_writer_on_the_session_model(tmp_path: Path) -> None:
    providers = Providers()
    providers.script("claude-sonnet-5-5", _thinking_reply)
    providers.script("claude-opus-5-5", _summary)
    session = _open(tmp_path, providers, model="claude-sonnet-5-5", writer=None)
    list(session.run("what is in a.py?"))
    session.switch_model("claude-opus-5-5")
    assert session.summary_model == "claude-opus-5-5"
    list(session.compact())
    assert len(providers.by_model["claude-opus-5-5"].requests) == 1
    assert session.usage_log[-1] == ("claude-opus-5-5", SUMMARY_USAGE)
    session.close()


def test_model_switches_keep_a_configured_writer(tmp_path: Path) -> None:
    providers = Providers()
    providers.script("claude-sonnet-5-5", _thinking_reply)
    providers.script("claude-haiku-5-5", _summary)
    session = _open(tmp_path, providers, model="claude-sonnet-5-5", writer="claude-haiku-5-5")
    list(session.run("what is in a.py?"))
    session.switch_model("claude-opus-5-5")
    assert session.model == "claude-opus-5-5" and session.summary_model == "claude-haiku-5-5"
    list(session.compact())
    assert len(providers.by_model["claude-haiku-5-5"].requests) == 1
    assert "claude-opus-5-5" in providers.by_model and not providers.by_model["claude-opus-5-5"].requests
    assert session.usage_log[-1] == ("claude-haiku-5-5", SUMMARY_USAGE)
    # Switching to the writer itself: one model again, one provider for both.
    before = len(providers.made)
    session.switch_model("claude-haiku-5-5")
    assert session.summary_model == "claude-haiku-5-5" and providers.made[before:] == ["claude-haiku-5-5"]
    session.close()


# ---- a writer with a smaller window ---------------------------------------------------------------


def _signed(env: dict[str, str], model: str, project: Path) -> Callable[[str], dict[str, str]]:
    signer = SessionSigner.for_user(env)

    def meta(session_id: str) -> dict[str, str]:
        signature = signer.new_signature(session_id, project)
        assert signature is not None
        return {"model": model, SIGNATURE_KEY: signature}

    return meta


def _long_session(tmp_path: Path, model: str) -> None:
    """A logged conversation of about 400k tokens, 160 user messages of 7,000 characters each: too
    long for Haiku 4.5's window whole, and even rendered as text (6,000 characters a message)."""
    env = _env(tmp_path)
    log = SessionLog.create(tmp_path, redactor=Redactor(), meta=_signed(env, model, tmp_path))
    for n in range(160):
        log.log_message(Message.user(f"part {n}: " + " ".join(f"w{n}x{i}" for i in range(1_000))))
        log.log_message(Message.assistant(f"noted part {n}"))
    usage = Usage(400_000, 9)
    log.log_event(UsageEvent(model=model, usage=usage, context_tokens=400_000, context_window=1_000_000))
    log.close()


@pytest.mark.parametrize("writer", ["claude-haiku-4-5", None])
def test_a_writer_with_a_smaller_window_gets_requests_that_fit_it(tmp_path: Path, writer: str | None) -> None:
    model = "claude-sonnet-5-5"
    _long_session(tmp_path, model)
    providers = Providers()
    providers.script(writer or model, *[_summary] * 12)
    env = _env(tmp_path)
    flags = Flags(model=model, summary_model=writer)
    settings = load_settings(config_path=None, env=env, flags=flags, cwd=tmp_path)
    session = open_session(settings, env=env, resume=LATEST, make_provider=providers)
    list(session.compact())
    sent = providers.by_model[writer or model].requests
    if writer is None:  # the session model's window holds the whole span: one request
        assert len(sent) == 1
        session.close()
        return
    info = lookup(writer)
    assert info is not None
    # Haiku 4.5: a 200k window, its reply reserved (32k, capped) plus the margin: 164k of input.
    own = TokenCounter(writer, tokenizer_for(writer, "anthropic"))
    sizes = [own.count_request(r.system, r.tools, list(r.messages)) for r in sent]
    assert len(sent) >= 2, sizes
    assert all(size <= 200_000 - 32_000 - 4_000 for size in sizes), sizes
    assert all(r.max_tokens <= info.max_output for r in sent)
    session.close()

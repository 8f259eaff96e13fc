"""Build the configured Provider from `ProviderSettings`, with what the model table says it accepts.

The adapter module is imported only here, and only the one asked for, so
starting the agent never loads the other SDK. Settings arrive resolved:
`config/load.py` has already merged the config file, env vars and flags, so a
`None` api_key means the key is missing (this module reads no env vars).

Which wire: Anthropic speaks the Messages API. OpenAI speaks the Responses
API on OpenAI's own endpoint and Chat Completions when a base URL points
elsewhere (vLLM, llama.cpp, Ollama); `provider.wire` / `--wire` decides when
set. Thinking and effort are sent only as the model table allows
(`Accepts`); for a model the table does not know, only what the user set.
"""

from __future__ import annotations

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ConfigError
from agent_cli.providers.base import Provider
from agent_cli.providers.errors import API_KEY_ENV
from agent_cli.providers.model_info import Accepts
from agent_cli.providers.models import lookup

__all__ = ["DEFAULT_MODELS", "create_provider", "preload", "query_limits", "wire_for"]

DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-6.2-sol"}


def wire_for(settings: ProviderSettings) -> str:
    """ "messages" (Anthropic), "responses" or "chat" (OpenAI)."""
    if settings.name == "anthropic":
        return "messages"
    return settings.wire or ("chat" if settings.base_url else "responses")


def create_provider(settings: ProviderSettings, *, streaming: bool | None = None) -> Provider:
    """The adapter for `settings.name`; ConfigError when the key is missing or the name unknown.
    `streaming` (default: `settings.streaming`) asks for replies as they are written."""
    streaming = settings.streaming if streaming is None else streaming
    if settings.name not in DEFAULT_MODELS:
        known = ", ".join(sorted(DEFAULT_MODELS))
        raise ConfigError(f"unknown provider {settings.name!r}: use one of {known}")
    if not settings.api_key:
        env = API_KEY_ENV[settings.name]
        raise ConfigError(f"{env} is not set: export it or set provider.api_key in the config")
    model = settings.model or DEFAULT_MODELS[settings.name]
    info = lookup(model)
    accepts = info.accepts if info is not None else Accepts()
    effort = settings.effort if (info is None or settings.effort in accepts.efforts) else None
    key, url, timeout, stall = settings.api_key, settings.base_url, settings.timeout, settings.stall_timeout
    wire = wire_for(settings)
    if wire == "messages":
        from agent_cli.providers.anthropic import AnthropicProvider
        from agent_cli.providers.anthropic_wire import ThinkingConfig

        thinking = ThinkingConfig.for_model(accepts, effort=effort, display=settings.display)
        caching = settings.prompt_caching
        return AnthropicProvider(
            model,
            api_key=key,
            base_url=url,
            timeout=timeout,
            stall=stall,
            prompt_caching=caching,
            streaming=streaming,
            thinking=thinking,
        )
    if wire == "responses":
        from agent_cli.providers.openai_responses import OpenAIResponsesProvider
        from agent_cli.providers.responses_wire import ReasoningConfig

        reasons = bool(accepts.efforts) or effort is not None
        reasoning = ReasoningConfig(effort, settings.display != "omitted") if reasons else None
        return OpenAIResponsesProvider(
            model,
            api_key=key,
            base_url=url,
            timeout=timeout,
            stall=stall,
            streaming=streaming,
            reasoning=reasoning,
        )
    from agent_cli.providers.openai import OpenAIProvider

    return OpenAIProvider(
        model, api_key=key, base_url=url, timeout=timeout, stall=stall, streaming=streaming, effort=effort
    )


def query_limits(settings: ProviderSettings, model: str) -> tuple[int, int] | None:
    """(window, max output) from the provider's Models API, for a model the table does not know.

    Anthropic's answers with both; OpenAI's model objects carry neither, so None.
    """
    if settings.name != "anthropic" or not settings.api_key:
        return None
    from agent_cli.providers.anthropic import query_limits as ask

    return ask(model, api_key=settings.api_key, base_url=settings.base_url)


def preload(name: str) -> None:
    """Import the SDK behind provider `name` now (the REPL calls this in a background thread,
    so the first answer does not wait for the import)."""
    if name == "anthropic":
        from agent_cli.providers.anthropic import load_sdk
    elif name == "openai":
        from agent_cli.providers.openai import load_sdk
    else:
        return
    load_sdk()

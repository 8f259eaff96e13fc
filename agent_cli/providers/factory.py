"""Build the adapter for a resolved model: the registry's wire, the adapter that speaks it.

    create_provider(settings, resolve_model(settings, name)) -> Provider

The adapter module is imported only here, and only the one asked for, so
starting the agent never loads the other SDK (adapter modules import their SDK
lazily too). Settings arrive resolved: `config/load.py` has already merged the
config file, env vars and flags, so a `None` api_key means the key is missing
(this module reads no env vars). The model arrives resolved as well
(`resolve.ModelChoice`): its entry says what it accepts, so thinking and effort
are sent only as the model table allows; the adapter's `build` reads them.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ConfigError
from agent_cli.providers.base import Provider
from agent_cli.providers.registry import Wire, provider_entry, wire_for
from agent_cli.providers.resolve import ModelChoice
from agent_cli.providers.sdk_client import SDKProvider

__all__ = ["create_provider", "preload", "query_limits"]


def _messages() -> type[SDKProvider]:
    from agent_cli.providers.anthropic import AnthropicProvider

    return AnthropicProvider


def _responses() -> type[SDKProvider]:
    from agent_cli.providers.openai_responses import OpenAIResponsesProvider

    return OpenAIResponsesProvider


def _chat() -> type[SDKProvider]:
    from agent_cli.providers.openai import OpenAIProvider

    return OpenAIProvider


# The adapter that speaks each wire (a function each, so nothing is imported before it is asked for).
ADAPTERS: dict[Wire, Callable[[], type[SDKProvider]]] = {
    "messages": _messages,
    "responses": _responses,
    "chat": _chat,
    "chat-compatible": _chat,
}


def create_provider(
    settings: ProviderSettings, model: ModelChoice, *, streaming: bool | None = None, web_search: bool = False
) -> Provider:
    """The adapter for `settings.name` talking to `model`; ConfigError when the key is missing or
    the provider unknown. `streaming` (default: `settings.streaming`) asks for replies as they are
    written."""
    entry = provider_entry(settings.name)
    if not settings.api_key:
        raise ConfigError(f"{entry.api_key_env} is not set: export it or set provider.api_key in the config")
    wire = wire_for(settings)
    adapter = ADAPTERS[wire]()
    streams = settings.streaming if streaming is None else streaming
    return adapter.build(settings, model, wire=wire, streaming=streams, web_search=web_search)


def query_limits(settings: ProviderSettings, model: str) -> tuple[int, int] | None:
    """(window, max output) from the provider's Models API, for a model the table does not know.

    Anthropic's answers with both; OpenAI's model objects carry neither, so None."""
    return ADAPTERS[wire_for(settings)]().query_limits(settings, model)


def preload(name: str) -> None:
    """Import the SDK behind provider `name` now (the REPL calls this in a background thread,
    so the first answer does not wait for the import). An unknown name: nothing."""
    try:
        entry = provider_entry(name)
    except ConfigError:
        return
    own, _ = entry.wires[None]
    ADAPTERS[own]().load_sdk()

"""Build the configured Provider from `ProviderSettings`.

The adapter module is imported only here, and only the one asked for, so
starting the agent never loads the other SDK. Settings arrive resolved:
`config.py` has already merged the config file, env vars and flags, so a
`None` api_key means the key is missing (this module reads no env vars).
"""

from __future__ import annotations

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ConfigError
from agent_cli.providers.base import Provider
from agent_cli.providers.errors import API_KEY_ENV

__all__ = ["DEFAULT_MODELS", "create_provider", "preload"]

DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5"}


def create_provider(settings: ProviderSettings, *, streaming: bool = True) -> Provider:
    """The adapter for `settings.name`; ConfigError when the key is missing or the name unknown."""
    if settings.name not in DEFAULT_MODELS:
        known = ", ".join(sorted(DEFAULT_MODELS))
        raise ConfigError(f"unknown provider {settings.name!r}: use one of {known}")
    if not settings.api_key:
        env = API_KEY_ENV[settings.name]
        raise ConfigError(f"{env} is not set: export it or set provider.api_key in the config")
    model = settings.model or DEFAULT_MODELS[settings.name]
    if settings.name == "anthropic":
        from agent_cli.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            model,
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout,
            prompt_caching=settings.prompt_caching,
            streaming=streaming,
        )
    from agent_cli.providers.openai import OpenAIProvider

    return OpenAIProvider(
        model,
        api_key=settings.api_key,
        base_url=settings.base_url,
        timeout=settings.timeout,
        streaming=streaming,
    )


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

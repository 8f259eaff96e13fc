"""The model a session talks to, resolved once: its name, its table entry, the effort sent, its tokenizer.

The composition root calls `resolve_model` once per model it opens (at start-up and on `/model`)
and hands the `ModelChoice` to everything that needs to know the model: the factory builds the
adapter from it, the limits and the token counter read it. Nothing else applies the provider's
default model or looks the name up in the table again.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.config.settings import Effort, ProviderSettings
from agent_cli.providers.model_info import Accepts, ModelInfo
from agent_cli.providers.models import lookup, tokenizer_for
from agent_cli.providers.registry import provider_entry
from agent_cli.tokens.tokenizer import Tokenizer

__all__ = ["ModelChoice", "resolve_model"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """`info` is None for a model the table does not know; `effort` is what requests send: the
    setting, when the model takes it (for an unknown model, whatever the user set)."""

    name: str
    info: ModelInfo | None
    effort: Effort | None
    tokenizer: Tokenizer

    @property
    def accepts(self) -> Accepts:
        """What the model takes in a request; an unknown model: only the defaults (`Accepts()`)."""
        return self.info.accepts if self.info is not None else Accepts()


def resolve_model(settings: ProviderSettings, name: str = "") -> ModelChoice:
    """`name` (empty: `settings.model`, else the provider's default model) with what we know of it.

    Raises ConfigError for a provider the registry does not know."""
    model = name or settings.model or provider_entry(settings.name).default_model
    info = lookup(model)
    effort = settings.effort if (info is None or settings.effort in info.accepts.efforts) else None
    # The entry knows its model's tokenizer; an entry of another provider's model (a `gpt-` name
    # sent to Anthropic) is counted by the rules for the provider that serves it.
    served = info is not None and info.provider == settings.name
    tokenizer = info.tokenizer if info is not None and served else tokenizer_for(model, settings.name)
    return ModelChoice(model, info, effort, tokenizer)

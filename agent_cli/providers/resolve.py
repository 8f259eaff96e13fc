"""The model a session talks to, resolved once: its name, its table entry, the effort sent, its tokenizer.

The composition root calls `resolve_model` once per model it opens (at start-up and on `/model`)
and hands the `ModelChoice` to everything that needs to know the model: the factory builds the
adapter from it, the limits and the token counter read it. Nothing else applies the provider's
default model or looks the name up in the table again.

`resolve_writer` does the same for the model that writes the context engine's summaries
(`context.summary_model`): the session's own model when the setting is empty, else a model of the
table that the session's provider serves, since the writer uses the session's key and endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.config.schema import config_error
from agent_cli.config.settings import Effort, ProviderSettings
from agent_cli.providers.model_info import Accepts, ModelInfo
from agent_cli.providers.model_names import normalize, takes_images, tokenizer_for
from agent_cli.providers.models import lookup
from agent_cli.providers.registry import provider_entry
from agent_cli.tokens.tokenizer import Tokenizer

__all__ = ["SUMMARY_MODEL_KEY", "ModelChoice", "resolve_model", "resolve_writer"]

SUMMARY_MODEL_KEY = "context.summary_model"


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
        """What the model takes in a request; an unknown model: only the defaults (`Accepts()`), and
        images if its name is of a family that takes them (`model_names.takes_images`)."""
        return self.info.accepts if self.info is not None else Accepts(images=takes_images(self.name))


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


def resolve_writer(settings: ProviderSettings, name: str, main: ModelChoice) -> ModelChoice:
    """The model that writes summaries: `name`, or `main` (the session's model) when it is empty or
    names the same model.

    The writer is a model of the table (its limits and prices are needed to size its requests and to
    bill it) that this provider serves and that still answers. Raises ConfigError, one line, else."""
    if not name.strip() or normalize(name) == normalize(main.name):
        return main
    entry = provider_entry(settings.name)
    info = lookup(name)
    suggest = f" (such as {entry.small_model})" if entry.small_model else ""
    if info is None:
        raise config_error(
            SUMMARY_MODEL_KEY,
            f"{name!r} is not in the model table: name a {entry.name} model whose limits and prices "
            f"are known{suggest}, or leave it empty for the session's own model",
        )
    if info.provider != entry.name:
        raise config_error(
            SUMMARY_MODEL_KEY,
            f"{info.name} is an {info.provider} model and this session talks to the {entry.name} API "
            f"(the summaries go through the session's own key): name a {entry.name} model{suggest}",
        )
    if info.lifecycle == "retired":
        raise config_error(
            SUMMARY_MODEL_KEY,
            f"{info.name} was retired on {info.shutdown} and its requests fail (try {info.replacement})",
        )
    return resolve_model(settings, info.name)

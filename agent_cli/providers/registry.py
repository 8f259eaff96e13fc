"""The providers we talk to, each written once: its name, default model, API-key variable and wires.

A *wire* is one API's request and reply format, spoken by one adapter:

    messages         Anthropic's Messages API                         anthropic.py + anthropic_wire.py
    responses        OpenAI's Responses API                           openai_responses.py + responses_wire.py
    chat             OpenAI's Chat Completions, on OpenAI's endpoint  openai.py + chat_wire.py
    chat-compatible  Chat Completions as compatible servers take it   openai.py + chat_wire.py
                     (vLLM, llama.cpp, Ollama: the older field names)

Which wire a session speaks is the entry's `wires` table: the `provider.wire` setting (None when
unset) gives the wire on the provider's own endpoint and the wire at a base URL set elsewhere. A
setting the table has no row for takes the None row (Anthropic speaks only Messages).

This module is data: it imports no adapter and no SDK, so every layer may read it (the factory
maps each wire to its adapter). `config.settings.ProviderName` lists the same names for the
config file's checks, since config sits below providers and cannot read this table; a test holds
the two equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from agent_cli.config.settings import ProviderName, ProviderSettings
from agent_cli.config.settings import Wire as WireSetting
from agent_cli.core.errors import ConfigError

__all__ = ["ANTHROPIC", "OPENAI", "PROVIDERS", "ProviderEntry", "Wire", "provider_entry", "wire_for"]

Wire: TypeAlias = Literal["messages", "responses", "chat", "chat-compatible"]


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    """One provider. `wires`: `provider.wire` (None: unset) -> (on its own endpoint, at a base URL);
    `small_model`: its small fast model, the one to suggest for `context.summary_model`."""

    name: ProviderName
    default_model: str
    api_key_env: str
    wires: Mapping[WireSetting | None, tuple[Wire, Wire]]
    small_model: str = ""

    def spoken(self) -> tuple[Wire, ...]:
        """Every wire this provider may speak, in the table's order."""
        return tuple(dict.fromkeys(w for pair in self.wires.values() for w in pair))


ANTHROPIC = ProviderEntry(
    name="anthropic",
    default_model="claude-sonnet-5-5",
    api_key_env="ANTHROPIC_API_KEY",
    wires={None: ("messages", "messages")},
    small_model="claude-haiku-5-5",
)
# The Responses API on OpenAI's own endpoint; Chat Completions when a base URL points elsewhere.
OPENAI = ProviderEntry(
    name="openai",
    default_model="gpt-6.2-sol",
    api_key_env="OPENAI_API_KEY",
    wires={
        None: ("responses", "chat-compatible"),
        "responses": ("responses", "responses"),
        "chat": ("chat", "chat-compatible"),
    },
    small_model="gpt-6-luna",
)

PROVIDERS: dict[str, ProviderEntry] = {entry.name: entry for entry in (ANTHROPIC, OPENAI)}


def provider_entry(name: str) -> ProviderEntry:
    """The entry for provider `name`; ConfigError naming the known ones when there is none."""
    entry = PROVIDERS.get(name)
    if entry is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"unknown provider {name!r}: use one of {known}")
    return entry


def wire_for(settings: ProviderSettings) -> Wire:
    """The wire these settings speak (see the module docstring)."""
    wires = provider_entry(settings.name).wires
    own, elsewhere = wires.get(settings.wire, wires[None])
    return own if settings.base_url is None else elsewhere

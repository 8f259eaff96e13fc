"""Which models have a compaction of their own that `context.summarizer = "native"` can use (data).

Anthropic: the models the on-demand compaction pages list (the model table's
`ANTHROPIC_COMPACTION_MODELS`) under `supportedModels` (beta
`compact-2026-09-04`; platform.claude.com/docs/en/build-with-claude/compaction-keep-recent-turns and
.../compaction-background, read 2026-12-02). A dated snapshot of a listed model counts as the model.

OpenAI: `POST /v1/responses/compact` on the Responses wire (developers.openai.com/api/docs/guides/
compaction, read 2026-12-02). The guide names no model list; the SDK's `responses.compact` takes
every model `responses.create` does, so every OpenAI model of the table counts, on that wire only: a
compatible server behind Chat Completions (vLLM, llama.cpp) has no such endpoint.
"""

from __future__ import annotations

from agent_cli.providers.models import ANTHROPIC_COMPACTION_MODELS, lookup
from agent_cli.providers.registry import ANTHROPIC, OPENAI

__all__ = ["ANTHROPIC_COMPACTION_MODELS", "native_compaction_gap"]


def native_compaction_gap(provider: str, wire: str, model: str) -> str | None:
    """Why `model` cannot compact natively here (one phrase), or None when it can."""
    info = lookup(model)
    if provider == ANTHROPIC.name:
        name = info.name if info is not None else model
        if name in ANTHROPIC_COMPACTION_MODELS:
            return None
        return f"{model} is not among the models Anthropic's on-demand compaction supports"
    if provider == OPENAI.name:
        if wire != "responses":
            return "the Chat Completions wire has no compaction endpoint"
        if info is None or info.provider != OPENAI.name:
            return f"{model} is not an OpenAI model this table knows"
        return None
    return f"the {provider} provider has no compaction of its own"

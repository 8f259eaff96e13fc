"""The provider's own web search (`[web] search`): which model offers it, its tool, its blocks (data).

The search runs on the provider's servers inside one request: nothing runs here. Its blocks are kept
in the history (`core.messages.ServerToolBlock`) and go back verbatim, as both APIs require.

Anthropic: the `web_search_20250305` server tool (basic search; the later versions add dynamic
filtering, which runs code on the provider's side), on the models its page lists (the model table's
`ANTHROPIC_SEARCH_MODELS`) under
`supportedModels` (platform.claude.com/docs/en/build-with-claude/tool-use/web-search-tool, read
2026-12-05). The reply carries `server_tool_use` (name `web_search`, `input.query`) and
`web_search_tool_result` blocks; `usage.server_tool_use.web_search_requests` counts the searches.

OpenAI: `{"type": "web_search"}` on the Responses wire (developers.openai.com/api/docs/guides/
tools-web-search, read 2026-12-05); the output carries `web_search_call` items (`action.query`). The
guide names no model list, so every OpenAI model of the table counts, on that wire only: Chat
Completions (and a compatible server behind it) gets no search tool.

Searches are billed per use by the provider; the model table holds no such price, so none is added
to the cost here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_cli.core.messages import Message, ServerToolBlock
from agent_cli.providers.models import ANTHROPIC_SEARCH_MODELS, lookup
from agent_cli.providers.registry import ANTHROPIC, OPENAI

__all__ = [
    "ANTHROPIC_SEARCH_BLOCKS",
    "ANTHROPIC_SEARCH_MODELS",
    "ANTHROPIC_SEARCH_TOOL",
    "OPENAI_SEARCH_TOOL",
    "server_block",
    "web_search_gap",
    "without_searches",
]

ANTHROPIC_SEARCH_TOOL: Mapping[str, Any] = {"type": "web_search_20250305", "name": "web_search"}
OPENAI_SEARCH_TOOL: Mapping[str, Any] = {"type": "web_search"}
ANTHROPIC_SEARCH_BLOCKS = ("server_tool_use", "web_search_tool_result")
OPENAI_SEARCH_ITEM = "web_search_call"


def web_search_gap(provider: str, wire: str, model: str) -> str | None:
    """Why `model` has no provider web search here (one phrase), or None when it has."""
    info = lookup(model)
    if provider == ANTHROPIC.name:
        name = info.name if info is not None else model
        if model in ANTHROPIC_SEARCH_MODELS or name in ANTHROPIC_SEARCH_MODELS:
            return None
        return f"{model} is not among the models Anthropic's web search tool lists"
    if provider == OPENAI.name:
        if wire != "responses":
            return "the Chat Completions wire has no provider web search"
        if info is None or info.provider != OPENAI.name:
            return f"{model} is not an OpenAI model this table knows"
        return None
    return f"the {provider} provider has no web search of its own"


def without_searches(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """`messages` without the provider's search blocks: for a request that does not offer the tool
    (`[web] search = false` on resume, a model switched to without it), which has none to pair
    them with; the answers built on them stay."""
    if not any(isinstance(b, ServerToolBlock) for m in messages for b in m.content):
        return messages
    return tuple(
        m.replace(b for b in m.content if not isinstance(b, ServerToolBlock))
        if any(isinstance(b, ServerToolBlock) for b in m.content)
        else m
        for m in messages
    )


def _query(item: Mapping[str, Any]) -> str:
    source = item.get("input") if item.get("type") == "server_tool_use" else item.get("action")
    query = source.get("query") if isinstance(source, Mapping) else None
    return str(query) if query else ""


def server_block(provider: str, item: Mapping[str, Any]) -> ServerToolBlock | None:
    """The history block for a search block or item of a reply; None for any other block."""
    kind = item.get("type")
    if provider == ANTHROPIC.name and kind in ANTHROPIC_SEARCH_BLOCKS:
        pass
    elif not (provider == OPENAI.name and kind == OPENAI_SEARCH_ITEM):
        return None
    clean = {k: v for k, v in item.items() if not k.startswith("_")}  # an assembler's own keys
    return ServerToolBlock(provider, json.dumps(clean, separators=(",", ":")), _query(clean))

"""The provider's own web search, as the fake renders it: the blocks and items of a scripted search.

A reply's `searches` run only when the request offers the search tool (Anthropic's
`web_search_20250305` type, Responses' `{"type": "web_search"}`), as a real model can search only
then. Anthropic: a `server_tool_use` (name `web_search`, `input.query`) and its
`web_search_tool_result` (titles, URLs, encrypted content, page age), before the text, and
`usage.server_tool_use.web_search_requests`; Responses: a completed `web_search_call` item whose
`action` is the search.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["anthropic_blocks", "offers_search", "responses_items"]

JSON = dict[str, Any]


def offers_search(body: Mapping[str, Any]) -> bool:
    """The request offers the provider's web search tool."""
    for tool in body.get("tools") or []:
        kind = str(tool.get("type") or "") if isinstance(tool, Mapping) else ""
        if kind.startswith("web_search"):
            return True
    return False


def _results(query: str) -> list[JSON]:
    slug = "-".join(query.split())[:40] or "query"
    return [
        {
            "type": "web_search_result",
            "title": f"Result {n} for {query}",
            "url": f"https://example.org/{slug}/{n}",
            "encrypted_content": f"enc_{uuid.uuid4().hex}",
            "page_age": "April 30, 2026",
        }
        for n in (1, 2)
    ]


def anthropic_blocks(queries: tuple[str, ...] | list[str]) -> list[JSON]:
    found: list[JSON] = []
    for query in queries:
        use_id = f"srvtoolu_{uuid.uuid4().hex[:24]}"
        use = {"type": "server_tool_use", "id": use_id, "name": "web_search", "input": {"query": query}}
        found.append(use)
        found.append({"type": "web_search_tool_result", "tool_use_id": use_id, "content": _results(query)})
    return found


def responses_items(queries: tuple[str, ...] | list[str]) -> list[JSON]:
    return [
        {
            "id": f"ws_{uuid.uuid4().hex[:24]}",
            "type": "web_search_call",
            "status": "completed",
            "action": {"type": "search", "query": query},
        }
        for query in queries
    ]

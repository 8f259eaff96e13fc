"""What a prompt costs, and the simulated prompt cache.

Terms. A *unit* is one piece of a prompt in the order the API reads it as a prefix: a tool, a
system block, a message block, an input item (each API module's `units` lists them). A unit's
*text* is the part that costs tokens: a text block's text, a tool result's content, four fifths of
a replayed seal (a thinking signature, redacted data, encrypted reasoning: a seal carries five
characters per token of reasoning and the default counter reads four a token, so a replayed block
costs about what its reasoning cost), else the unit's JSON. A *breakpoint* is a unit that carries
`cache_control`.

Two caches. *Breakpoints*, like Anthropic's: a request writes its prefix up to each breakpoint,
and reads the longest cached prefix it starts with, at unit boundaries up to its last breakpoint.
*Automatic*, like OpenAI's: every request writes all its prefixes, and reads the longest one seen
before, when that is at least 1024 tokens. Both are per model, as the providers' are: a model reads
only what it cached itself. A prefix is known by the running hash of its units (seeded with the
model) without their cache_control marks, because moving a mark to a later block must not change
what an earlier prefix is.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any

from .binding import CHARS_PER_TOKEN
from .wire import JSON, blocks

__all__ = ["PromptCache", "prompt_text", "strip_cache_control", "unit_text"]

_SEALED = {"thinking": "signature", "redacted_thinking": "data", "reasoning": "encrypted_content"}
_AUTOMATIC_MINIMUM = 1024  # OpenAI caches prompts from this many tokens on


def strip_cache_control(value: Any) -> Any:
    """The value with every cache_control mark removed, at any depth."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def unit_text(unit: JSON) -> str:
    """The part of a block or tool that costs tokens."""
    if unit.get("type") == "text" or ("text" in unit and "type" not in unit):
        return str(unit.get("text", ""))
    if unit.get("type") == "tool_result":
        content = unit.get("content")
        return content if isinstance(content, str) else "".join(unit_text(b) for b in blocks(content))
    if unit.get("type") == "compaction" and "encrypted_content" in unit and "content" not in unit:
        unit = {"type": "reasoning", "encrypted_content": unit["encrypted_content"]}  # OpenAI's item
    elif unit.get("type") == "compaction":  # Anthropic's block: its summary; the rest is opaque metadata
        return str(unit.get("content") or "")
    field = _SEALED.get(str(unit.get("type")))
    if field is not None:
        sealed = str(unit.get(field) or "")
        return sealed[: len(sealed) * 4 // CHARS_PER_TOKEN]
    return json.dumps(strip_cache_control(unit), sort_keys=True)


def prompt_text(units: list[JSON]) -> str:
    """The text the prompt's token estimate is counted over."""
    return "".join(unit_text(u) for u in units)


class PromptCache:
    """The prefixes written so far; shared by all requests, safe across handler threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prefixes: set[str] = set()
        self._seen: set[str] = set()  # the automatic cache's prefixes

    def usage(
        self, units: list[JSON], counter: Callable[[str], int], model: str = ""
    ) -> tuple[int, int, int]:
        """(uncached input, cache read, cache write) for one request; writes its breakpoints (per
        model: another model reads nothing a first one cached, whatever the prefix)."""
        texts = [unit_text(u) for u in units]
        total = counter("".join(texts))
        breakpoints = [i for i, u in enumerate(units) if "cache_control" in u]
        if not breakpoints:
            return total, 0, 0
        hashes = _running_hashes(units, model)
        last = breakpoints[-1]
        with self._lock:
            hit = max((i for i in range(last + 1) if hashes[i] in self._prefixes), default=-1)
            self._prefixes.update(hashes[i] for i in breakpoints)
        read = counter("".join(texts[: hit + 1])) if hit >= 0 else 0
        write = counter("".join(texts[: last + 1])) - read
        return total - read - write, read, write

    def automatic(self, units: list[JSON], counter: Callable[[str], int], model: str) -> tuple[int, int, int]:
        """(uncached input, cache read, 0) for one request; remembers all its prefixes (per model)."""
        texts = [unit_text(u) for u in units]
        total = counter("".join(texts))
        hashes = _running_hashes(units, model)
        with self._lock:
            hit = max((i for i, h in enumerate(hashes) if h in self._seen), default=-1)
            self._seen.update(hashes)
        read = counter("".join(texts[: hit + 1])) if hit >= 0 else 0
        read = read if read >= _AUTOMATIC_MINIMUM else 0
        return total - read, read, 0

    def clear(self) -> None:
        with self._lock:
            self._prefixes.clear()
            self._seen.clear()


def _running_hashes(units: list[JSON], seed: str) -> list[str]:
    """The hash of each prefix, unit by unit."""
    hashes, running = [], hashlib.sha256(seed.encode())
    for unit in units:
        running.update(json.dumps(strip_cache_control(unit), sort_keys=True).encode())
        hashes.append(running.copy().hexdigest())
    return hashes

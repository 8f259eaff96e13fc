"""The model's reasoning as the providers return it: blocks carried back unchanged.

Anthropic's `thinking` (readable, or empty under display "omitted", and signed) and
`redacted_thinking` (encrypted), and the OpenAI Responses API's reasoning items (a summary we may
show, the encrypted reasoning passed back with `store=false`). Each is a frozen value with its
JSON (`to_json`; `core.messages.block_from_json` reads it back) and `text`, what a person may read
of it. What may be done to them in a history (stripped, kept) is `core/thinking.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["THOUGHT_TYPES", "ReasoningBlock", "RedactedThinkingBlock", "ThinkingBlock", "ThoughtBlock"]

JSON: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """The model's reasoning before its answer (Anthropic `thinking`), carried back unchanged.

    `thinking` is what the display setting lets us see (empty under "omitted");
    `signature` carries the reasoning itself and binds the block to the
    conversation before it, so nothing here may be edited.
    """

    thinking: str
    signature: str

    @property
    def text(self) -> str:
        return self.thinking

    def to_json(self) -> JSON:
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    """Reasoning the provider returned encrypted (Anthropic `redacted_thinking`), carried back unchanged."""

    data: str

    @property
    def text(self) -> str:
        return ""  # nothing readable: it is encrypted

    def to_json(self) -> JSON:
        return {"type": "redacted_thinking", "data": self.data}


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """A reasoning item of the OpenAI Responses API: its summary (what we may show) and the encrypted
    reasoning, passed back with `store=false` so the model keeps it between tool calls."""

    id: str
    encrypted_content: str
    summary: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n\n".join(self.summary)

    def to_json(self) -> JSON:
        return {
            "type": "reasoning",
            "id": self.id,
            "encrypted_content": self.encrypted_content,
            "summary": list(self.summary),
        }


ThoughtBlock: TypeAlias = ThinkingBlock | RedactedThinkingBlock | ReasoningBlock
THOUGHT_TYPES = (ThinkingBlock, RedactedThinkingBlock, ReasoningBlock)

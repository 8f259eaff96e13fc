"""What every provider adapter implements, in provider-neutral terms.

A provider turns a `Request` into a stream of `TextDelta`s ending in exactly
one `Completion` (the shapes are values, in `agent_cli.core.requests`). If the
stream dies before the `Completion`, the adapter raises a `TransientError` and
nothing of the half-received message is kept: the caller only ever adds
`Completion.message` to the history.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from agent_cli.core.requests import Request, StreamEvent

__all__ = ["Provider"]


class Provider(Protocol):
    """One model behind one API. Implementations live one per file in this package."""

    @property
    def name(self) -> str:
        """`anthropic` or `openai`."""
        ...

    @property
    def model(self) -> str: ...

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        """Send one request; yield deltas, then one Completion. Raises ProviderError subclasses."""
        ...

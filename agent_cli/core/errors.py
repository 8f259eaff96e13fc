"""The error tree. Every failure the user can see is one of these.

    AgentError                     base; `str()` is one actionable line
    ├── ConfigError                bad config file, flag or missing key (exit 2)
    └── ProviderError              a model request failed (exit 1 once retries are spent)
        ├── ContextOverflowError   the prompt is larger than the model's window
        ├── RateLimitError         429; `retry_after` from the server when given
        ├── OverloadedError        Anthropic 529 / overloaded_error
        ├── TransientError         5xx, connection dropped, stream cut short
        ├── AuthError              401 / 403: the key is missing or wrong
        └── FatalProviderError     anything else (400s that are not overflow, ...)
            └── ThinkingRejectedError  a thinking block no longer matches the conversation

Providers classify SDK exceptions into this tree exactly once, in their own
module. Tool failures never raise: they become error results the model reads.
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "AuthError",
    "ConfigError",
    "ContextOverflowError",
    "FatalProviderError",
    "OverloadedError",
    "ProviderError",
    "RateLimitError",
    "ThinkingRejectedError",
    "TransientError",
]


class AgentError(Exception):
    """Base of every error agent-cli raises on purpose."""


class ConfigError(AgentError):
    """Configuration or usage is wrong. The message names the file, line and key."""


class ProviderError(AgentError):
    """A request to the model provider failed."""

    retryable: bool = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class ContextOverflowError(ProviderError):
    """The prompt did not fit. `tokens` / `limit` are parsed from the error text when it gives them."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        tokens: int | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(message, status=status)
        self.tokens = tokens
        self.limit = limit


class RateLimitError(ProviderError):
    retryable = True


class OverloadedError(ProviderError):
    retryable = True


class TransientError(ProviderError):
    retryable = True


class AuthError(ProviderError):
    pass


class FatalProviderError(ProviderError):
    pass


class ThinkingRejectedError(FatalProviderError):
    """The provider refused a thinking block sent back (bound to a different conversation, or its
    signature invalid). The loop's answer: send the history once more without any thinking."""

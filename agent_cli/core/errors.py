"""The error tree. Every failure the user can see is one of these.

    AgentError                     base; `str()` is one actionable line
    ├── ConfigError                bad config file, flag or missing key (exit 2)
    ├── CommandError               a slash command cannot do what it was asked (`/unpin 9`, `/rewind 7`
    │                              of 3 prompts, a pins file it cannot write): one line, the session goes on
    ├── SessionBusyError           another agent is writing this session's log
    ├── SessionLogError            a record could not be written: the log keeps every whole record
    │   └── DiskFullError          ... because the disk is full (ENOSPC) or the quota used up (EDQUOT)
    └── ProviderError              a model request failed (exit 1 once retries are spent)
        ├── ContextOverflowError   the prompt is larger than the model's window
        ├── RateLimitError         429; `retry_after` from the server when given
        ├── OverloadedError        Anthropic 529 / overloaded_error
        ├── TransientError         5xx, connection dropped, stream cut short
        │   ├── UnreachableError   nothing answers at the address (one quick retry)
        │   └── StalledError       the stream went quiet past the read timeout (two retries)
        ├── AuthError              401 / 403: the key is missing or wrong
        └── FatalProviderError     anything else (400s that are not overflow, ...)
            └── ThinkingRejectedError  a thinking block no longer matches the conversation

Providers classify SDK exceptions into this tree exactly once, in their own
module. Tool failures never raise: they become error results the model reads.
A provider error's `kind` names its class from a fixed set (`ProviderErrorKind`):
what an `ErrorEvent` reports, so readers of the event stream can rely on it.
"""

from __future__ import annotations

import errno
from typing import ClassVar, Literal, TypeAlias

__all__ = [
    "AgentError",
    "AuthError",
    "CommandError",
    "ConfigError",
    "ContextOverflowError",
    "DiskFullError",
    "FatalProviderError",
    "OverloadedError",
    "ProviderError",
    "ProviderErrorKind",
    "RateLimitError",
    "SessionBusyError",
    "SessionLogError",
    "StalledError",
    "ThinkingRejectedError",
    "TransientError",
    "UnreachableError",
    "disk_full_reason",
]


class AgentError(Exception):
    """Base of every error agent-cli raises on purpose."""


class ConfigError(AgentError):
    """Configuration or usage is wrong. The message names the file, line and key."""


class CommandError(AgentError):
    """A command the user gave in the session (a slash command, or the session method behind it)
    names something that is not there or cannot be done: not a configuration error. The REPL says
    it in one line and the session goes on."""


class SessionBusyError(AgentError):
    """Another agent is writing this session's log (one writer at a time)."""


class SessionLogError(AgentError):
    """A record could not be written to the session log (exit 1). The failed write was undone, so the
    log holds every record before it, whole; the session stops writing, and `--resume` goes on from
    there once the cause is gone."""


class DiskFullError(SessionLogError):
    """The disk (or the user's quota) is full. Said as one line, never as an internal error."""


_FULL = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up"}


def disk_full_reason(exc: BaseException | None) -> str | None:
    """ "the disk is full" (ENOSPC) or "the disk quota is used up" (EDQUOT) for such an OSError, else None."""
    return _FULL.get(exc.errno) if isinstance(exc, OSError) and exc.errno is not None else None


ProviderErrorKind: TypeAlias = Literal[
    "ProviderError",
    "ContextOverflowError",
    "RateLimitError",
    "OverloadedError",
    "TransientError",
    "UnreachableError",
    "StalledError",
    "AuthError",
    "FatalProviderError",
    "ThinkingRejectedError",
]


class ProviderError(AgentError):
    """A request to the model provider failed."""

    kind: ClassVar[ProviderErrorKind] = "ProviderError"
    retryable: bool = False
    retry_limit: int | None = None  # at most this many retries, whatever the policy allows

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class ContextOverflowError(ProviderError):
    """The prompt did not fit. `tokens` / `limit` are parsed from the error text when it gives them."""

    kind: ClassVar[ProviderErrorKind] = "ContextOverflowError"

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
    kind: ClassVar[ProviderErrorKind] = "RateLimitError"
    retryable = True


class OverloadedError(ProviderError):
    kind: ClassVar[ProviderErrorKind] = "OverloadedError"
    retryable = True


class TransientError(ProviderError):
    kind: ClassVar[ProviderErrorKind] = "TransientError"
    retryable = True


class UnreachableError(TransientError):
    """Nothing answers at the address (connection refused, no such host): one quick retry covers a
    server that is restarting; six with backoff would keep the user waiting most of a minute."""

    kind: ClassVar[ProviderErrorKind] = "UnreachableError"
    retry_limit = 1


class StalledError(TransientError):
    """The stream went quiet for longer than the read timeout."""

    kind: ClassVar[ProviderErrorKind] = "StalledError"
    retry_limit = 2


class AuthError(ProviderError):
    kind: ClassVar[ProviderErrorKind] = "AuthError"


class FatalProviderError(ProviderError):
    kind: ClassVar[ProviderErrorKind] = "FatalProviderError"


class ThinkingRejectedError(FatalProviderError):
    """The provider refused a thinking block sent back (bound to a different conversation, or its
    signature invalid). The loop's answer: send the history once more without any thinking."""

    kind: ClassVar[ProviderErrorKind] = "ThinkingRejectedError"

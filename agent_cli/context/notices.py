"""The words the engine says to the user: warnings and errors about compaction.

Pure functions returning text, kept apart from the engine so each message can
be read (and changed) in one place. Each says what happened and what to do.
"""

from __future__ import annotations

from agent_cli.context.thresholds import Thresholds

__all__ = [
    "loop_guard_stopped",
    "not_saved",
    "overflow_unresolved",
    "smaller_window",
    "summary_failed",
    "summary_fell_short",
    "summary_outcome",
    "under_reported",
]


def smaller_window(limit: int) -> str:
    return (
        f"The provider reports a context window of {limit:,} tokens; using it from now on "
        f"(set context_window to {limit} to start with it)."
    )


def summary_failed(reason: str, path: str) -> str:
    return (
        f"The summary request failed ({reason or 'no text'}); the earlier conversation was "
        f"replaced by a mechanical digest instead. Its full text is in {path}."
    )


def summary_fell_short(shortfall: str) -> str:
    return f"The model's summary is in use, but it {shortfall}."


def summary_outcome(failure: str | None, shortfall: str | None, path: str, latched: str | None) -> str | None:
    """One message for what went wrong with a compaction's summary, if anything: the digest that
    stood in for a failed call (`failure`), or the record used though it fell short (`shortfall`),
    and what the latch does about it (`latched`, when it just opened), said together once."""
    first = summary_failed(failure, path) if failure is not None else None
    if first is None and shortfall is not None:
        first = summary_fell_short(shortfall)
    parts = [p for p in (first, latched) if p]
    return " ".join(parts) or None


def under_reported(reported: int, counted: int) -> str:
    return (
        f"The provider reported {reported:,} input tokens for a request counted here at about "
        f"{counted:,}; its usage reports are not believed when they are far below the local count, "
        "so compaction goes by the local count (said once)."
    )


def not_saved(layer: str, error: OSError) -> str:
    return (
        f"Could not write the transcript before {layer} ({error.strerror or error}); nothing was removed "
        "from the conversation. Check the free space and permissions of .transcripts/."
    )


def loop_guard_stopped(failures: int) -> str:
    return (
        f"Automatic compaction stopped after {failures} attempts in a row that left the "
        "conversation above the compaction line. Run /compact (optionally with a focus) to try "
        "again, or start a new session; the oldest messages will be trimmed if the window fills."
    )


def overflow_unresolved(th: Thresholds, total: int, largest: int, *, frame: int, counted: bool) -> str:
    """Nothing more can go. `counted`: the provider's error said how many tokens the request had;
    `frame`: what the system prompt and the tool definitions take on their own."""
    if frame >= largest and frame * 2 >= th.budget:
        return (
            f"The system prompt and the tool definitions alone take about {frame:,} tokens (project "
            f"instructions included), and a request may have {th.budget:,} (window {th.window:,}): "
            "nothing the conversation could give up would make it fit. Use a model with a larger "
            "window, raise context_window if it is set too low, or shorten the project instructions."
        )
    if not counted and total <= th.budget:
        # No numbers in the error, and our count fits: the limit is not the window we know.
        return (
            f"The provider rejected the request as too large, though it counts about {total:,} tokens "
            f"here, within the budget of {th.budget:,} (window {th.window:,}), and nothing more can be "
            "compacted. The provider's limit is probably smaller than the configured window: set "
            "context_window lower, or shorten the largest message (about "
            f"{largest:,} tokens)."
        )
    return (
        "The conversation does not fit the model's window, and nothing more can be compacted: "
        f"about {total:,} tokens for a budget of {th.budget:,} (window {th.window:,}); "
        f"its largest message alone is about {largest:,} tokens. "
        "Shorten that message, or start a new session."
    )

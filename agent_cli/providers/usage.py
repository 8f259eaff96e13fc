"""Reading a usage report at the adapter edge: every figure a token count, or unknown.

A provider's usage report is untrusted input like any other reply: a compatible server may send a
negative figure, a string, a float or a number larger than any request could be. Summed as they
come, a negative figure lowers the totals, a huge one ends the run when it is priced, a string is an
internal error. So every adapter reads its figures through one `UsageReading`:

    reading = UsageReading()
    Usage(input_tokens=reading.figure(data, "input_tokens"), ...)
    reading.note(provider)      # one line naming what was not a token count, or None

A *token count* is a non-negative integer (an integral float is taken; a bool is not) no larger
than `MAX_FIGURE`. Anything else is *unknown* and counts as 0: the context engine then falls back
on its own count, as it does when a server reports no usage at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_FIGURE", "UsageReading", "token_count"]

# No request or reply comes near this (the largest windows are a few million tokens): a figure above
# it is a server's bug, not a count.
MAX_FIGURE = 100_000_000


def token_count(value: object) -> int | None:
    """`value` as a token count, or None when it is not one (see the module docstring)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_FIGURE:
        return value
    return None


def mapping(value: object) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one (a usage object that is not an object)."""
    return value if isinstance(value, Mapping) else {}


class UsageReading:
    """The figures of one usage report, with a record of those that were not token counts."""

    def __init__(self) -> None:
        self.unknown: list[str] = []

    def figure(self, data: object, *path: str) -> int:
        """The token count at `path` in `data` (0 when absent or unknown)."""
        value: object = data
        for key in path:
            value = mapping(value).get(key)
        if value is None:
            return 0
        count = token_count(value)
        if count is None:
            shown = repr(value)
            self.unknown.append(f"{'.'.join(path)} = {shown[:40]}{'…' if len(shown) > 40 else ''}")
            return 0
        return count

    def note(self, provider: str) -> str | None:
        """One line saying which figures were not token counts, or None when all were."""
        if not self.unknown:
            return None
        return (
            f"{provider}: the usage report held figures that are not token counts "
            f"({', '.join(self.unknown[:3])}); they count as unknown, so usage and cost figures may "
            "read low and the context is counted here"
        )

"""A provider that lies or drips: usage, pause_turn, unknown blocks, reasoning ids, endless streams.

Issue "Found from outside", items 7 (streams), 8, 11 and the /compact message of 12.

Each case is a real `agent` process (or the real tool, where the tool alone is the boundary) in a
directory of its own, judged by `harness.judge` or a check of what it did.
"""

from __future__ import annotations

from tests.reliability.harness import Case


def cases() -> list[Case]:
    return []

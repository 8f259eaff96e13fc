"""Commands that outlive their limits: a timeout after the output is closed, children left by kill -9 of the agent (issue "Found from outside", the bash part of item 7).

Each case is a real `agent` process (or the real tool, where the tool alone is the boundary) in a
directory of its own, judged by `harness.judge` or a check of what it did.
"""

from __future__ import annotations

from tests.reliability.harness import Case


def cases() -> list[Case]:
    return []

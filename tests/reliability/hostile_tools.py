"""Tools under attack: backtracking searches, full disks, FIFOs, hard links, the session store (issue "Found from outside", items 3, 4 and 6).

Each case is a real `agent` process (or the real tool, where the tool alone is the boundary) in a
directory of its own, judged by `harness.judge` or a check of what it did.
"""

from __future__ import annotations

from tests.reliability.harness import Case


def cases() -> list[Case]:
    return []

"""What a cloned repository can do by itself: symlinks, FIFOs, planted sessions, expensive choices
(issue "Found from outside", item 5 and the session parts of item 12).

Each case is a real `agent` process (or the real tool, where the tool alone is the boundary) in a
directory of its own, judged by `harness.judge` or a check of what it did.
"""

from __future__ import annotations

from tests.reliability.harness import Case


def cases() -> list[Case]:
    return []

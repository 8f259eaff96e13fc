"""The allow-list as bash parses it, and what "always" remembers (issue "Found from outside", item 2).

Each case is a real `agent` process (or the real tool, where the tool alone is the boundary) in a
directory of its own, judged by `harness.judge` or a check of what it did.
"""

from __future__ import annotations

from tests.reliability.harness import Case


def cases() -> list[Case]:
    return []
